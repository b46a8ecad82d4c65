"""The view stages of ``check``: bindings read back from the SQL, generated-file drift,
and the committed view every locked event version keeps."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent_telemetry.check import CheckReport, Finding, render, run_check
from agent_telemetry.check._view_stages import binding_findings, drift_findings, kept_view_findings
from agent_telemetry.config import LAYOUTS
from agent_telemetry.schema import EVENT_VERSIONS, PipelineRun, version_catalogue
from agent_telemetry.schema.lock import LOCK_PATH, build_lock, dump_lock
from agent_telemetry.schema.versions import registry_specs
from agent_telemetry.views import GENERATED_DIR, build
from tests.schema.copies import copy_model, lock_of, registry_with

REPO = Path(__file__).parents[2]
CONFIG = REPO / "telemetry.toml"


@pytest.fixture
def sql_dir(tmp_path: Path) -> Path:
    """A copy of the committed SQL to break."""
    target = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, target)
    return target


def rendered(findings: list[Finding], fmt: str) -> str:
    report = CheckReport()
    report.stage("x", findings)
    return render(report, fmt)


def test_the_committed_views_are_bound() -> None:
    findings, checked = binding_findings(EVENT_VERSIONS.values())
    assert findings == []
    assert checked == len(EVENT_VERSIONS) * 3


def test_a_column_reading_another_key_is_unbound(sql_dir: Path) -> None:
    path = sql_dir / "partitioned" / "pipeline_run.sql"
    sql = path.read_text(encoding="utf-8")
    broken = sql.replace("jsonPayload.attempts", "jsonPayload.model_calls")
    assert broken != sql
    path.write_text(broken, encoding="utf-8")
    findings, _ = binding_findings(EVENT_VERSIONS.values(), sql_dir)
    assert {(f.rule, f.event, f.field) for f in findings} == {
        ("VIEW_BINDING", "pipeline_run", "attempts")
    }
    (finding,) = findings
    assert finding.line is not None
    assert re.search(r"AS attempts\b", broken.splitlines()[finding.line - 1])
    for fmt in ("text", "json", "github"):
        assert "VIEW_BINDING" in rendered(findings, fmt)


def test_a_hand_edit_is_drift_at_its_line(sql_dir: Path, tmp_path: Path) -> None:
    docs = tmp_path / "telemetry.md"
    build(CONFIG, sql_dir=sql_dir, docs_path=docs)  # a clean copy of docs, too
    for layout, view, index in (("partitioned", "chat_turn", 9), ("sharded", "pipeline_run", 30)):
        path = sql_dir / layout / f"{view}.sql"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[index] = "  -- a reviewer's note\n"
        path.write_text("".join(lines), encoding="utf-8")
    (sql_dir / "analytics" / "provider_status.sql").unlink()
    findings = drift_findings(build(CONFIG, check=True, sql_dir=sql_dir, docs_path=docs))
    by_file = {Path(f.file or "").name: f for f in findings}
    assert set(by_file) == {"chat_turn.sql", "pipeline_run.sql", "provider_status.sql"}
    assert by_file["chat_turn.sql"].line == 10
    assert by_file["pipeline_run.sql"].line == 31
    assert "is missing" in by_file["provider_status.sql"].message
    assert all(f.rule == "GENERATED_DRIFT" for f in findings)
    assert "title=GENERATED_DRIFT" in rendered(findings, "github")


def test_every_locked_version_has_its_committed_view() -> None:
    lock = build_lock(version_catalogue())
    assert kept_view_findings(lock, dump_lock(lock), LOCK_PATH) == []


def test_a_v2_view_written_over_the_v1_file_is_caught(sql_dir: Path, tmp_path: Path) -> None:
    """The gap this stage closes: a bump that renders version 2 under the v1 view's name."""
    v2 = copy_model(PipelineRun, version=2)
    registry = registry_with(v2, retired=(PipelineRun,))
    lock = lock_of(registry)
    for layout in LAYOUTS:
        path = sql_dir / layout / "pipeline_run.sql"
        sql = path.read_text(encoding="utf-8")
        assert "lines.schema_version = 1\n" in sql
        path.write_text(sql.replace("lines.schema_version = 1\n", "lines.schema_version = 2\n"))
    found = kept_view_findings(lock, dump_lock(lock), LOCK_PATH, sql_dir)
    assert [(f.rule, f.event, f.version) for f in found] == [
        ("VIEW_VERSION_KEPT", "pipeline_run", 1),
        ("VIEW_VERSION_KEPT", "pipeline_run", 2),
    ]
    assert "the partitioned pipeline_run keeps schema_version 2;" in found[0].message
    assert "no committed view pipeline_run_v2 in partitioned, sharded, analytics" in (
        found[1].message
    )
    assert all(f.line is not None for f in found)  # the version's entry in the lock
    assert "title=VIEW_VERSION_KEPT" in rendered(found, "github")

    docs = tmp_path / "telemetry.md"
    build(CONFIG, sql_dir=sql_dir, docs_path=docs, specs=registry_specs(registry))
    assert kept_view_findings(lock, dump_lock(lock), LOCK_PATH, sql_dir) == []
    assert (sql_dir / "partitioned" / "pipeline_run_v2.sql").is_file()


def test_a_dedupe_window_without_timestamp_is_found_at_its_line(sql_dir: Path) -> None:
    # Partitioning the window by insertId alone merges different entries that share an id
    # and keeps a timestamp filter from pruning partitions: the bindings stage finds it.
    for layout, view in (("sharded", "chat_turn"), ("partitioned", "telemetry_quality")):
        path = sql_dir / layout / f"{view}.sql"
        sql = path.read_text(encoding="utf-8")
        broken = re.sub(
            r"PARTITION BY sink\.insertId, sink\.timestamp(, sink\._table_suffix)?\n",
            "PARTITION BY sink.insertId\n",
            sql,
        )
        assert broken != sql
        path.write_text(broken, encoding="utf-8")
    findings, _ = binding_findings(EVENT_VERSIONS.values(), sql_dir)
    assert {(f.rule, f.event, Path(f.file or "").parent.name) for f in findings} == {
        ("VIEW_DEDUPE", "chat_turn", "sharded"),
        ("VIEW_DEDUPE", None, "partitioned"),
        # and a date filter on the event view no longer reaches the sink's scan
        ("VIEW_PRUNING", "chat_turn", "sharded"),
    }
    for finding in findings:
        if finding.rule == "VIEW_DEDUPE":
            assert "keeps partition pruning" in finding.message
    pruning = sorted(f.message for f in findings if f.rule == "VIEW_PRUNING")
    assert [m.split(" reaches")[0] for m in pruning] == [
        "sharded view: a filter on table_suffix",
        "sharded view: a filter on timestamp",
    ]
    chat = next(f for f in findings if f.event == "chat_turn" and f.rule == "VIEW_DEDUPE")
    lines = (sql_dir / "sharded" / "chat_turn.sql").read_text(encoding="utf-8").splitlines()
    assert chat.line is not None
    assert lines[chat.line - 1].strip() == "QUALIFY"


def test_dedupe_off_in_the_config_refuses_committed_views_that_drop_rows(tmp_path: Path) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text(
        CONFIG.read_text(encoding="utf-8").replace("[target]", "dedupe = false\n\n[target]"),
        encoding="utf-8",
    )
    report = run_check(config, docs_path=tmp_path / "telemetry.md")
    dedupe = [f for f in report.findings if f.rule == "VIEW_DEDUPE"]
    # Every committed view of every layout, telemetry_quality included.
    assert len(dedupe) == (len(EVENT_VERSIONS) + 1) * len(LAYOUTS)
    assert all("dedupe is off" in f.message for f in dedupe)


def test_one_read_of_a_broken_file_serves_every_view_stage(sql_dir: Path, tmp_path: Path) -> None:
    """The check parses each committed file once; a file that does not parse is still
    reported by each stage that reads it, and the other files are still read back."""
    from agent_telemetry.check import run_check

    docs = tmp_path / "telemetry.md"
    build(CONFIG, sql_dir=sql_dir, docs_path=docs)
    broken = sql_dir / "sharded" / "chat_turn.sql"
    broken.write_text("CREATE OR REPLACE VIEW AS SELECT\n", encoding="utf-8")
    report = run_check(CONFIG, sql_dir=sql_dir, docs_path=docs)
    found = {
        (f.stage, f.rule, f.event, Path(f.file or "").name)
        for f in report.findings
        if f.rule != "DATA_REVIEW"  # the notice of pipeline_run's recorded review
    }
    assert found == {
        ("bindings", "VIEW_BINDING", "chat_turn", "chat_turn.sql"),
        ("generated", "GENERATED_DRIFT", None, "chat_turn.sql"),
        ("versions", "VIEW_VERSION_KEPT", "chat_turn", Path(LOCK_PATH).name),
    }
    (binding,) = (f for f in report.findings if f.stage == "bindings")
    assert binding.message.startswith("sharded view: does not parse as a BigQuery query")
    (kept,) = (f for f in report.findings if f.stage == "versions")
    assert "the sharded chat_turn keeps schema_version no version filter" in kept.message
    stages = {s.name: s for s in report.stages}
    assert stages["bindings"].note == "15 committed views read back"
