"""Rows DuckDB refuses to store: a sink schema typed so that the judged rows cannot fit
it (a self-made BigQuery sink whose ``insertId`` or ``timestamp`` was guessed INTEGER).

Either path, SQL or Python, the load stops with a ``LoadError`` naming the file and
DuckDB's error class, never a value, and what earlier files loaded stays stored."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from agent_telemetry.views import TableField
from agent_telemetry.warehouse import LoadError
from agent_telemetry.warehouse._loading.load import SINK_TABLE, default_sink_fields, load_logs
from tests.warehouse.lines import entry, line, write_lines

# ``sql_from=0``: DuckDB judges the files; a huge threshold keeps every record in Python.
PATHS = pytest.mark.parametrize("sql_from", [0, 1 << 60], ids=["sql", "python"])


def _typed(column: str, kind: str) -> tuple[TableField, ...]:
    """The models' sink schema with one top-level column typed ``kind``."""
    return tuple(
        replace(field, type=kind) if field.name == column else field
        for field in default_sink_fields()
    )


@PATHS
@pytest.mark.parametrize("column", ["insertId", "timestamp"])
def test_rows_the_sinks_columns_refuse_stop_the_load_naming_the_file_only(
    tmp_path: Path, sql_from: int, column: str
) -> None:
    # The first file holds emitter lines only (no insert id): it fits an INTEGER
    # insertId column. The second file's entries carry one ("e-private-1") and a
    # timestamp; neither is an INTEGER.
    first = write_lines(tmp_path / "07.jsonl", [line("pipeline_run", lane="public")])
    bad = entry("pipeline_run", insert_id="e-private-1", lane="premium", status="ok")
    second = write_lines(tmp_path / "08.jsonl", [json.dumps(bad)] * 3)
    con = duckdb.connect()
    schema = _typed(column, "INTEGER")
    paths = [second] if column == "timestamp" else [first, second]
    with pytest.raises(LoadError) as raised:
        load_logs(con, paths, schema=schema, sql_from=sql_from)
    message = str(raised.value)
    assert message.startswith(f"{second}: DuckDB refused the rows (")
    assert message.endswith("Exception)")
    for value in ("e-private-1", "premium", "2026"):
        assert value not in message
    # Nothing of the refused file was stored; the file before it was.
    stored = con.execute(f"SELECT jsonPayload.lane FROM {SINK_TABLE}").fetchall()
    assert stored == ([] if column == "timestamp" else [("public",)])


@pytest.mark.parametrize(("column", "kind"), [("timestamp", "STRING"), ("timestamp", "DATE")])
def test_envelope_columns_typed_otherwise_store_alike_on_both_paths(
    tmp_path: Path, column: str, kind: str
) -> None:
    # SQL judges the timestamp into TIMESTAMPTZ: cast to a STRING column it read
    # "2026-05-09 07:35:25.123456+00" where Python stores the judged text.
    path = write_lines(
        tmp_path / "a.jsonl",
        [line("pipeline_run", lane="public"), json.dumps(entry("pipeline_run", insert_id="e-1"))],
    )
    stored = {}
    for sql_from in (0, 1 << 60):
        con = duckdb.connect()
        load_logs(con, [path], schema=_typed(column, kind), sql_from=sql_from)
        stored[sql_from] = con.execute(
            f"SELECT {column} FROM {SINK_TABLE} ORDER BY insertId NULLS FIRST"
        ).fetchall()
    assert stored[0] == stored[1 << 60]
