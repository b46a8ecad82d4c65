"""The console script without the [cli] extra: one line naming the extra, exit 2, no traceback.

Each run hides one module the extra installs, as if it were not installed (the real light
install is tests/test_packaging.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_telemetry import __version__

HINT = "pip install 'agent-telemetry[cli]'"


def run_entry(
    args: list[str], *, hide: str | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    code = "import sys\n"
    if hide is not None:
        code += f"sys.modules[{hide!r}] = None  # as if it were not installed\n"
    code += "from agent_telemetry._entry import main\nsys.argv[0] = 'agent-telemetry'\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("hidden", "args"),
    [
        ("click", ["--help"]),
        ("rich", ["events"]),
        ("duckdb", ["preview", "LOG"]),
        ("sqlglot", ["views", "build", "--check"]),
    ],
)
def test_a_missing_cli_module_prints_the_extra_to_install(
    hidden: str, args: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "telemetry.jsonl"
    log.write_text(
        '{"event": "chat_turn", "schema_version": 1, "tier": "public", "kind": "text"}\n'
    )
    result = run_entry([str(log) if a == "LOG" else a for a in args], hide=hidden)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"agent-telemetry: this command needs {hidden}, from the [cli] extra: {HINT}"
    ]
    assert result.stdout == ""


def test_a_broken_install_shows_its_own_error_not_the_hint(tmp_path: Path) -> None:
    """duckdb is there but fails to import: reinstalling the extra would not help."""
    fake = tmp_path / "duckdb"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'duckdb.core'\", name='duckdb.core')\n"
    )
    log = tmp_path / "telemetry.jsonl"
    log.write_text("{}\n")
    paths = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    result = run_entry(["preview", str(log)], env=env)
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert "duckdb.core" in result.stderr
    assert HINT not in result.stderr


def test_with_the_extra_the_script_runs_the_command_line() -> None:
    result = run_entry(["--version"])
    assert (result.returncode, result.stdout.strip()) == (
        0,
        f"agent-telemetry, version {__version__}",
    )
