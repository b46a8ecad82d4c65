from __future__ import annotations

from pathlib import Path

import pytest

from agent_telemetry.schema import EventSpec, catalogue
from agent_telemetry.views import DeploymentConfig, load_config

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = REPO / "telemetry.toml"


@pytest.fixture(scope="session")
def config() -> DeploymentConfig:
    return load_config(EXAMPLE_CONFIG)


@pytest.fixture(scope="session")
def specs() -> dict[str, EventSpec]:
    return {spec.name: spec for spec in catalogue()}
