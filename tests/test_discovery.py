"""Discovery stays inside: no telemetry.toml (and so no catalogue module) is read from a
folder the user does not own, that anyone can write, above the repository root or above
$HOME. Git's safe.directory (CVE-2022-24765) is the model.

Each planted catalogue module leaves a mark when it runs: the table runs every command
that finds a config by itself and asserts the mark never appears.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.service import SERVICE_EVENT

PLANTED_CONFIG = """\
[catalogue]
module = "{package}.telemetry"
lock = "schema.lock.json"

[source]
project = "acme-planted"
dataset = "logs"

[target]
project = "acme-planted"
dataset = "views"
"""

# Commands that find telemetry.toml by themselves (no --config), with a log where they read one.
COMMANDS: dict[str, list[str]] = {
    "events": ["events"],
    "check": ["check", "--schema-only"],
    "lock": ["lock"],
    "check-logs": ["check-logs", "LOG"],
    "sink-schema": ["sink-schema"],
    "views build": ["views", "build", "--check"],
    "preview": ["preview", "LOG"],
    "query": ["query", "SELECT 1", "LOG"],
    "report": ["report", "LOG"],
}


def _plant(folder: Path, name: str) -> Path:
    """telemetry.toml and a catalogue package in ``folder``; returns the mark its module
    leaves when imported."""
    package = f"planted_{name}_{abs(hash(folder)) % 10**8}"
    mark = folder / f"{package}.ran"
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text("")
    (folder / package / "telemetry.py").write_text(
        f"from pathlib import Path\nPath({str(mark)!r}).write_text('ran')\n"
        + SERVICE_EVENT
        + "\nEVENTS = {CacheProbe.event_name: CacheProbe}\n"
    )
    (folder / "telemetry.toml").write_text(PLANTED_CONFIG.format(package=package))
    return mark


def _run(command: str, log: Path) -> tuple[int, str]:
    args = [str(log) if arg == "LOG" else arg for arg in COMMANDS[command]]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "lines.jsonl"
    path.write_text('{"event": "chat_turn", "tier": "public", "kind": "text"}\n')
    return path


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_config_above_a_folder_outside_any_repository_never_runs(
    command: str, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    mark = _plant(shared, "above")
    child = shared / "project"
    child.mkdir()
    monkeypatch.chdir(child)
    _, output = _run(command, log)
    assert not mark.exists(), f"{command} ran the planted module: {output}"
    assert "Traceback" not in output
    if command in {"events", "check", "lock", "check-logs", "sink-schema", "views build"}:
        # The commands that search upwards say which file they ignored, and why.
        assert str(shared / "telemetry.toml") in output, output
        assert "no git repository" in output, output


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("unsafe", ["world_writable", "other_owner"])
def test_a_config_in_a_folder_others_can_change_is_refused_by_name(
    command: str, unsafe: str, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    mark = _plant(shared, unsafe)
    if unsafe == "world_writable":
        shared.chmod(0o1777)  # as /tmp
        why = "writable by every user"
    else:
        if os.geteuid() != 0:
            pytest.fail("giving a folder to another user needs root (the test image runs as root)")
        os.chown(shared, 65534, 65534)  # nobody
        why = "owned by another user"
    monkeypatch.chdir(shared)
    code, output = _run(command, log)
    assert not mark.exists(), f"{command} ran the planted module: {output}"
    assert code == 2, output
    assert str(shared / "telemetry.toml") in output, output
    assert why in output, output
    assert "--config" in output, output  # how to use it anyway, on purpose


def test_the_search_never_climbs_above_home(
    home: Path, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A repository that holds the home folder (a dotfiles repo at / or a planted .git)
    # does not make a config above $HOME the user's.
    (tmp_path / ".git").mkdir()
    mark = _plant(tmp_path, "above_home")
    project = home / "work"
    project.mkdir()
    monkeypatch.chdir(project)
    code, output = _run("events", log)
    assert not mark.exists(), output
    assert code == 0, output  # the package's own events, with a note


def test_inside_a_repository_the_config_at_its_root_is_found(
    home: Path, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = home / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    mark = _plant(repo, "inside")
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    code, output = _run("events", log)
    assert code == 0, output
    assert mark.exists()
    assert "cache_probe" in output


def test_a_config_named_on_the_command_line_is_the_callers_choice(
    home: Path, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    mark = _plant(shared, "named")
    shared.chmod(0o1777)
    monkeypatch.chdir(home)
    result = CliRunner().invoke(main, ["events", "--config", str(shared / "telemetry.toml")])
    assert result.exit_code == 0, result.output
    assert mark.exists()


def test_a_catalogue_module_is_never_taken_from_a_folder_above_the_project(
    home: Path, tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The project names a module it does not have; a folder above holds one by that name.
    shared = home / "shared"
    mark = _plant(shared, "ancestor")
    package = next(p.name for p in shared.iterdir() if p.is_dir())
    (shared / "telemetry.toml").unlink()
    project = shared / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "telemetry.toml").write_text(PLANTED_CONFIG.format(package=package))
    monkeypatch.chdir(project)
    for command in ("events", "check", "check-logs"):
        code, output = _run(command, log)
        assert not mark.exists(), f"{command} imported the module above: {output}"
        assert code == 2, output
        assert "cannot be imported" in output, output
