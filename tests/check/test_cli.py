"""``agent-telemetry check`` and ``lock`` end to end: exit codes, --against, exceptions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.check import render, run_check
from agent_telemetry.cli import main
from agent_telemetry.schema import catalogue
from agent_telemetry.schema.lock import LOCK_PATH, build_lock, dump_lock, parse_lock
from tests.schema.copies import LockData, field, real_lock_data

REPO = Path(__file__).parents[2]
CONFIG = REPO / "telemetry.toml"
LOCK_IN_REPO = "agent_telemetry/schema/schema.lock.json"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


def wider_base(d: LockData) -> None:
    """The base had a member the models no longer have: the models deleted it."""
    field(d, "pipeline_run", "lane")["members"].append("enterprise")


def write_lock(path: Path, data: LockData | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = build_lock(catalogue()) if data is None else parse_lock(data)
    path.write_text(dump_lock(lock), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with two commits: a lock with one more member, then the real lock."""
    git(tmp_path, "init", "-q")
    lock = tmp_path / LOCK_IN_REPO
    data = real_lock_data()
    wider_base(data)
    write_lock(lock, data)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    write_lock(lock)
    git(tmp_path, "commit", "-qam", "delete a member")
    return tmp_path


def check(repo: Path, *args: str, config: Path = CONFIG) -> Result:
    """The schema stages of ``check`` on the lock in ``repo`` (the view stages read the
    package's SQL, which these tests do not change)."""
    lock = str(repo / LOCK_IN_REPO)
    return invoke("check", "--schema-only", "--config", str(config), "--lock", lock, *args)


def test_the_repository_passes_its_own_check() -> None:
    result = invoke("check", "--config", str(CONFIG))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("agent-telemetry check: ok")


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_against_the_parent_commit_finds_the_deleted_member(repo: Path, fmt: str) -> None:
    result = check(repo, "--against", "HEAD~1", "--format", fmt)
    assert result.exit_code == 1, result.output
    assert "ENUM_VALUE_NO_DELETE" in result.output
    assert "enterprise" in result.output
    assert "LOCK_DRIFT" not in result.output  # the working tree's lock is current
    if fmt == "json":
        (violation,) = json.loads(result.output)["violations"]
        assert (violation["rule"], violation["field"]) == ("ENUM_VALUE_NO_DELETE", "lane")
    if fmt == "github":
        assert "::error file=" in result.output
        assert ",title=ENUM_VALUE_NO_DELETE::" in result.output


def test_against_the_same_commit_is_clean(repo: Path) -> None:
    result = check(repo, "--against", "HEAD")
    assert result.exit_code == 0, result.output
    assert "against the lock at HEAD" in result.output


def test_without_against_the_committed_lock_is_the_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "HEAD~1")  # the working tree now has the wider lock
    result = check(repo)
    assert result.exit_code == 1
    assert "ENUM_VALUE_NO_DELETE" in result.output
    assert "LOCK_DRIFT" in result.output


def test_a_ref_without_a_lock_makes_every_event_new(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "README").write_text("x\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "before the lock")
    write_lock(tmp_path / LOCK_IN_REPO)
    result = check(tmp_path, "--against", "HEAD")
    assert result.exit_code == 0, result.output
    assert "no lock at HEAD" in result.output


@pytest.mark.parametrize("ref", ["no-such-ref", "HEAD~5", "--help"])
def test_a_bad_ref_is_a_usage_error(repo: Path, ref: str) -> None:
    result = check(repo, f"--against={ref}")
    assert result.exit_code == 2
    assert "--against" in result.output


def test_against_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    write_lock(tmp_path / LOCK_IN_REPO)
    result = check(tmp_path, "--against", "HEAD")
    assert result.exit_code == 2


def test_a_missing_config_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("check", "--schema-only", "--config", str(tmp_path / "nope.toml"))
    assert result.exit_code == 2
    assert "not found" in result.output


def config_with(tmp_path: Path, entries: Sequence[dict[str, str]]) -> Path:
    text = CONFIG.read_text(encoding="utf-8")
    for entry in entries:
        text += "\n[[exceptions]]\n" + "".join(f'{k} = "{v}"\n' for k, v in entry.items())
    path = tmp_path / "telemetry.toml"
    path.write_text(text, encoding="utf-8")
    return path


LANE_EXCEPTION = {
    "rule": "ENUM_VALUE_NO_DELETE",
    "event": "pipeline_run",
    "field": "lane",
    "reason": "enterprise never shipped; no rows carry it",
}


def test_a_reviewed_exception_lets_the_change_pass(repo: Path, tmp_path: Path) -> None:
    config = config_with(tmp_path, [LANE_EXCEPTION])
    result = check(repo, "--against", "HEAD~1", config=config)
    assert result.exit_code == 0, result.output
    assert "excepted: member(s) enterprise deleted" in result.output
    assert "enterprise never shipped" in result.output


def test_an_exception_for_another_field_does_not(repo: Path, tmp_path: Path) -> None:
    config = config_with(tmp_path, [dict(LANE_EXCEPTION, field="status")])
    result = check(repo, "--against", "HEAD~1", "--format", "github", config=config)
    assert result.exit_code == 1
    assert ",title=ENUM_VALUE_NO_DELETE::" in result.output
    assert "::warning title=EXCEPTION_UNUSED::" in result.output


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (dict(LANE_EXCEPTION, rule="NOT_A_RULE"), "exceptions[0].rule: not a compatibility rule"),
        ({k: v for k, v in LANE_EXCEPTION.items() if k != "reason"}, "exceptions[0].reason"),
        ({k: v for k, v in LANE_EXCEPTION.items() if k != "field"}, "name it in field"),
    ],
)
def test_a_malformed_exception_is_a_usage_error(
    tmp_path: Path, entry: dict[str, str], message: str
) -> None:
    result = invoke("check", "--schema-only", "--config", str(config_with(tmp_path, [entry])))
    assert result.exit_code == 2
    assert message in result.output
    assert "NOT_A_RULE" not in result.output  # the value is named by its key, never echoed


HOSTILE = "jane@example.com"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (dict(LANE_EXCEPTION, event=HOSTILE), "exceptions[0].event: not a known event"),
        (dict(LANE_EXCEPTION, field=HOSTILE), "exceptions[0].field: not a field of that event"),
        (
            dict(LANE_EXCEPTION, event=HOSTILE, field=HOSTILE, reason=HOSTILE),
            "exceptions[0].event: not a known event",
        ),
        (dict(LANE_EXCEPTION, field="tier"), "exceptions[0].field: not a field of that event"),
        (dict(LANE_EXCEPTION, reason="  "), "exceptions[0].reason: empty"),
    ],
)
def test_an_exception_naming_what_does_not_exist_is_refused_without_echoing_it(
    tmp_path: Path, entry: dict[str, str], message: str
) -> None:
    config = config_with(tmp_path, [LANE_EXCEPTION, entry])
    for command in (("check", "--schema-only"), ("lock", "--lock", str(tmp_path / "l.json"))):
        result = invoke(*command, "--config", str(config))
        assert result.exit_code == 2, result.output
        assert message.replace("[0]", "[1]") in result.output
        assert HOSTILE not in result.output
    assert not (tmp_path / "l.json").exists()


def test_a_deleted_event_known_only_to_the_base_lock_can_be_excepted(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    lock = tmp_path / LOCK_IN_REPO
    data = real_lock_data()
    data["events"]["cache_lookup"] = data["events"]["chat_turn"]
    write_lock(lock, data)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base with cache_lookup")
    write_lock(lock)
    git(tmp_path, "commit", "-qam", "cache_lookup deleted and relocked")
    deleted = {"rule": "EVENT_NO_DELETE", "event": "cache_lookup", "reason": "never emitted"}
    field_of_deleted = dict(LANE_EXCEPTION, event="cache_lookup", field="tier")
    config = config_with(tmp_path, [deleted, field_of_deleted])
    result = check(tmp_path, "--against", "HEAD~1", config=config)
    assert result.exit_code == 0, result.output
    assert "excepted:" in result.output
    # Without the base lock, nothing knows the event any more.
    result = check(tmp_path, config=config)
    assert result.exit_code == 2
    assert "exceptions[0].event: not a known event" in result.output
    assert "exceptions[1].event: not a known event" in result.output


def test_an_unreadable_lock_is_a_usage_error(tmp_path: Path) -> None:
    lock = tmp_path / "schema.lock.json"
    lock.write_text("{", encoding="utf-8")
    result = invoke("check", "--schema-only", "--config", str(CONFIG), "--lock", str(lock))
    assert result.exit_code == 2
    assert "not JSON" in result.output


# --- definition rules --------------------------------------------------------------------

BAD_MODELS = '''
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count


class CacheLookup(TelemetryEvent):
    """One line per cache lookup."""

    event_name: ClassVar[str] = "cache_lookup"
    schema_version: ClassVar[int] = 1

    wait_ms: int | None = count(0, 60_000, "Milliseconds waited.")
    user_id: int | None = count(0, 10, "Who asked.")


EVENTS = {"cache_lookup": CacheLookup}
'''


def test_a_definition_rule_is_reported_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "leaky_models.py"
    module.write_text(textwrap.dedent(BAD_MODELS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    report = run_check(CONFIG, models_module="leaky_models", views=False)
    assert report.exit_code == 1
    (finding,) = report.errors
    assert (finding.rule, finding.event, finding.field) == (
        "FIELD_NAME_NO_IDENTIFIER",
        "CacheLookup",
        "user_id",
    )
    assert finding.file is not None
    assert finding.file.endswith("leaky_models.py")
    line = module.read_text(encoding="utf-8").splitlines()[finding.line - 1 if finding.line else 0]
    assert line.lstrip().startswith("user_id:")
    assert [s.status for s in report.stages] == ["failed"] + ["skipped"] * 5
    for fmt in ("text", "json", "github"):
        assert "FIELD_NAME_NO_IDENTIFIER" in render(report, fmt)


# --- lock ----------------------------------------------------------------------------------


def test_lock_writes_the_committed_bytes_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "schema.lock.json"
    first = invoke("lock", "--lock", str(path))
    assert first.exit_code == 0, first.output
    assert path.read_text(encoding="utf-8") == LOCK_PATH.read_text(encoding="utf-8")
    again = invoke("lock", "--lock", str(path))
    assert "up to date" in again.output


def test_lock_refuses_an_unreviewed_breaking_change(tmp_path: Path) -> None:
    path = tmp_path / "schema.lock.json"
    data = real_lock_data()
    wider_base(data)
    write_lock(path, data)
    before = path.read_text(encoding="utf-8")
    result = invoke("lock", "--lock", str(path), "--config", str(CONFIG))
    assert result.exit_code == 1
    assert "ENUM_VALUE_NO_DELETE" in result.output
    assert "not written" in result.output
    assert path.read_text(encoding="utf-8") == before


def test_lock_writes_a_breaking_change_an_exception_covers(tmp_path: Path) -> None:
    path = tmp_path / "schema.lock.json"
    data = real_lock_data()
    wider_base(data)
    write_lock(path, data)
    config = config_with(tmp_path, [LANE_EXCEPTION])
    result = invoke("lock", "--lock", str(path), "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "pipeline_run breaking" in result.output
    assert path.read_text(encoding="utf-8") == LOCK_PATH.read_text(encoding="utf-8")


ENTRY_POINT = "from agent_telemetry._entry import main; main()"


def test_a_broken_model_in_the_package_is_reported_not_raised(tmp_path: Path) -> None:
    """On a copy of the package with a model that breaks a rule, the real entry point
    still runs: ``check`` reports rule, field and line, and exits 1."""
    shutil.copytree(REPO / "agent_telemetry", tmp_path / "agent_telemetry")
    shutil.copy(CONFIG, tmp_path / "telemetry.toml")
    events = tmp_path / "agent_telemetry" / "schema" / "events.py"
    source = events.read_text(encoding="utf-8")
    anchor = '    pipeline_runs: int | None = count(0, 60, "Pipeline runs the turn started.")\n'
    bad = '    session_id: int | None = count(0, 9, "Whose turn it was.")\n'
    events.write_text(source.replace(anchor, anchor + bad), encoding="utf-8")
    line = events.read_text(encoding="utf-8").splitlines().index(bad.rstrip("\n")) + 1
    run = subprocess.run(
        [sys.executable, "-c", ENTRY_POINT, "check", "--format", "github"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert (
        f"::error file=agent_telemetry/schema/events.py,line={line},"
        "title=FIELD_NAME_NO_IDENTIFIER::FIELD_NAME_NO_IDENTIFIER ChatTurn.session_id: "
    ) in run.stdout


# --- a service repository's own deployment ----------------------------------------------


def test_a_service_repository_checks_its_own_views_and_docs(tmp_path: Path) -> None:
    """`views build --sql-dir/--docs` then `check --sql-dir/--docs` with another config:
    the drift stage looks at the service's files, not the package's."""
    service = tmp_path / "service"
    service.mkdir()
    config = service / "telemetry.toml"
    text = CONFIG.read_text(encoding="utf-8").replace('"agent_telemetry"', '"svc_views"')
    config.write_text(text, encoding="utf-8")
    sql_dir, docs = service / "telemetry_views", service / "data-dictionary.md"
    paths = ["--config", str(config), "--sql-dir", str(sql_dir), "--docs", str(docs)]
    assert invoke("views", "build", *paths).exit_code == 0
    assert "svc_views" in docs.read_text(encoding="utf-8")

    result = invoke("check", *paths)
    assert result.exit_code == 0, result.output

    view = next((sql_dir / "partitioned").glob("*.sql"))
    view.write_text(view.read_text(encoding="utf-8") + "-- hand edit\n", encoding="utf-8")
    docs.write_text("stale\n", encoding="utf-8")
    result = invoke("check", *paths, "--format", "json")
    assert result.exit_code == 1
    drifted = {v["file"] for v in json.loads(result.output)["violations"]}
    assert drifted == {view.resolve().as_posix(), docs.resolve().as_posix()}
