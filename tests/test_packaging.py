"""A plain ``pip install agent-telemetry`` is what a service needs to emit, and no more.

Builds the wheel once per session, installs it with no extras into a fresh virtual
environment (not ``--system-site-packages``: pydantic, structlog and orjson come from the
package index), and checks what a service and a user of that install see.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# What the [cli] extra brings; a plain install must have none of it.
CLI_EXTRA = ("duckdb", "sqlglot", "jinja2", "click", "rich")
PIP_TIMEOUT_S = 600
# Nothing of this checkout may leak into the fresh environment: no PYTHONPATH (it would
# find the checkout, and pip would call the package installed), and runs start elsewhere.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


@dataclass(frozen=True)
class LightInstall:
    venv: Path
    installed: frozenset[str]  # distributions right after `pip install <wheel>`, normalised

    def run(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        return _run(*args, cwd=cwd, check=False, timeout=120)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def script(self) -> Path:
        return self.venv / "bin" / "agent-telemetry"


def _run(
    *args: str | Path, cwd: Path, check: bool = True, timeout: float = PIP_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


def build_wheel(out: Path) -> Path:
    """The wheel of this checkout, built from a copy (a build leaves build/ in its source)."""
    source = out / "source"
    shutil.copytree(
        REPO / "agent_telemetry",
        source / "agent_telemetry",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, source, cwd=out)
    (wheel,) = out.glob("agent_telemetry-*.whl")
    return wheel


def installed_distributions(python: Path) -> frozenset[str]:
    code = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps(sorted({d.metadata['Name'].lower().replace('_', '-') "
        "for d in m.distributions()})))"
    )
    return frozenset(json.loads(_run(python, "-c", code, cwd=python.parent).stdout))


@pytest.fixture(scope="session")
def light_install(tmp_path_factory: pytest.TempPathFactory) -> LightInstall:
    root = tmp_path_factory.mktemp("light-install")
    wheel = build_wheel(root)
    venv = root / "venv"
    # No pip inside (ensurepip is slow): this interpreter's pip installs into it.
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    python = venv / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--quiet")
    _run(*pip, wheel, cwd=root)
    installed = installed_distributions(python)
    # For the pytest plugin only; pytest brings none of the [cli] extra.
    _run(*pip, "pytest", cwd=root)
    return LightInstall(venv, installed)


def test_a_plain_install_brings_none_of_the_cli_extra(
    light_install: LightInstall, tmp_path: Path
) -> None:
    assert {"agent-telemetry", "pydantic", "structlog", "orjson"} <= light_install.installed
    assert sorted(set(CLI_EXTRA) & light_install.installed) == []
    code = (
        "import importlib.util as u, agent_telemetry\n"
        "print(agent_telemetry.__file__)\n"
        f"print([m for m in {CLI_EXTRA!r} if u.find_spec(m)])"
    )
    result = light_install.run(light_install.python, "-c", code, cwd=tmp_path)
    where, found = result.stdout.splitlines()
    assert Path(where).is_relative_to(light_install.venv)  # the wheel's copy, not this checkout
    assert found == "[]"


def test_a_service_emits_with_the_plain_install(
    light_install: LightInstall, tmp_path: Path
) -> None:
    code = "from agent_telemetry.emit import emit\nemit('chat_turn', tier='public', kind='text')\n"
    result = light_install.run(light_install.python, "-c", code, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    record = json.loads(line)
    assert (record["event"], record["tier"], record["kind"]) == ("chat_turn", "public", "text")
    assert result.stderr == ""


def test_the_command_line_names_the_extra_it_needs(
    light_install: LightInstall, tmp_path: Path
) -> None:
    log = tmp_path / "x.jsonl"
    log.write_text(
        '{"event": "chat_turn", "schema_version": 1, "tier": "public", "kind": "text"}\n'
    )
    result = light_install.run(light_install.script, "preview", log, cwd=tmp_path)
    assert result.returncode == 2  # an error, not a violation
    assert result.stderr.splitlines() == [
        "agent-telemetry: this command needs click, from the [cli] extra: "
        "pip install 'agent-telemetry[cli]'"
    ]
    assert result.stdout == ""


def test_the_pytest_fixture_works_with_the_plain_install(
    light_install: LightInstall, tmp_path: Path
) -> None:
    (tmp_path / "test_service.py").write_text(
        "from agent_telemetry.emit import emit\n\n\n"
        "def test_turn_is_reported(telemetry_capture):\n"
        "    emit('chat_turn', tier='admin', kind='action')\n"
        "    assert [(r['event'], r['tier']) for r in telemetry_capture] == "
        "[('chat_turn', 'admin')]\n"
    )
    result = light_install.run(
        light_install.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", ".", cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
