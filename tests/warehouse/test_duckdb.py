"""The generated BigQuery SQL, transpiled by sqlglot, runs on DuckDB with the same meaning.

This is how the local warehouse runs the views; here it pins what the SQL does with bad
input: out-of-set and out-of-bound values become NULL and are counted in telemetry_quality,
a FLOAT or STRING column (a sink that made its own table) still reads, 2.5 is not an int.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import generate_views
from agent_telemetry.views._sink import table_columns
from agent_telemetry.warehouse._duckdb_views.transpile import (
    SHARD_PSEUDO_COLUMN,
    json_type,
    shard_of,
)


def _duckdb_type(bigquery_type: str) -> str:
    expression = sqlglot.parse_one(f"CAST(NULL AS {bigquery_type})", dialect="bigquery")
    return expression.to.sql("duckdb")  # type: ignore[attr-defined]


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    # The views name `acme-agents-prod.agent_logs.<table>`: a catalog and schema here.
    connection.execute("ATTACH ':memory:' AS \"acme-agents-prod\"")
    connection.execute('CREATE SCHEMA "acme-agents-prod".agent_logs')
    yield connection
    connection.close()


def _sink(
    con: duckdb.DuckDBPyConnection,
    layout: Layout,
    table: str,
    overrides: dict[str, str] | None = None,
) -> None:
    columns = table_columns(layout)
    if overrides:
        payload = columns["jsonPayload"]
        for key, kind in overrides.items():
            payload = payload.replace(f" {key} INT64", f" {key} {kind}")
        columns["jsonPayload"] = payload
    body = ", ".join(f'"{name}" {_duckdb_type(kind)}' for name, kind in columns.items())
    con.execute(f'CREATE TABLE "acme-agents-prod".agent_logs."{table}" ({body})')


def _table_suffix(node: exp.Expr) -> exp.Expr:
    # A sharded sink's `_TABLE_SUFFIX` as the warehouse reads it: the local sink is one
    # table, and the shard of a row is the UTC day of its timestamp.
    if isinstance(node, exp.Column) and node.name.lower() == SHARD_PSEUDO_COLUMN:
        return shard_of(node.table)
    return node


def _create_views(
    con: duckdb.DuckDBPyConnection,
    config: DeploymentConfig,
    layout: Layout,
    specs: tuple[EventSpec, ...] | None = None,
) -> None:
    # The views of the sink; lane_health reads them by their target path, which only the
    # warehouse rewrites (tests/warehouse/test_lane_health.py runs it there).
    for view in (v for v in generate_views(config, layout, specs) if not v.reads):
        # sqlglot, plus the warehouse's JSON_TYPE translation (DuckDB names its own types)
        # and its `_TABLE_SUFFIX` (the shard's day)
        tree = sqlglot.parse_one(view.query, read="bigquery").transform(json_type)
        tree = tree.transform(_table_suffix)
        con.execute(f"CREATE VIEW {view.name} AS {tree.sql(dialect='duckdb')}")


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[str, str]]) -> None:
    for timestamp, payload in rows:
        con.execute(
            f'INSERT INTO "acme-agents-prod".agent_logs."{table}" (timestamp, jsonPayload) '
            f"VALUES (TIMESTAMP '{timestamp}', {payload})"
        )


RUN_OK = (
    "{'event': 'pipeline_run', 'schema_version': 1, 'lane': 'public', 'status': 'ok', "
    "'queue_wait_ms': 12, 'attempts': 2, 'invalid_fields': ['reason'], 'unknown_fields': 1}"
)
RUN_BAD = (
    "{'event': 'pipeline_run', 'schema_version': 1, 'lane': 'vip', 'status': 'failed', "
    "'attempts': 5, 'queue_position': -1}"
)
RUN_V2 = "{'event': 'pipeline_run', 'schema_version': 2, 'lane': 'public', 'status': 'ok'}"
RENDER = "{'event': 'pipeline_render', 'schema_version': 1, 'theme': 'dark', 'passed': true}"


@pytest.mark.parametrize("layout", ["partitioned", "sharded"])
def test_views_run_on_a_pinned_sink(
    con: duckdb.DuckDBPyConnection, config: DeploymentConfig, layout: Layout
) -> None:
    table = config.source.table_for(layout)
    _sink(con, layout, table)
    _create_views(con, config, layout)
    _insert(
        con,
        table,
        [
            ("2026-03-01 10:00:00", RUN_OK),
            ("2026-03-01 11:00:00", RUN_BAD),
            ("2026-03-01 12:00:00", RUN_V2),
            ("2026-03-01 12:00:00", RENDER),
        ],
    )
    runs = _rows(con, "SELECT * FROM pipeline_run ORDER BY timestamp")
    assert [(r["lane"], r["status"], r["attempts"], r["queue_position"]) for r in runs] == [
        ("public", "ok", 2, None),
        (None, "failed", None, None),
    ]
    assert runs[0]["queue_wait_ms"] == 12
    assert runs[0]["schema_version"] == 1
    if layout == "sharded":
        assert [r["table_suffix"] for r in runs] == ["20260301", "20260301"]
    assert runs[0]["invalid_fields"] == ["reason"]
    assert runs[1]["invalid_fields"] == []
    renders = _rows(con, "SELECT theme, passed, attempt FROM pipeline_render")
    assert renders == [{"theme": "dark", "passed": True, "attempt": None}]
    quality = {
        r["field"]: r
        for r in _rows(con, "SELECT * FROM telemetry_quality WHERE event = 'pipeline_run'")
    }
    assert {r["lines"] for r in quality.values()} == {2}
    assert {r["lines_with_invalid_fields"] for r in quality.values()} == {1}
    assert {r["lines_with_unknown_fields"] for r in quality.values()} == {1}
    assert {
        f: r["out_of_domain_values"] for f, r in quality.items() if r["out_of_domain_values"]
    } == {
        "lane": 1,
        "attempts": 1,
        "queue_position": 1,
    }
    assert {f: r["invalid_values"] for f, r in quality.items() if r["invalid_values"]} == {
        "reason": 1
    }
    assert str(next(iter(quality.values()))["day"]) == "2026-03-01"


def test_views_survive_a_sink_that_typed_numbers_as_float_and_strings(
    con: duckdb.DuckDBPyConnection, config: DeploymentConfig
) -> None:
    # A sink that created its own table: JSON numbers became FLOAT64, and `attempts`,
    # once logged as a string, became a STRING column.
    table = config.source.table_for("partitioned")
    _sink(
        con,
        "partitioned",
        table,
        {"queue_wait_ms": "FLOAT64", "duration_ms": "FLOAT64", "attempts": "STRING"},
    )
    _create_views(con, config, "partitioned")
    base = "'event': 'pipeline_run', 'schema_version': 1, 'lane': 'admin', 'status': 'ok'"
    _insert(
        con,
        table,
        [
            ("2026-03-02 10:00:00", f"{{{base}, 'queue_wait_ms': 12.0, 'attempts': '2'}}"),
            ("2026-03-02 11:00:00", f"{{{base}, 'queue_wait_ms': 12.5, 'attempts': 'two'}}"),
            ("2026-03-02 12:00:00", f"{{{base}, 'duration_ms': 4e9, 'attempts': '1.5'}}"),
        ],
    )
    runs = _rows(
        con, "SELECT queue_wait_ms, attempts, duration_ms FROM pipeline_run ORDER BY timestamp"
    )
    assert runs == [
        {"queue_wait_ms": 12, "attempts": 2, "duration_ms": None},
        {"queue_wait_ms": None, "attempts": None, "duration_ms": None},
        {"queue_wait_ms": None, "attempts": None, "duration_ms": None},
    ]
    quality = {
        r["field"]: r["out_of_domain_values"]
        for r in _rows(con, "SELECT * FROM telemetry_quality WHERE event = 'pipeline_run'")
    }
    # 12.5, 'two' and '1.5' are not read in their type (the judgement refuses them): absent,
    # not out of domain; 4e9 is an integer past the bound.
    assert (quality["queue_wait_ms"], quality["attempts"], quality["duration_ms"]) == (0, 0, 1)


def test_analytics_views_read_the_json_payload(
    con: duckdb.DuckDBPyConnection, config: DeploymentConfig
) -> None:
    _sink(con, "analytics", "_AllLogs")
    _create_views(con, config, "analytics")
    lines = [
        (
            "run.googleapis.com/stdout",
            '{"event": "pipeline_render", "schema_version": 1, '
            '"theme": "dark", "render_lane": "run", "passed": true, "attempt": 2.0, '
            '"render_ms": 2.5, "invalid_fields": ["slot_wait_ms"]}',
        ),
        (
            "run.googleapis.com/stdout",
            '{"event": "pipeline_render", "schema_version": 1, '
            '"theme": "sepia", "render_lane": "toggle", "passed": "maybe", "attempt": 3}',
        ),
        (
            "run.googleapis.com/stderr",
            '{"event": "pipeline_render", "schema_version": 1, '
            '"theme": "light", "render_lane": "run"}',
        ),
    ]
    for log_id, payload in lines:
        con.execute(
            'INSERT INTO "acme-agents-prod".agent_logs."_AllLogs" '
            "(timestamp, log_id, json_payload) VALUES (TIMESTAMP '2026-03-03 10:00:00', ?, ?)",
            [log_id, payload],
        )
    renders = _rows(
        con,
        "SELECT theme, render_lane, passed, attempt, render_ms, invalid_fields "
        "FROM pipeline_render ORDER BY render_lane",
    )
    assert renders == [
        {
            "theme": "dark",
            "render_lane": "run",
            "passed": True,
            "attempt": 2,
            "render_ms": None,
            "invalid_fields": ["slot_wait_ms"],
        },
        {
            "theme": None,
            "render_lane": "toggle",
            "passed": None,
            "attempt": None,
            "render_ms": None,
            "invalid_fields": [],
        },
    ]
    quality = {
        r["field"]: r
        for r in _rows(con, "SELECT * FROM telemetry_quality WHERE event = 'pipeline_render'")
    }
    assert quality["theme"]["lines"] == 2
    assert {
        f: r["out_of_domain_values"] for f, r in quality.items() if r["out_of_domain_values"]
    } == {  # "maybe" and 2.5 are not read in their type (refused): absent, not out of domain
        "theme": 1,
        "attempt": 1,
    }
    assert quality["slot_wait_ms"]["invalid_values"] == 1
