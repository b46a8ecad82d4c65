"""`views build --check` is the CI drift check: it fails on any hand edit or model change."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.config import LAYOUTS
from agent_telemetry.schema import EventSpec, catalogue
from agent_telemetry.views import GENERATED_DIR, LANE_VIEW, QUALITY_VIEW, build, sql_path
from agent_telemetry.views._build import JSONSCHEMA_FILE, installed_package
from tests.conftest import EXAMPLE_CONFIG, REPO

COMMITTED_DOCS = REPO / "docs" / "telemetry.md"


@pytest.fixture
def copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the committed SQL and data dictionary to edit."""
    sql_dir = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, sql_dir)
    docs = tmp_path / "telemetry.md"
    shutil.copy(COMMITTED_DOCS, docs)
    return sql_dir, docs


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_committed_files_match_the_models() -> None:
    result = build(EXAMPLE_CONFIG, check=True)
    assert result.drifted == ()
    assert result.diff == ""
    assert result.exit_code == 0


def test_every_layout_and_view_is_committed() -> None:
    names = [spec.name for spec in catalogue()] + [QUALITY_VIEW, LANE_VIEW]
    expected = {sql_path(GENERATED_DIR, layout, name) for layout in LAYOUTS for name in names}
    assert set(GENERATED_DIR.rglob("*.sql")) == expected


def test_check_fails_after_a_committed_sql_file_is_edited(copy: tuple[Path, Path]) -> None:
    sql_dir, docs = copy
    target = sql_path(sql_dir, "sharded", "chat_turn")
    target.write_text(target.read_text().replace("BETWEEN 0 AND 60", "BETWEEN 0 AND 61"))
    before = _snapshot(sql_dir.parent)
    result = build(EXAMPLE_CONFIG, check=True, sql_dir=sql_dir, docs_path=docs)
    assert result.drifted == (target,)
    assert result.exit_code == 1
    assert "-    WHEN lines.pipeline_runs BETWEEN 0 AND 61" in result.diff
    assert "+    WHEN lines.pipeline_runs BETWEEN 0 AND 60" in result.diff
    assert result.diff.startswith("--- a/")
    assert _snapshot(sql_dir.parent) == before, "--check must write nothing"
    # A plain build repairs it, after which the check passes.
    repaired = build(EXAMPLE_CONFIG, sql_dir=sql_dir, docs_path=docs)
    assert repaired.written == (target,)
    assert build(EXAMPLE_CONFIG, check=True, sql_dir=sql_dir, docs_path=docs).ok


def _with_new_description(specs: tuple[EventSpec, ...]) -> tuple[EventSpec, ...]:
    run = specs[0]
    lane = dataclasses.replace(run.fields[0], description="Lane the run was queued in.")
    changed = dataclasses.replace(run, fields=(lane, *run.fields[1:]))
    return (changed, *specs[1:])


def test_check_fails_after_a_model_description_changes(copy: tuple[Path, Path]) -> None:
    sql_dir, docs = copy
    changed = _with_new_description(catalogue())
    result = build(EXAMPLE_CONFIG, check=True, sql_dir=sql_dir, docs_path=docs, specs=changed)
    assert set(result.drifted) == {
        *(sql_path(sql_dir, layout, "pipeline_run") for layout in LAYOUTS),
        docs,
        sql_dir / JSONSCHEMA_FILE,  # the schema carries the descriptions too
    }
    assert "+    description='Lane the run was queued in. One of: public, admin, premium.'" in (
        result.diff
    )
    assert not result.ok


def test_a_stale_view_file_is_drift_and_a_build_removes_it(copy: tuple[Path, Path]) -> None:
    sql_dir, docs = copy
    stale = sql_path(sql_dir, "partitioned", "retired_event")
    stale.write_text("SELECT 1\n")
    result = build(EXAMPLE_CONFIG, check=True, sql_dir=sql_dir, docs_path=docs)
    assert result.drifted == (stale,)
    assert "+++ /dev/null" in result.diff
    assert stale.exists()
    assert build(EXAMPLE_CONFIG, sql_dir=sql_dir, docs_path=docs).removed == (stale,)
    assert not stale.exists()


def test_build_into_an_empty_folder_writes_every_file(tmp_path: Path) -> None:
    result = build(EXAMPLE_CONFIG, sql_dir=tmp_path / "sql", docs_path=tmp_path / "docs.md")
    # every event's view, telemetry_quality and lane_health in each layout, the dictionary
    # and the catalogue's JSON Schema
    assert len(result.written) == len(LAYOUTS) * (len(catalogue()) + 2) + 2
    assert _snapshot(tmp_path / "sql") == _snapshot(GENERATED_DIR)
    assert (tmp_path / "docs.md").read_bytes() == COMMITTED_DOCS.read_bytes()


def test_cli_check_exits_non_zero_with_a_diff(copy: tuple[Path, Path]) -> None:
    sql_dir, docs = copy
    target = sql_path(sql_dir, "analytics", "telemetry_quality")
    target.write_text(target.read_text() + "-- reviewed\n")
    args = ["views", "build", "--config", str(EXAMPLE_CONFIG), "--sql-dir", str(sql_dir)]
    args += ["--docs", str(docs)]
    result = CliRunner().invoke(main, [*args, "--check"])
    assert result.exit_code == 1
    assert "-- reviewed" in result.output
    assert "1 generated file(s) differ from the models" in result.output
    fixed = CliRunner().invoke(main, args)
    assert fixed.exit_code == 0
    assert "wrote" in fixed.output
    assert CliRunner().invoke(main, [*args, "--check"]).output == "views are up to date\n"


def test_cli_refuses_a_hostile_config(tmp_path: Path) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text(
        '[source]\nproject = "acme-agents-prod"\ndataset = "agent_logs"\n'
        'table = "t`; DROP TABLE x; --"\n'
        '[target]\nproject = "acme-agents-prod"\ndataset = "agent_telemetry"\n'
    )
    result = CliRunner().invoke(
        main, ["views", "build", "--config", str(config), "--sql-dir", str(tmp_path / "sql")]
    )
    assert result.exit_code == 2  # an error, not drift
    assert "source.table: not a BigQuery name" in result.output
    assert "DROP" not in result.output
    assert not (tmp_path / "sql").exists()


def test_build_refuses_to_write_into_an_installed_package_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = tmp_path / "lib" / "python3" / "site-packages" / "agent_telemetry" / "views"
    monkeypatch.setattr("agent_telemetry.views._build.PACKAGE_SQL_DIR", installed / "generated")
    monkeypatch.setattr("agent_telemetry.project.PACKAGE_SQL_DIR", installed / "generated")
    config = tmp_path / "telemetry.toml"
    shutil.copy(EXAMPLE_CONFIG, config)
    args = ["views", "build", "--config", str(config)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2  # an error, not drift
    assert "installed agent_telemetry package (site-packages); name your own" in result.output
    assert "or pass --sql-dir and --docs" in result.output
    assert not installed.exists()
    assert not (tmp_path / "docs").exists()
    # An explicit --sql-dir writes; --check only reads, so it is allowed as before.
    sql_dir = tmp_path / "views"
    assert CliRunner().invoke(main, [*args, "--sql-dir", str(sql_dir)]).exit_code == 0
    assert (sql_dir / "partitioned").is_dir()
    assert CliRunner().invoke(main, [*args, "--check"]).exit_code == 1  # nothing there: drift


def test_this_checkout_is_not_an_installed_package() -> None:
    assert not installed_package(GENERATED_DIR)
    assert installed_package(Path("/usr/lib/python3/dist-packages/agent_telemetry"))
