"""One run of the demo for every test that reads it (it simulates, loads and asks)."""

from __future__ import annotations

import pytest

from agent_telemetry.demo import DemoResult, run_demo


@pytest.fixture(scope="session")
def demo_result(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    return run_demo(tmp_path_factory.mktemp("demo"))
