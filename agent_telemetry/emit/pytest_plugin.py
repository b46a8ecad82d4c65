"""pytest plugin (entry point ``pytest11``): the ``telemetry_capture`` fixture.

Installed with the package, so a service's tests can write::

    def test_run_reports_telemetry(telemetry_capture):
        run_pipeline()
        assert telemetry_capture[-1]["status"] == "ok"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_telemetry.emit import capture


@pytest.fixture
def telemetry_capture() -> Iterator[list[dict[str, Any]]]:
    """The records emitted during the test (nothing reaches stdout); the mode is unchanged."""
    with capture() as records:
        yield records
