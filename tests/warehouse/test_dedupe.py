"""A log entry delivered twice is one row: the generated views, transpiled, on DuckDB.

Exports are not de-duplicated (Cloud Logging: LogEntry.insertId), so the views keep one
row per insertId + timestamp. Here the sink tables are built straight in SQL with the
duplicates in them, for every layout, and the same views run with dedupe on and off,
transpiled by the warehouse's own ``duckdb_query`` (plain sqlglot would leave BigQuery's
``JSON_TYPE`` naming DuckDB's types, and the JSON layout would read no string at all).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout, parse_config
from agent_telemetry.views import (
    INSERT_ID_COLUMN,
    PAYLOAD_COLUMN,
    QUALITY_VIEW,
    ViewDefinition,
    generate_views,
    payload_fields,
)
from agent_telemetry.views._sink import table_columns
from agent_telemetry.warehouse import SINK_TABLE, Warehouse, duckdb_query
from tests.warehouse.lines import line, write_lines

PROJECT = "acme-agents-prod"


def deployment(dedupe: bool) -> DeploymentConfig:
    return parse_config(
        {
            "source": {"project": PROJECT, "dataset": "agent_logs", "dedupe": dedupe},
            "target": {"project": PROJECT, "dataset": "agent_telemetry"},
        }
    )


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    yield connection
    connection.close()


def _duckdb_type(bigquery_type: str) -> str:
    cast = sqlglot.parse_one(f"CAST(NULL AS {bigquery_type})", dialect="bigquery")
    assert isinstance(cast, exp.Cast)
    return cast.to.sql("duckdb")


def _local_name(layout: Layout) -> str:
    return f"sink_{layout}"


def _table(layout: Layout) -> str:
    return f'"{_local_name(layout)}"'


def _sink(con: duckdb.DuckDBPyConnection, layout: Layout) -> None:
    columns = table_columns(layout)
    body = ", ".join(f'"{name}" {_duckdb_type(kind)}' for name, kind in columns.items())
    con.execute(f"CREATE TABLE {_table(layout)} ({body})")


def _insert(
    con: duckdb.DuckDBPyConnection,
    layout: Layout,
    rows: list[tuple[str | None, str, dict[str, Any]]],
) -> None:
    """(insert id, timestamp, payload) rows, as the layout's sink holds them."""
    insert_id = INSERT_ID_COLUMN[layout]
    for entry_id, timestamp, payload in rows:
        record = {"event": "pipeline_run", "schema_version": 1, **payload}
        if layout == "analytics":
            con.execute(
                f"INSERT INTO {_table(layout)} (timestamp, log_id, {insert_id}, json_payload) "
                "VALUES (?::TIMESTAMPTZ, 'run.googleapis.com/stdout', ?, ?)",
                [timestamp, entry_id, json.dumps(record)],
            )
        else:
            struct = "{" + ", ".join(f"'{k}': {v!r}" for k, v in record.items()) + "}"
            con.execute(
                f'INSERT INTO {_table(layout)} (timestamp, "{insert_id}", jsonPayload) '
                f"VALUES (?::TIMESTAMPTZ, ?, {struct})",
                [timestamp, entry_id],
            )


def _views(config: DeploymentConfig, layout: Layout) -> tuple[ViewDefinition, ...]:
    # The event view these tests read and telemetry_quality: enough, and half the time.
    views = generate_views(config, layout)
    return tuple(v for v in views if v.name in ("pipeline_run", QUALITY_VIEW))


def _create_views(
    con: duckdb.DuckDBPyConnection, views: tuple[ViewDefinition, ...], layout: Layout
) -> None:
    """The views on the layout's sink table here, transpiled as the warehouse does."""
    source = deployment(True).source
    for view in views:
        sql = duckdb_query(
            view,
            (source.project, source.dataset, source.table_for(layout)),
            sink_table=_local_name(layout),
            payload_column=PAYLOAD_COLUMN[layout],
            payload_fields=[field.name for field in payload_fields()],
        )
        con.execute(f"CREATE OR REPLACE VIEW {view.name} AS {sql}")


# One entry delivered twice, another entry with the same insert id a second later (not a
# copy), and two lines without an insert id that are alike in every column.
DAY = "2026-05-09"
ROWS: list[tuple[str | None, str, dict[str, Any]]] = [
    ("e1", f"{DAY} 10:00:00", {"lane": "public", "status": "ok", "attempts": 1}),
    ("e1", f"{DAY} 10:00:00", {"lane": "public", "status": "ok", "attempts": 1}),
    ("e1", f"{DAY} 10:00:01", {"lane": "admin", "status": "ok", "attempts": 1}),
    (None, f"{DAY} 11:00:00", {"lane": "premium", "status": "ok", "attempts": 9}),
    (None, f"{DAY} 11:00:00", {"lane": "premium", "status": "ok", "attempts": 9}),
]


def _lanes(con: duckdb.DuckDBPyConnection) -> list[str]:
    return sorted(lane for (lane,) in con.execute("SELECT lane FROM pipeline_run").fetchall())


def _quality(con: duckdb.DuckDBPyConnection) -> set[tuple[Any, ...]]:
    return set(
        con.execute(
            f"SELECT CAST(day AS VARCHAR), lines, duplicate_entries, out_of_domain_values "
            f"FROM {QUALITY_VIEW} WHERE event = 'pipeline_run' AND field = 'attempts'"
        ).fetchall()
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_entry_delivered_twice_is_one_row_and_one_duplicate(
    con: duckdb.DuckDBPyConnection, layout: Layout
) -> None:
    _sink(con, layout)
    _insert(con, layout, ROWS)
    _create_views(con, _views(deployment(True), layout), layout)

    # e1 once; e1 a second later stays; both lines without an insert id stay.
    assert _lanes(con) == ["admin", "premium", "premium", "public"]
    # Four entries, one extra copy; the copy is not counted again (attempts 9 is out of
    # bounds twice: the two lines without an insert id are two lines).
    assert _quality(con) == {(DAY, 4, 1, 2)}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_with_dedupe_off_every_row_is_kept_and_duplicates_are_not_counted(
    con: duckdb.DuckDBPyConnection, layout: Layout
) -> None:
    _sink(con, layout)
    _insert(con, layout, ROWS)
    _create_views(con, _views(deployment(False), layout), layout)

    assert _lanes(con) == ["admin", "premium", "premium", "public", "public"]
    assert _quality(con) == {(DAY, 5, None, 2)}


def test_without_duplicates_dedupe_on_and_off_give_the_same_rows(
    con: duckdb.DuckDBPyConnection,
) -> None:
    _sink(con, "partitioned")
    _insert(con, "partitioned", [ROWS[0], *ROWS[2:]])
    results = []
    for dedupe in (True, False):
        _create_views(con, _views(deployment(dedupe), "partitioned"), "partitioned")
        results.append(
            (
                con.execute("SELECT * FROM pipeline_run ORDER BY ALL").fetchall(),
                con.execute(
                    "SELECT * EXCLUDE (duplicate_entries, conflicting_duplicates) "
                    f"FROM {QUALITY_VIEW} ORDER BY ALL"
                ).fetchall(),
            )
        )
    assert results[0] == results[1]
    assert len(results[0][0]) == 4


def _plan(con: duckdb.DuckDBPyConnection, query: str) -> list[dict[str, Any]]:
    ((_, plan),) = con.execute(f"EXPLAIN (FORMAT JSON) {query}").fetchall()
    nodes: list[dict[str, Any]] = json.loads(plan)
    return nodes


def _filtered_on_timestamp(node: dict[str, Any]) -> bool:
    info = node.get("extra_info", {})
    text = " ".join(str(info.get(key, "")) for key in ("Filters", "Expression"))
    return "timestamp >=" in text


def _window_sees_filtered_rows(nodes: list[dict[str, Any]]) -> bool:
    """Whether the timestamp filter is applied below the dedupe window (at the scan)."""
    for node in nodes:
        if node["name"] == "WINDOW":
            below = list(node["children"])
            while below:
                child = below.pop()
                if _filtered_on_timestamp(child):
                    return True
                below.extend(child["children"])
            return False
        if _window_sees_filtered_rows(node.get("children", [])):
            return True
    return False


def _create_local_view(wh: Warehouse, view: ViewDefinition) -> None:
    """``view`` on the local sink, transpiled the way ``Warehouse.create_views`` does."""
    source = wh.config.source
    sql = duckdb_query(
        view,
        (source.project, source.dataset, source.table_for("partitioned")),
        sink_table=wh.table,
        payload_column="jsonPayload",
        payload_fields=wh.sink.payload,
    )
    wh.rows(f"CREATE OR REPLACE VIEW {view.name} AS {sql}")


def test_a_timestamp_filter_on_the_view_is_applied_below_the_dedupe_window(
    wh: Warehouse, tmp_path: Path
) -> None:
    # An engine may apply a filter below a window only when the filter's columns are in the
    # window's PARTITION BY (it keeps or drops whole windows then): with timestamp in the
    # key, an analyst's `WHERE timestamp >= ...` on the view reaches the scan, which is
    # what prunes partitions in BigQuery. DuckDB shows it in its plan; without timestamp
    # in the key, the filter stays above the window and every row is read and numbered.
    times = [f"2026-05-{day:02d}T10:00:00.000000Z" for day in (8, 9, 12)]
    path = write_lines(
        tmp_path / "days.jsonl",
        [
            line(event, time=t, lane="admin")
            for t in times
            for event in ("pipeline_run", "chat_turn")
        ],
    )
    wh.load([path])
    # Some rows with an insert id, some without: neither test folds away.
    wh.rows(
        f"UPDATE \"{SINK_TABLE}\" SET insertId = 'id-' || CAST(timestamp AS VARCHAR) "
        "WHERE jsonPayload.event = 'pipeline_run' AND day(timestamp) <> 12"
    )
    query = "SELECT count(*) FROM pipeline_run WHERE timestamp >= TIMESTAMPTZ '2026-05-09'"
    view = next(v for v in wh.views() if v.name == "pipeline_run")
    _create_local_view(wh, view)
    assert _window_sees_filtered_rows(_plan(wh.con, query))
    assert wh.rows(query) == [(2,)]

    key = "PARTITION BY sink.insertId, sink.timestamp"
    assert key in view.query
    by_id_only = view.query.replace(key, "PARTITION BY sink.insertId")
    _create_local_view(wh, dataclasses.replace(view, query=by_id_only))
    assert not _window_sees_filtered_rows(_plan(wh.con, query))
    assert wh.rows(query) == [(2,)]


def test_the_local_warehouse_never_merges_lines_without_an_insert_id(
    wh: Warehouse, tmp_path: Path
) -> None:
    # The emitter's lines carry no insert id (Cloud Logging gives one): two files holding
    # the same line are two of everything, as before. (The same file named twice is read
    # once: tests/warehouse/test_inputs_named_twice.py.)
    lines = [line("pipeline_run", lane="public", status="ok")]
    wh.load([write_lines(tmp_path / "out.jsonl", lines), write_lines(tmp_path / "b.jsonl", lines)])
    wh.create_views()
    assert wh.rows("SELECT lane FROM pipeline_run") == [("public",), ("public",)]
    assert wh.rows(
        f"SELECT DISTINCT lines, duplicate_entries FROM {QUALITY_VIEW} WHERE event = 'pipeline_run'"
    ) == [(2, 0)]

    # Once the sink table holds the LogEntry's insert id, the two copies are one entry.
    wh.rows(f"UPDATE \"{SINK_TABLE}\" SET insertId = 'entry-1'")
    assert wh.rows("SELECT lane FROM pipeline_run") == [("public",)]
    assert wh.rows(
        f"SELECT DISTINCT lines, duplicate_entries FROM {QUALITY_VIEW} WHERE event = 'pipeline_run'"
    ) == [(1, 1)]
