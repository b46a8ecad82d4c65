"""A breaking change end to end: refused without a version bump, accepted with one.

The change: PipelineRun loses the ``premium`` lane and the ``attempts`` field. The models
are copies registered as a models module (``EVENTS`` + ``EVENT_VERSIONS``), and ``check``
runs on a temporary git repository holding the lock, the config and the generated files,
so the package is never edited. With the bump (version 1 retired, version 2 current),
``check`` passes against the base commit, both views exist, and on DuckDB the v1 view
reads the v1 lines while the v2 view reads the v2 lines.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest
from pydantic import Field

from agent_telemetry.check import CheckReport, render, run_check
from agent_telemetry.config import LAYOUTS, load_config
from agent_telemetry.schema import PipelineRun, TelemetryEvent
from agent_telemetry.schema.lock import LOCK_PATH, build_lock, dump_lock
from agent_telemetry.schema.versions import registry_specs, version_registry
from agent_telemetry.views import GENERATED_DIR, build
from tests.check.test_cli import git
from tests.schema.copies import copy_model, models_with
from tests.schema.test_compat import LaneWithoutPremium
from tests.warehouse.test_duckdb import _create_views, _insert, _rows, _sink

REPO = Path(__file__).parents[2]
LOCK_IN_REPO = "agent_telemetry/schema/schema.lock.json"


def without_premium_and_attempts(version: int) -> type[TelemetryEvent]:
    """The breaking change: a lane member and a field deleted."""
    lane = (LaneWithoutPremium, Field(description="Queue lane the run used."))
    return copy_model(PipelineRun, version=version, drop=("attempts",), replace={"lane": lane})


UNBUMPED = without_premium_and_attempts(1)
BUMPED = without_premium_and_attempts(2)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose one commit has the real lock, config and generated files."""
    git(tmp_path, "init", "-q")
    (tmp_path / LOCK_IN_REPO).parent.mkdir(parents=True)
    shutil.copy(LOCK_PATH, tmp_path / LOCK_IN_REPO)
    shutil.copy(REPO / "telemetry.toml", tmp_path / "telemetry.toml")
    shutil.copytree(GENERATED_DIR, tmp_path / "generated")
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "docs" / "telemetry.md", tmp_path / "docs" / "telemetry.md")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


Register = Callable[..., str]


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> Register:
    """Registers a models module: ``module(name, *current, retired=...)`` -> its name."""

    def register(
        name: str,
        *current: type[TelemetryEvent],
        retired: tuple[type[TelemetryEvent], ...] = (),
    ) -> str:
        events = models_with(*current)
        models = types.ModuleType(name)
        models.__dict__.update(
            EVENTS=events, EVENT_VERSIONS=version_registry(events.values(), retired)
        )
        monkeypatch.setitem(sys.modules, name, models)
        return name

    return register


def check(repo: Path, models: str, *, views: bool = True) -> CheckReport:
    """``agent-telemetry check --against HEAD`` on ``repo`` with the models of ``models``."""
    return run_check(
        repo / "telemetry.toml",
        against="HEAD",
        views=views,
        lock_path=repo / LOCK_IN_REPO,
        models_module=models,
        sql_dir=repo / "generated",
        docs_path=repo / "docs" / "telemetry.md",
    )


def relock_and_rebuild(repo: Path, models: str) -> None:
    """What `agent-telemetry lock` and `agent-telemetry views build` write."""
    specs = registry_specs(sys.modules[models].__dict__["EVENT_VERSIONS"])
    (repo / LOCK_IN_REPO).write_text(dump_lock(build_lock(specs)), encoding="utf-8")
    build(
        repo / "telemetry.toml",
        sql_dir=repo / "generated",
        docs_path=repo / "docs" / "telemetry.md",
        specs=specs,
    )


def test_the_change_without_a_bump_fails_with_the_rule_ids(repo: Path, module: Register) -> None:
    name = module("unbumped_models", UNBUMPED)
    report = check(repo, name)
    assert report.exit_code == 1
    breaking = {(f.rule, f.field, f.version) for f in report.errors if f.stage == "compat"}
    assert breaking == {
        ("ENUM_VALUE_NO_DELETE", "lane", 1),
        ("FIELD_NO_DELETE", "attempts", 1),
    }
    for fmt in ("text", "json", "github"):
        out = render(report, fmt)
        assert "ENUM_VALUE_NO_DELETE" in out
        assert "FIELD_NO_DELETE" in out
    text = render(report, "text")
    assert "bump PipelineRun.schema_version to 2" in text
    assert "view pipeline_run_v2 is added and pipeline_run kept" in text

    # Even after relocking and rebuilding, the base commit's lock still refuses it.
    relock_and_rebuild(repo, name)
    again = check(repo, name, views=False)
    assert again.exit_code == 1
    assert {f.rule for f in again.errors} == {"ENUM_VALUE_NO_DELETE", "FIELD_NO_DELETE"}


def test_the_change_with_a_bump_passes_and_keeps_both_views(repo: Path, module: Register) -> None:
    name = module("bumped_models", BUMPED, retired=(PipelineRun,))
    before = check(repo, name)
    stages = {s.name: s.status for s in before.stages}
    assert stages["compat"] == "ok"  # a new version is an addition
    assert {f.rule for f in before.errors} == {
        "LOCK_DRIFT",
        "GENERATED_DRIFT",
        "VIEW_VERSION_KEPT",  # version 2 has no committed view yet
        "VIEW_BINDING",  # the committed lane_health still reads version 1's view
    }

    relock_and_rebuild(repo, name)
    report = check(repo, name)
    out = render(report, "text")
    assert report.exit_code == 0, out
    assert {s.name: s.status for s in report.stages} == {
        "definition": "ok",
        "lock": "ok",
        "compat": "ok",
        "bindings": "ok",
        "generated": "ok",
        "versions": "ok",
    }
    assert report.classification["pipeline_run"] == "addition"
    assert "new version 2 (a new view; version 1 kept)" in out
    assert "4 events, 1 retired version(s)" in out
    assert "18 committed views read back" in out  # 5 event views and lane_health, 3 layouts
    for layout in LAYOUTS:
        assert (repo / "generated" / layout / "pipeline_run.sql").is_file()
        assert (repo / "generated" / layout / "pipeline_run_v2.sql").is_file()
    lock = json.loads((repo / LOCK_IN_REPO).read_text(encoding="utf-8"))
    assert set(lock["events"]["pipeline_run"]) == {"1", "2"}
    base = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    assert lock["events"]["pipeline_run"]["1"] == base["events"]["pipeline_run"]["1"]


def test_deleting_the_retired_class_later_is_refused(repo: Path, module: Register) -> None:
    bumped = module("bumped_then", BUMPED, retired=(PipelineRun,))
    relock_and_rebuild(repo, bumped)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "bump pipeline_run to version 2")
    dropped = module("retired_dropped", BUMPED)
    report = check(repo, dropped, views=False)
    (error,) = [f for f in report.errors if f.stage == "compat"]
    assert (error.rule, error.event, error.version) == ("EVENT_NO_DELETE", "pipeline_run", 1)
    assert "keep version 1's class (schema_version = 1), listed in RETIRED" in error.message


def test_a_retype_behind_a_bump_fails_and_skips_the_view_stages(
    repo: Path, module: Register
) -> None:
    flag = (bool | None, Field(None, strict=True, description="Whether the run retried."))
    retyped = copy_model(PipelineRun, version=2, replace={"attempts": flag})
    report = check(repo, module("retyped_models", retyped, retired=(PipelineRun,)))
    assert [(f.rule, f.field, f.version) for f in report.errors if f.stage == "compat"] == [
        ("SINK_COLUMN_SAME_TYPE", "attempts", 2)
    ]
    skipped = {s.name for s in report.stages if s.status == "skipped"}
    assert skipped == {"bindings", "generated", "versions"}


def test_the_v1_view_reads_v1_lines_and_the_v2_view_v2_lines(
    con: duckdb.DuckDBPyConnection,
) -> None:
    config = load_config(REPO / "telemetry.toml")
    specs = registry_specs(version_registry(models_with(BUMPED).values(), (PipelineRun,)))
    table = config.source.table_for("partitioned")
    _sink(con, "partitioned", table)
    _create_views(con, config, "partitioned", specs)
    v1 = "'event': 'pipeline_run', 'schema_version': 1, 'status': 'ok'"
    v2 = "'event': 'pipeline_run', 'schema_version': 2, 'status': 'ok'"
    _insert(
        con,
        table,
        [
            ("2026-03-01 10:00:00", f"{{{v1}, 'lane': 'premium', 'attempts': 2}}"),
            ("2026-03-01 11:00:00", f"{{{v2}, 'lane': 'public'}}"),
            ("2026-03-01 12:00:00", f"{{{v2}, 'lane': 'premium'}}"),  # not a v2 lane
        ],
    )
    old = _rows(con, "SELECT * FROM pipeline_run ORDER BY timestamp")
    assert [(r["schema_version"], r["lane"], r["attempts"]) for r in old] == [(1, "premium", 2)]
    new = _rows(con, "SELECT * FROM pipeline_run_v2 ORDER BY timestamp")
    assert [(r["schema_version"], r["lane"]) for r in new] == [(2, "public"), (2, None)]
    assert "attempts" not in new[0]
    quality = _rows(
        con,
        "SELECT schema_version, lines, out_of_domain_values FROM telemetry_quality "
        "WHERE event = 'pipeline_run' AND field = 'lane' ORDER BY schema_version",
    )
    assert quality == [
        {"schema_version": 1, "lines": 1, "out_of_domain_values": 0},
        {"schema_version": 2, "lines": 2, "out_of_domain_values": 1},
    ]


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.execute("ATTACH ':memory:' AS \"acme-agents-prod\"")
    connection.execute('CREATE SCHEMA "acme-agents-prod".agent_logs')
    yield connection
    connection.close()


ORPHAN_MODELS = '''
from typing import ClassVar

from agent_telemetry.schema import EVENTS as PACKAGE_EVENTS
from agent_telemetry.schema import TelemetryEvent, count, version_registry


class CacheLookupV1(TelemetryEvent):
    """One line per cache lookup (retired)."""

    event_name: ClassVar[str] = "cache_lookup"
    schema_version: ClassVar[int] = 1

    wait_ms: int | None = count(0, 60_000, "Milliseconds waited.")


EVENTS = dict(PACKAGE_EVENTS)
EVENT_VERSIONS = version_registry(EVENTS.values(), retired=(CacheLookupV1,))
'''


def test_a_broken_registry_is_reported_at_the_retired_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "orphan_models.py"
    source.write_text(textwrap.dedent(ORPHAN_MODELS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "orphan_models", raising=False)
    report = run_check(REPO / "telemetry.toml", models_module="orphan_models", views=False)
    (finding,) = report.errors
    assert (finding.rule, finding.event) == ("VERSION_RETIRED_EVENT", "CacheLookupV1")
    assert finding.file is not None
    assert finding.file.endswith("orphan_models.py")
    lines = source.read_text(encoding="utf-8").splitlines()
    assert lines[(finding.line or 0) - 1].startswith("class CacheLookupV1(")
    assert "::error file=" in render(report, "github")
