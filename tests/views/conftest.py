from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_telemetry.views.warehouse import Warehouse


@pytest.fixture
def wh() -> Iterator[Warehouse]:
    with Warehouse() as warehouse:
        yield warehouse
