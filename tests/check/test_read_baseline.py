"""``read_baseline`` in-process, word for word: which lock the base names, the note
``check --against`` prints beside the compat stage, and each refusal's line.

``tests/check/test_baseline.py`` runs the command on pull requests that move the lock;
here each way the base can be found (or not) is one small repository, and a base without
``[catalogue]`` (this package's own lock) is read both in this repository and outside it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_telemetry.check import _baseline
from agent_telemetry.check._baseline import BaselineError, read_baseline
from agent_telemetry.check._git import GitRefError
from agent_telemetry.project import resolve_project
from agent_telemetry.schema.lock import LockFormatError, SchemaLock, load_lock
from tests.service import EXAMPLE_SERVICE

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
LOCK_TEXT = (EXAMPLE_SERVICE / "telemetry" / "schema.lock.json").read_text(encoding="utf-8")
LOCK = load_lock(LOCK_TEXT)

DEPLOYMENT = """
[source]
project = "acme-base-test"
dataset = "service_logs"

[target]
project = "acme-base-test"
dataset = "service_telemetry"
"""


def config(lock: str | None = "telemetry/schema.lock.json") -> str:
    """A telemetry.toml naming ``lock`` (no ``[catalogue]`` when None)."""
    catalogue = f'[catalogue]\nmodule = "svc.events"\nlock = "{lock}"\n' if lock else ""
    return catalogue + DEPLOYMENT


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def commit(repo: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path -> text) and commit them, with every other change."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change", "--allow-empty")


def head_reads(repo: Path, config_at: str = "telemetry.toml", text: str | None = None) -> Path:
    """The head's telemetry.toml (uncommitted, as a pull request's working tree)."""
    path = repo / config_at
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config() if text is None else text, encoding="utf-8")
    return path


def test_the_bases_lock_where_the_head_keeps_it_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(), "telemetry/schema.lock.json": LOCK_TEXT})
    (repo / "telemetry" / "schema.lock.json").write_text("{}", encoding="utf-8")  # head's own
    found = read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert found.note == "against the lock at main"
    assert found.lock == LOCK


def test_a_lock_the_head_moved_is_read_where_the_base_keeps_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(), "telemetry/schema.lock.json": LOCK_TEXT})
    path = head_reads(repo, text=config("moved/schema.lock.json"))
    found = read_baseline("main", resolve_project(path))
    assert found.note == (
        "against the lock at main (telemetry/schema.lock.json, where the base keeps it)"
    )
    assert found.lock == LOCK


def test_the_bases_config_is_found_at_the_heads_folder_before_the_ones_above(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    commit(
        repo,
        {
            "telemetry.toml": config("root.lock.json"),
            "root.lock.json": "{}",
            "svc/telemetry.toml": config("own/schema.lock.json"),
            "svc/own/schema.lock.json": LOCK_TEXT,
        },
    )
    found = read_baseline("main", resolve_project(repo / "svc" / "telemetry.toml"))
    assert found.note == "against the lock at main"
    assert found.lock == LOCK


def test_the_bases_config_above_the_heads_folder_names_its_lock_from_its_own_folder(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(), "telemetry/schema.lock.json": LOCK_TEXT})
    # The pull request moves the config two folders down (and its lock with it).
    path = head_reads(repo, "a/b/telemetry.toml")
    found = read_baseline("main", resolve_project(path))
    assert found.note == (
        "against the lock at main (telemetry/schema.lock.json, where the base keeps it)"
    )
    assert found.lock == LOCK


def test_a_base_with_no_config_at_or_above_the_heads_folder_makes_every_event_new(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"README": "before telemetry\n", "other/telemetry.toml": config()})
    path = head_reads(repo, "svc/telemetry.toml")
    found = read_baseline("main", resolve_project(path))
    assert found.note == "no catalogue at main: every event is new"
    assert found.lock == SchemaLock()


DEEP = "main:telemetry.toml: nested deeper than 128 levels"


@pytest.mark.parametrize(
    ("base_config", "why"),
    [
        (
            "[catalogue\n",
            "main:telemetry.toml: not valid TOML (Expected ']' at the end of a table "
            "declaration (at line 1, column 11))",
        ),
        (config() + "\n[surprise]\nkey = 1\n", "main:telemetry.toml: surprise: unknown key"),
        ("a = " + "[" * 200 + "]" * 200 + "\n", DEEP),
        ("[" + ".".join(["a"] * 200) + "]\n", DEEP),
    ],
    ids=["not_toml", "unknown_table", "deep_arrays", "deep_dotted_key"],
)
def test_a_base_config_that_does_not_read_stops_the_check(
    tmp_path: Path, base_config: str, why: str
) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": base_config})
    path = head_reads(repo)
    with pytest.raises(BaselineError) as caught:
        read_baseline("main", resolve_project(path))
    assert str(caught.value) == f"the base's telemetry.toml does not read ({why})"


def test_a_base_that_names_a_lock_it_does_not_have_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"svc/telemetry.toml": config("locks/schema.lock.json")})
    path = head_reads(repo, "svc/telemetry.toml")
    with pytest.raises(BaselineError) as caught:
        read_baseline("main", resolve_project(path))
    assert str(caught.value) == (
        "main:svc/telemetry.toml names the lock svc/locks/schema.lock.json, which main does "
        "not have (commit a lock on the base first)"
    )


def test_a_broken_lock_at_the_base_is_named_by_ref_and_path(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(), "telemetry/schema.lock.json": '{"events": 1}'})
    with pytest.raises(LockFormatError) as caught:
        read_baseline("main", resolve_project(head_reads(repo)))
    assert str(caught.value).startswith("main:telemetry/schema.lock.json: not a schema lock: ")


def test_a_bad_ref_is_a_git_ref_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config()})
    with pytest.raises(GitRefError) as caught:
        read_baseline("no-such-branch", resolve_project(repo / "telemetry.toml"))
    assert not isinstance(caught.value, BaselineError)


# --- a base without [catalogue]: this package's own lock -------------------------------


def test_in_this_repository_the_packages_lock_is_read_at_the_ref(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This repository, in small: the package's lock inside the repository's tree.
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(None), "pkg/schema.lock.json": LOCK_TEXT})
    (repo / "pkg" / "schema.lock.json").write_text("{}", encoding="utf-8")  # the head's
    monkeypatch.setattr(_baseline, "LOCK_PATH", repo / "pkg" / "schema.lock.json")
    found = read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert found.note == "against the lock at main"
    assert found.lock == LOCK


def test_in_this_repository_a_ref_without_the_packages_lock_stops_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(None)})
    monkeypatch.setattr(_baseline, "LOCK_PATH", repo / "pkg" / "schema.lock.json")
    with pytest.raises(BaselineError) as caught:
        read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert str(caught.value) == (
        "main has no lock at pkg/schema.lock.json, where this package keeps it"
    )


def test_in_this_repository_a_broken_package_lock_at_the_ref_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(None), "pkg/schema.lock.json": "[]"})
    monkeypatch.setattr(_baseline, "LOCK_PATH", repo / "pkg" / "schema.lock.json")
    with pytest.raises(LockFormatError) as caught:
        read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert str(caught.value) == (
        "main:pkg/schema.lock.json: not a schema lock: the top level is not an object"
    )


def test_elsewhere_the_installed_packages_lock_is_read_and_no_pull_request_changes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = tmp_path / "site-packages" / "schema.lock.json"
    installed.parent.mkdir()
    installed.write_text(LOCK_TEXT, encoding="utf-8")
    monkeypatch.setattr(_baseline, "LOCK_PATH", installed)
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(None), "pkg/schema.lock.json": "{}"})
    found = read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert found.note == "against the package's own lock"
    assert found.lock == LOCK


def test_elsewhere_an_installed_package_without_a_lock_has_no_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_baseline, "LOCK_PATH", tmp_path / "site-packages" / "schema.lock.json")
    repo = tmp_path / "repo"
    commit(repo, {"telemetry.toml": config(None)})
    found = read_baseline("main", resolve_project(repo / "telemetry.toml"))
    assert found.note == "against the package's own lock"
    assert found.lock == SchemaLock()
