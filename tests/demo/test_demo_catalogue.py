"""The demo emits the package's own events whatever catalogue the process configured
before (importing a service's package configures its catalogue; the demo ran after such a
test and every line was unknown_event), and puts that catalogue back."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.demo import run_demo
from agent_telemetry.emit import configure, settings
from agent_telemetry.schema.catalogue import default_catalogue, load_catalogue
from tests.emit.test_configure_catalogue import ModuleLevelProbe


def test_the_demo_runs_on_its_own_catalogue_and_restores_the_processs(tmp_path: Path) -> None:
    service = load_catalogue({"module_level_probe": ModuleLevelProbe})
    configure(catalogue=service)
    try:
        result = run_demo(tmp_path)
        assert result.log.read_text(encoding="utf-8").count('"event":"pipeline_run"') > 0
        assert settings().catalogue is service
    finally:
        configure(catalogue=default_catalogue())
