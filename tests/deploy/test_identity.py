"""Who an approval records beside ``--by``: the git user of the repository approved in,
and the gcloud account, each None when unknown, never an error.

git is real: a repository in tmp_path with its own configuration (no global or system
file). gcloud is a stand-in script on PATH: a fresh clone's test run cannot count on
the Cloud SDK being installed, and only a stand-in can be slow, fail, or print ``(unset)``
on demand. It answers exactly ``gcloud config get-value account`` and refuses anything
else, as gcloud does an unknown command.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_telemetry.deploy import _identity
from agent_telemetry.deploy._identity import approver_identity, gcloud_account, git_user

GIT = shutil.which("git")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty git repository as the working directory; only its own config counts."""
    assert GIT is not None
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    subprocess.run([GIT, "init", "-q", str(tmp_path / "repo")], check=True)
    monkeypatch.chdir(tmp_path / "repo")
    return tmp_path / "repo"


def _git_config(key: str, value: str) -> None:
    assert GIT is not None
    subprocess.run([GIT, "config", key, value], check=True)


def _path_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gcloud: str | None) -> None:
    """PATH = git alone, plus a ``gcloud`` running ``gcloud`` (a shell script body)."""
    assert GIT is not None
    tools = tmp_path / "bin"
    tools.mkdir(exist_ok=True)
    (tools / "git").unlink(missing_ok=True)
    (tools / "git").symlink_to(GIT)
    if gcloud is not None:
        script = tools / "gcloud"
        script.write_text(
            '#!/bin/sh\n[ "$*" = "config get-value account" ] || exit 2\n' + gcloud + "\n"
        )
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))


def test_the_git_user_is_name_and_email(repo: Path) -> None:
    _git_config("user.name", "Ana Analyst")
    _git_config("user.email", "ana@example.com")
    assert git_user() == "Ana Analyst <ana@example.com>"


def test_a_name_alone_or_an_email_alone_is_recorded_as_it_is(repo: Path) -> None:
    _git_config("user.name", "Ana Analyst")
    assert git_user() == "Ana Analyst"
    subprocess.run([str(GIT), "config", "--unset", "user.name"], check=True)
    _git_config("user.email", "ana@example.com")
    assert git_user() == "ana@example.com"


def test_no_git_user_is_none(repo: Path) -> None:
    assert git_user() is None


def test_the_gcloud_account_is_what_gcloud_config_says(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _git_config("user.name", "Ana Analyst")
    _path_with(tmp_path, monkeypatch, "echo ' ana@example.com '")
    assert approver_identity() == {"git_user": "Ana Analyst", "gcloud_account": "ana@example.com"}


@pytest.mark.parametrize(
    "gcloud",
    [
        "echo '(unset)'",  # no account configured
        "echo ana@example.com; exit 1",  # gcloud failed: its output is not an answer
        "echo",  # nothing
        None,  # no gcloud on PATH
    ],
    ids=["unset", "failed", "empty", "absent"],
)
def test_no_usable_gcloud_answer_records_none(
    gcloud: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _path_with(tmp_path, monkeypatch, gcloud)
    assert gcloud_account() is None


def test_a_gcloud_slower_than_the_timeout_records_none_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung gcloud (no network, a login prompt) must not hold the approval up."""
    _path_with(tmp_path, monkeypatch, "/bin/sleep 3 >/dev/null; echo ana@example.com")
    monkeypatch.setattr(_identity, "_TIMEOUT_S", 0.2)
    assert gcloud_account() is None
