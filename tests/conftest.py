from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_telemetry.config import DeploymentConfig, load_config
from agent_telemetry.schema import EventSpec, catalogue
from agent_telemetry.warehouse import Warehouse

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIG = REPO / "telemetry.toml"


@pytest.fixture(scope="session")
def config() -> DeploymentConfig:
    return load_config(EXAMPLE_CONFIG)


@pytest.fixture(scope="session")
def specs() -> dict[str, EventSpec]:
    return {spec.name: spec for spec in catalogue()}


@pytest.fixture
def wh() -> Iterator[Warehouse]:
    with Warehouse() as warehouse:
        yield warehouse
