"""The CLI and ``import agent_telemetry.views`` do not pay for sqlglot or jinja2 up front."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("sqlglot", "jinja2", "duckdb", "google.cloud")


def _loaded_after(statement: str) -> str:
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(m for m in {HEAVY!r} if any(k == m or k.startswith(m + '.') "
        "for k in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_cli_and_views_package_import_no_heavy_dependency() -> None:
    assert _loaded_after("import agent_telemetry.cli") == ""
    assert (
        _loaded_after(
            "import agent_telemetry.views as v, agent_telemetry.config as c; "
            "c.load_config; v.sink_schema"
        )
        == ""
    )


def test_heavy_api_loads_on_first_use() -> None:
    assert "sqlglot" in _loaded_after("import agent_telemetry.views as v; v.generate_views")
