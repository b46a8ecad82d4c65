"""The schema layer stays light: services pay only for pydantic."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("sqlglot", "jinja2", "duckdb", "google.cloud", "structlog")


def test_importing_schema_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, agent_telemetry.schema\n"
        f"print(','.join(m for m in {HEAVY!r} if any(k == m or k.startswith(m + '.') "
        "for k in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
