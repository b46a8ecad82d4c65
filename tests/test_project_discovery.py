"""The one discovery of telemetry.toml, in-process (tests/test_discovery.py runs the
commands): which file a command reads, what it says about one it passed over, and the
``--config`` a printed hint carries."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agent_telemetry.config import ConfigError
from agent_telemetry.project import (
    PACKAGE_SQL_DIR,
    Discovery,
    discover,
    find_config,
    resolve_project,
)

KNOWN = {"upload_done": frozenset({"upload_bytes"})}

BASE = (
    '[source]\nproject = "acme-agents-prod"\ndataset = "agent_logs"\n'
    '[target]\nproject = "acme-agents-prod"\ndataset = "agent_telemetry"\n'
)


@pytest.fixture(autouse=True)
def _elsewhere_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # $HOME outside tmp_path unless a test sets it: the search is bounded only by git.
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.setattr(sys, "path", list(sys.path))


def _config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "telemetry.toml"
    path.write_text(BASE, encoding="utf-8")
    return path


def _ignored_above(path: Path) -> str:
    return (
        f"ignored {path}: it is above this folder, and no git repository "
        "holds both (pass --config to use it)"
    )


def test_outside_a_repository_only_the_starting_folder_is_read(tmp_path: Path) -> None:
    above = _config(tmp_path / "a")
    start = tmp_path / "a" / "b"
    start.mkdir()
    assert discover(start) == Discovery(None, _ignored_above(above))
    assert discover(start, climb=False) == Discovery(None)
    here = _config(start)
    assert discover(start) == Discovery(here)


def test_inside_a_repository_the_nearest_config_up_to_its_root_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    root_config = _config(repo)
    nested = _config(repo / "svc")
    deep = repo / "svc" / "a" / "b"
    deep.mkdir(parents=True)
    assert discover(deep) == Discovery(nested)
    assert discover(deep, climb=False) == Discovery(None)
    nested.unlink()
    assert discover(deep) == Discovery(root_config)


def test_a_nested_repository_stops_the_search_at_its_own_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    outer_config = _config(outer)
    inner = outer / "vendor" / "inner"
    (inner / ".git").mkdir(parents=True)
    assert discover(inner / ".git") == Discovery(None, _ignored_above(outer_config))


def test_the_search_never_climbs_above_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    _config(tmp_path)  # the repository's root is above $HOME
    home = tmp_path / "home"
    start = home / "work"
    start.mkdir(parents=True)
    assert discover(start) == Discovery(tmp_path / "telemetry.toml")
    monkeypatch.setenv("HOME", str(home))
    assert discover(start) == Discovery(None)  # not even noted: it is not the user's
    home_config = _config(home)
    (home / ".git").mkdir()
    assert discover(start) == Discovery(home_config)


def test_a_home_that_cannot_be_found_bounds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    (tmp_path / ".git").mkdir()
    config = _config(tmp_path)
    (tmp_path / "a").mkdir()
    assert discover(tmp_path / "a") == Discovery(config)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_config_in_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    path = _config(folder)
    os.chown(folder, os.geteuid() + 4242, -1)
    with pytest.raises(ConfigError) as caught:
        discover(folder)
    assert str(caught.value) == (
        f"ignored {path}: its folder is owned by another user, so anyone could plant a "
        "catalogue module there (as git's safe.directory); pass --config "
        f"{path} to use it anyway"
    )


def test_a_config_in_a_folder_anyone_can_write_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    path = _config(folder)
    folder.chmod(0o777)
    with pytest.raises(ConfigError, match="its folder is writable by every user"):
        discover(folder)
    folder.chmod(0o775)  # group-writable is the user's choice
    assert discover(folder) == Discovery(path)


def test_a_passed_over_config_is_named_on_stderr_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    above = _config(tmp_path / "once")
    start = tmp_path / "once" / "below"
    start.mkdir()
    assert find_config(start) is None
    assert capsys.readouterr().err == _ignored_above(above) + "\n"
    assert find_config(start) is None
    assert capsys.readouterr().err == ""
    assert find_config(start, climb=False) is None
    here = _config(start)
    assert find_config(start) == here


def test_no_config_says_why_and_what_was_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = tmp_path / "empty"
    start.mkdir()
    monkeypatch.chdir(start)
    advice = (
        "no telemetry.toml in this folder or above it, up to the repository root "
        "(pass --config, or run `agent-telemetry init`)"
    )
    with pytest.raises(ConfigError) as caught:
        resolve_project()
    assert str(caught.value) == advice
    above = _config(tmp_path)
    with pytest.raises(ConfigError) as caught:
        resolve_project()
    assert str(caught.value) == f"{advice}; {_ignored_above(above)}"


def test_a_hint_names_the_config_only_when_a_command_would_not_find_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    path = _config(tmp_path / "svc")
    monkeypatch.chdir(tmp_path / "svc")
    assert resolve_project().command_flags() == ""
    assert resolve_project("telemetry.toml").command_flags() == ""
    monkeypatch.chdir(tmp_path)  # found nowhere from here
    assert resolve_project(path).command_flags() == " --config svc/telemetry.toml"
    other = _config(tmp_path)  # the root's config is found instead
    assert resolve_project(path).command_flags() == " --config svc/telemetry.toml"
    assert resolve_project(other).command_flags() == ""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert resolve_project(path).command_flags() == f" --config {path}"


def test_a_hint_names_the_config_when_discovery_refuses_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path / "open")
    (tmp_path / "open").chmod(0o777)
    monkeypatch.chdir(tmp_path / "open")
    assert resolve_project(path).command_flags() == " --config telemetry.toml"


def test_views_settings_place_the_generated_files(tmp_path: Path) -> None:
    path = _config(tmp_path)
    path.write_text(
        BASE
        + '[views]\ndir = "sql/views"\ndocs = "book/events.md"\n'
        + 'layouts = ["sharded", "partitioned"]\n',
        encoding="utf-8",
    )
    project = resolve_project(path)
    assert project.sql_dir == tmp_path / "sql" / "views"
    assert project.docs_path == tmp_path / "book" / "events.md"
    assert project.layouts == ("partitioned", "sharded")
    assert project.import_root is None
    path.write_text(
        BASE + '[catalogue]\nmodule = "m.telemetry"\nlock = "t/lock.json"\n[views]\ndir = "sql"\n',
        encoding="utf-8",
    )
    project = resolve_project(str(path))
    assert (project.lock_path, project.sql_dir) == (tmp_path / "t" / "lock.json", tmp_path / "sql")
    assert project.import_root == tmp_path.resolve()
    assert not project.is_default


def test_the_catalogues_folder_joins_the_import_path_once(tmp_path: Path) -> None:
    package = tmp_path / "oncepkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "telemetry.py").write_text(
        "from agent_telemetry.schema import EVENTS\n", encoding="utf-8"
    )
    path = _config(tmp_path)
    path.write_text(
        BASE + '[catalogue]\nmodule = "oncepkg.telemetry"\nlock = "lock.json"\n', encoding="utf-8"
    )
    root = str(tmp_path.resolve())
    try:
        first = resolve_project(path).catalogue
        second = resolve_project(path).catalogue
    finally:
        for name in ("oncepkg.telemetry", "oncepkg"):
            sys.modules.pop(name, None)
    assert first.events.keys() == second.events.keys()
    assert "pipeline_run" in first.events
    assert sys.path.count(root) == 1
    assert sys.path[0] == root


def test_find_config_climbs_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = _config(tmp_path)
    start = tmp_path / "a"
    start.mkdir()
    assert find_config(start, climb=False) is None
    assert find_config(start) == config


def test_a_folder_that_cannot_be_read_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The folder's permissions changed between finding the file and checking its owner.
    folder = tmp_path / "racing"
    path = _config(folder)
    real_stat = Path.stat

    def stat(self: Path, *, follow_symlinks: bool = True) -> os.stat_result:
        if self == folder:
            raise PermissionError(13, "Permission denied")
        return real_stat(self, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(Path, "stat", stat)
    with pytest.raises(ConfigError) as caught:
        discover(folder)
    assert str(caught.value).startswith(f"ignored {path}: its folder is not readable, so ")


def test_the_projects_exceptions_are_held_to_the_known_events(tmp_path: Path) -> None:
    path = _config(tmp_path)
    path.write_text(
        BASE + '[[exceptions]]\nrule = "EVENT_NO_DELETE"\nevent = "gone"\nreason = "r"\n',
        encoding="utf-8",
    )
    assert [e.event for e in resolve_project(path).config.exceptions] == ["gone"]
    with pytest.raises(ConfigError, match=r"exceptions\[0\]\.event: not a known event"):
        resolve_project(path, known=KNOWN)


def test_files_a_project_names_are_checked_for_links_below_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path / "svc")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # no repository holds any of these paths
    project = resolve_project(path)
    assert project.trusted_folder(tmp_path / "svc" / "views" / "a.sql") == tmp_path / "svc"
    assert project.trusted_folder(tmp_path / "other" / "a.sql") == tmp_path / "other"
    checkout = PACKAGE_SQL_DIR.parents[2]
    assert project.trusted_folder(PACKAGE_SQL_DIR / "a.sql") == checkout
    assert (checkout / "agent_telemetry" / "project.py").is_file()
