"""The baseline belongs to the base: ``check --against REF`` reads REF's own telemetry.toml
and the lock REF's config names, wherever that is (as ``buf breaking --against`` reads the
against input's own configuration). A pull request that moves, renames or drops the lock,
or its [catalogue] setting, is still judged by the base's lock.

Each row is a pull request as an attacker would write it: the lock moved (a one-line config
change and a ``git mv``) together with a change the base's lock forbids, the new lock
regenerated so the head is consistent with itself.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from tests.service import copy_service

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
MODELS = Path("myservice/telemetry.py")
OLD_LOCK = "telemetry/schema.lock.json"

# About 32 more bits for cache_lookup (two optional counts of 60,001 values each, under the
# 16 bits that would need a precision): 14.9 -> 46.7 bits, inside the 64-bit budget, so
# only the growth rule can stop it.
GROWTH = (
    '    lookup_ms: int | None = count(0, 10_000, "Lookup wall time in milliseconds.")\n',
    '    lookup_ms: int | None = count(0, 10_000, "Lookup wall time in milliseconds.")\n'
    '    entry_age_s: int | None = count(0, 60_000, "Age of the entry in seconds.")\n'
    '    entry_bytes: int | None = count(0, 60_000, "Size of the entry in kilobytes.")\n',
)
NARROWED = (
    'count(0, 10_000, "Lookup wall time in milliseconds.")',
    'count(0, 5_000, "Lookup wall time in milliseconds.")',
)
DELETED_FIELD = (
    '    lookup_ms: int | None = count(0, 10_000, "Lookup wall time in milliseconds.")\n',
    "",
)
DELETED_EVENT = (
    "EVENTS = {**BUILT_IN, CacheLookup.event_name: CacheLookup}",
    "EVENTS = dict(BUILT_IN)",
)


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def cli(repo: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(repo)
    for name in [n for n in sys.modules if n.split(".")[0] == "myservice"]:
        del sys.modules[name]  # each run imports this copy's models afresh
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    repo = copy_service(tmp_path / "svc", git=True)
    git(repo, "checkout", "-q", "-b", "pr")
    yield repo
    for name in [n for n in sys.modules if n.split(".")[0] == "myservice"]:
        del sys.modules[name]


def _edit(repo: Path, change: tuple[str, str]) -> None:
    models = repo / MODELS
    text = models.read_text(encoding="utf-8")
    assert change[0] in text
    models.write_text(text.replace(change[0], change[1]), encoding="utf-8")


def move_lock(repo: Path) -> None:
    git(repo, "mv", OLD_LOCK, "telemetry/moved.lock.json")
    config = repo / "telemetry.toml"
    config.write_text(
        config.read_text().replace(f'lock = "{OLD_LOCK}"', 'lock = "telemetry/moved.lock.json"')
    )


def drop_lock(repo: Path) -> None:
    git(repo, "rm", "-q", OLD_LOCK)
    config = repo / "telemetry.toml"
    config.write_text(
        config.read_text().replace(f'lock = "{OLD_LOCK}"', 'lock = "elsewhere/new.lock.json"')
    )


def rename_lock_folder(repo: Path) -> None:
    git(repo, "mv", "telemetry", "schema")
    config = repo / "telemetry.toml"
    text = config.read_text().replace(f'lock = "{OLD_LOCK}"', 'lock = "schema/schema.lock.json"')
    config.write_text(text.replace('dir = "telemetry/views"', 'dir = "schema/views"'))


MOVES: dict[str, Callable[[Path], None]] = {
    "lock_moved": move_lock,
    "lock_dropped_and_renamed": drop_lock,
    "lock_folder_renamed": rename_lock_folder,
}
CHANGES: dict[str, tuple[tuple[str, str], str]] = {
    "grown_to_47_bits": (GROWTH, "CAPACITY_GROWTH"),
    "bound_narrowed": (NARROWED, "BOUND_NO_NARROW"),
    "field_deleted": (DELETED_FIELD, "FIELD_NO_DELETE"),
    "event_deleted": (DELETED_EVENT, "EVENT_NO_DELETE"),
}


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("move", MOVES)
def test_a_pull_request_that_moves_the_lock_is_judged_by_the_bases_lock(
    service: Path, move: str, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit, rule = CHANGES[change]
    MOVES[move](service)
    _edit(service, edit)
    # The pull request regenerates its own lock and views: the head agrees with itself.
    new_lock = next(
        line.split('"')[1]
        for line in (service / "telemetry.toml").read_text().splitlines()
        if line.startswith("lock =")
    )
    (service / new_lock).unlink(missing_ok=True)
    assert cli(service, "lock", monkeypatch=monkeypatch).exit_code == 0
    assert cli(service, "views", "build", monkeypatch=monkeypatch).exit_code == 0
    assert cli(service, "check", monkeypatch=monkeypatch).exit_code == 0  # alone: clean
    git(service, "add", "-A")
    git(service, "commit", "-qm", "pull request")

    result = cli(service, "check", "--against", "main", "--schema-only", monkeypatch=monkeypatch)
    assert result.exit_code == 1, result.output
    assert rule in result.output
    assert "every event is new" not in result.output
    # The base's own lock, named where the base keeps it.
    assert f"against the lock at main ({OLD_LOCK}, where the base keeps it)" in result.output


def test_a_pull_request_that_drops_the_catalogue_setting_is_judged_by_the_base(
    service: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = service / "telemetry.toml"
    text = config.read_text()
    start = text.index("[catalogue]")
    end = text.index("[source]")
    config.write_text(text[:start] + text[end:])
    git(service, "commit", "-qam", "no catalogue: the package's own events")
    result = cli(service, "check", "--against", "main", "--schema-only", monkeypatch=monkeypatch)
    assert result.exit_code == 1, result.output
    assert "EVENT_NO_DELETE" in result.output  # cache_lookup is gone


def test_only_a_base_without_a_catalogue_makes_every_event_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    repo = tmp_path / "svc"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("before telemetry\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    copy_service(tmp_path / "copy")
    for item in (tmp_path / "copy").iterdir():
        item.rename(repo / item.name)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add telemetry")
    result = cli(repo, "check", "--against", "HEAD~1", "--schema-only", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert "no catalogue at HEAD~1: every event is new" in result.output


def test_a_base_that_names_a_lock_it_does_not_have_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    repo = copy_service(tmp_path / "svc", git=True)
    git(repo, "rm", "-q", OLD_LOCK)
    git(repo, "commit", "-qm", "a base without its lock")
    git(repo, "checkout", "-q", "-b", "pr")
    assert cli(repo, "lock", monkeypatch=monkeypatch).exit_code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pull request")
    result = cli(repo, "check", "--against", "main", "--schema-only", monkeypatch=monkeypatch)
    assert result.exit_code == 2, result.output
    assert OLD_LOCK in result.output
