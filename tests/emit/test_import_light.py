"""Services pay only for pydantic, structlog and orjson when they import the emitter."""

from __future__ import annotations

import subprocess
import sys

# rich is not here: structlog itself imports it when it is installed (structlog.dev).
HEAVY = ("sqlglot", "jinja2", "duckdb", "google.cloud", "pytest", "hypothesis", "click")


def test_importing_emit_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, agent_telemetry.emit\n"
        f"print(','.join(m for m in {HEAVY!r} if any(k == m or k.startswith(m + '.') "
        "for k in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_emitting_loads_no_heavy_dependency_either() -> None:
    code = (
        "import io, sys\n"
        "from agent_telemetry.emit import configure, emit\n"
        "configure(stream=io.StringIO(), strict=False)\n"
        "emit('pipeline_run', lane='public', status='ok')\n"
        "emit('pipeline_run', lane='x', status='ok', extra=1)\n"
        "emit('nope')\n"
        f"print(','.join(m for m in {HEAVY!r} if any(k == m or k.startswith(m + '.') "
        "for k in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
