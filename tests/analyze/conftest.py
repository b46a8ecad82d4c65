"""The analyzer is started once per test session. If it cannot start (the [analyze] extra is
missing, zetasql is another version), every test that needs it fails: never a skip."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.views import GENERATED_DIR

if TYPE_CHECKING:
    from agent_telemetry.analyze import Runtime, ViewAnalysis


@pytest.fixture(scope="session")
def analyzer_runtime() -> Runtime:
    from agent_telemetry.analyze import runtime

    started = time.perf_counter()
    service = runtime()
    cache = service.cache
    print(  # shown with -s; the report quotes the figures
        f"\nanalyzer started in {time.perf_counter() - started:.2f} s "
        f"({'cache hit' if cache.hit else 'compiled'}: {cache.path})"
    )
    return service


@pytest.fixture(scope="session")
def committed(
    analyzer_runtime: Runtime, config: DeploymentConfig
) -> dict[Layout, list[ViewAnalysis]]:
    """Every committed view file of every layout, analyzed once."""
    from agent_telemetry.analyze import analyze_views

    return {layout: list(analyze_views(config, layout, GENERATED_DIR)) for layout in LAYOUTS}
