"""The generated BigQuery views, transpiled by sqlglot, run on the local sink table."""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.schema import catalogue
from agent_telemetry.views import LANE_VIEW, QUALITY_VIEW
from agent_telemetry.warehouse import (
    SINK_TABLE,
    TranspileError,
    Warehouse,
    duckdb_query,
)
from tests.warehouse.lines import line, write_lines

SOURCE = ("acme-agents-prod", "agent_logs", "run_googleapis_com_stdout")


def _duckdb_sql(wh: Warehouse, name: str) -> str:
    view = next(v for v in wh.views() if v.name == name)
    return duckdb_query(
        view,
        SOURCE,
        sink_table=SINK_TABLE,
        payload_column="jsonPayload",
        payload_fields=wh.sink.payload,
    )


@pytest.fixture
def acme() -> Warehouse:
    from agent_telemetry.config import load_config

    return Warehouse(config=load_config("telemetry.toml"))


def test_every_view_reads_only_the_local_sink_table_or_the_local_views(acme: Warehouse) -> None:
    """An event view reads the local sink; a view of views (lane_health) reads the local
    views it names, never a BigQuery path."""
    for view in acme.views():
        local = sqlglot.parse_one(_duckdb_sql(acme, view.name), read="duckdb")
        tables = {(t.catalog, t.db, t.name) for t in local.find_all(exp.Table)}
        ctes = {cte.alias for cte in local.find_all(exp.CTE)}
        expected = {("", "", name) for name in view.reads} or {("", "", SINK_TABLE)}
        assert {t for t in tables if t[2] not in ctes} == expected, view.name
        assert "acme-agents-prod" not in _duckdb_sql(acme, view.name)


def test_the_local_sql_is_generated_from_the_bigquery_sql(acme: Warehouse) -> None:
    view = next(v for v in acme.views() if v.name == "pipeline_run")
    edited = dataclasses.replace(view, query=view.query.replace("'premium'", "'gold'"))
    local = duckdb_query(
        edited,
        SOURCE,
        sink_table=SINK_TABLE,
        payload_column="jsonPayload",
        payload_fields=acme.sink.payload,
    )
    assert "'gold'" in local
    assert "'premium'" not in local


def test_a_view_that_does_not_read_the_sink_is_refused(acme: Warehouse) -> None:
    view = dataclasses.replace(acme.views()[0], query="SELECT 1 AS x FROM `other-project.d.t`")
    with pytest.raises(TranspileError, match="no reference to the sink table"):
        duckdb_query(
            view, SOURCE, sink_table=SINK_TABLE, payload_column="jsonPayload", payload_fields=()
        )


def test_views_are_created_under_their_bigquery_names_with_descriptions(
    wh: Warehouse, tmp_path: Path
) -> None:
    wh.load([write_lines(tmp_path / "empty.jsonl", [])])
    names = wh.create_views()
    assert names == (*(spec.name for spec in catalogue()), QUALITY_VIEW, LANE_VIEW)
    comments = dict(wh.rows("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal"))
    for view in wh.views():
        assert comments[view.name] == view.description
        columns = [r[0] for r in wh.rows(f"SELECT column_name FROM (DESCRIBE {view.name})")]
        assert columns == [c.name for c in view.columns]


def test_values_outside_a_fields_domain_are_null_and_counted(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bad.jsonl",
        [
            line("pipeline_run", lane="gold", status="ok", queue_wait_ms=3_600_001, attempts=1),
            line("pipeline_run", lane="admin", status="ok", queue_wait_ms=1.5),
            line("pipeline_run", lane="admin", status="ok", invalid_fields=["reason"]),
        ],
    )
    wh.load([path])
    wh.create_views()
    rows = wh.rows("SELECT lane, queue_wait_ms, attempts, invalid_fields FROM pipeline_run")
    # 1.5 is no integer: NULL, exactly as check-logs reports it (rule `type`), not rounded.
    assert sorted(rows, key=repr) == sorted(
        [(None, None, 1, []), ("admin", None, None, []), ("admin", None, None, ["reason"])],
        key=repr,
    )
    quality = {
        field: counts
        for day, field, *counts in wh.rows(
            "SELECT day, field, lines, lines_with_invalid_fields, invalid_values, "
            f"out_of_domain_values FROM {QUALITY_VIEW} WHERE event = 'pipeline_run'"
        )
        if day == date(2026, 5, 9)
    }
    assert quality["lane"] == [3, 1, 0, 1]
    assert quality["queue_wait_ms"] == [3, 1, 0, 1]
    assert quality["reason"] == [3, 1, 1, 0]
    assert quality["status"] == [3, 1, 0, 0]


def test_a_line_of_another_schema_version_is_not_in_the_view(wh: Warehouse, tmp_path: Path) -> None:
    newer = line("pipeline_run", lane="admin", status="ok").replace(
        '"schema_version":1', '"schema_version":2'
    )
    wh.load(
        [
            write_lines(
                tmp_path / "v2.jsonl", [newer, line("pipeline_run", lane="public", status="ok")]
            )
        ]
    )
    wh.create_views()
    assert wh.rows("SELECT lane FROM pipeline_run") == [("public",)]


def test_a_domain_check_is_a_comparison_the_optimiser_can_drop(
    wh: Warehouse, tmp_path: Path
) -> None:
    # An IN list of five or more constants is planned as a join, kept even when the
    # column goes unused: every query of the view would pay for every enum's check.
    wh.load([write_lines(tmp_path / "one.jsonl", [line("pipeline_run", lane="admin")])])
    wh.create_views()
    for view in ("pipeline_run", "chat_turn"):
        ((_, plan),) = wh.rows(f"EXPLAIN SELECT count(*) FROM {view}")
        assert "JOIN" not in plan.upper(), view
    assert wh.rows("SELECT count(*) FROM pipeline_run") == [(1,)]
