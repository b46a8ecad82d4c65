"""Issue 30's catalogue change through the compatibility rules: ``pipeline_run.reason``
gained ``stalled`` and ``pipeline_run`` gained an optional ``provider``. Both are additive
(``check --against`` the lock before them passes); removing ``stalled`` later is refused.

Run on a copy of the package in a git repository of its own, through the real entry point.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_telemetry.schema import PipelineRun, Provider, event_spec
from agent_telemetry.schema.lock import LOCK_PATH, dump_lock, parse_lock
from tests.schema.copies import (
    EVENTS_IN_REPO,
    field,
    fields,
    real_lock_data,
    repo_copy,
    run_cli_in,
)

LOCK_IN_COPY = Path("agent_telemetry/schema") / LOCK_PATH.name


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def lock_before_issue_30() -> str:
    """The lock as it was before: no ``stalled`` member, no ``provider`` field, no data
    review (its capacity figures are recomputed from the fields by the lock itself)."""
    data = real_lock_data()
    field(data, "pipeline_run", "reason")["members"].remove("stalled")
    fields(data, "pipeline_run").remove(field(data, "pipeline_run", "provider"))
    version = data["events"]["pipeline_run"]["1"]
    version["data_reviews"] = []
    before = parse_lock(data)
    return dump_lock(before)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy whose first commit holds the lock before issue 30, the second today's lock
    (written by ``agent-telemetry lock`` from the models, as an author does)."""
    copy = repo_copy(tmp_path_factory.mktemp("lanes"))
    (copy / LOCK_IN_COPY).write_text(lock_before_issue_30(), encoding="utf-8")
    git(copy, "init", "-q")
    git(copy, "add", ".")
    git(copy, "commit", "-qm", "before issue 30")
    relocked = run_cli_in(copy, "lock")
    assert relocked.returncode == 0, relocked.stderr
    assert "pipeline_run addition" in relocked.stdout
    git(copy, "commit", "-qam", "stalled and provider")
    return copy


def test_the_provider_field_is_the_provider_status_set() -> None:
    spec = event_spec(PipelineRun)
    provider = spec.field("provider")
    assert not provider.required
    assert provider.members == tuple(member.value for member in Provider)
    assert "stalled" in spec.field("reason").members


def test_stalled_and_provider_pass_against_the_lock_before_them(repo: Path) -> None:
    result = run_cli_in(repo, "check", "--schema-only", "--against", "HEAD~1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compat      ok  (against the lock at HEAD~1)" in result.stdout
    assert "pipeline_run addition" in result.stdout
    assert "ENUM_VALUE_NO_DELETE pipeline_run.reason (v1): addition: member(s) stalled added" in (
        result.stdout
    )
    assert "FIELD_NO_REQUIRED_ADD pipeline_run.provider (v1): addition" in result.stdout
    # The capacity it adds is cleared by a data review beside the model: since the whole
    # line is counted (issue 36), issue 30's 58.4 bits no longer cover it, issue 36's do.
    assert "CAPACITY_GROWTH pipeline_run (v1): addition: capacity grew from 58.4 bits to " in (
        result.stdout
    )
    assert "data review issue 36 approves 61.3 bits" in result.stdout


def test_removing_stalled_later_is_refused(repo: Path, tmp_path: Path) -> None:
    events = repo / EVENTS_IN_REPO
    source = events.read_text(encoding="utf-8")
    line = '    STALLED = "stalled"\n'
    assert source.count(line) == 1
    events.write_text(source.replace(line, ""), encoding="utf-8")
    try:
        result = run_cli_in(repo, "check", "--schema-only", "--against", "HEAD")
    finally:
        events.write_text(source, encoding="utf-8")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pipeline_run breaking" in result.stdout
    assert "ENUM_VALUE_NO_DELETE pipeline_run.reason (v1): member(s) stalled deleted" in (
        result.stdout
    )
