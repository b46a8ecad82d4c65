from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.demo import run_demo


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo's log and its report page (the page the manual shows)."""
    out = tmp_path_factory.mktemp("demo-report")
    result = run_demo(out)
    page = out / "report.html"
    done = CliRunner().invoke(main, ["report", str(result.log), "--html", str(page)])
    assert done.exit_code == 0, done.output
    return result.log, page
