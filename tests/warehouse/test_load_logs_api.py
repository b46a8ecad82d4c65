"""``load_logs`` called directly (the Python API under ``Warehouse.load``): which table
it fills, that it replaces by default and appends when asked, that a given sink schema
is the one used, and the error when DuckDB refuses the rows."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from agent_telemetry.views import TableField
from agent_telemetry.warehouse import LoadError
from agent_telemetry.warehouse._loading.load import (
    SINK_TABLE,
    create_sink,
    default_sink_fields,
    load_logs,
)
from tests.warehouse.lines import line, write_lines

PAYLOAD = "jsonPayload"


def _file(tmp_path: Path, name: str, *lanes: str) -> Path:
    lines = [line("pipeline_run", lane=lane, status="ok") for lane in lanes]
    return write_lines(tmp_path / name, lines)


def _lanes(con: duckdb.DuckDBPyConnection, table: str = SINK_TABLE) -> list[str]:
    rows = con.execute(f"SELECT {PAYLOAD}.lane FROM {table} ORDER BY 1").fetchall()
    return [lane for (lane,) in rows]


def _without_lane() -> tuple[TableField, ...]:
    """The models' sink schema with the payload's ``lane`` field left out."""
    fields = []
    for field in default_sink_fields():
        if field.name == PAYLOAD:
            field = replace(field, fields=tuple(f for f in field.fields if f.name != "lane"))
        fields.append(field)
    return tuple(fields)


def _status_as_integer() -> tuple[TableField, ...]:
    """The models' sink schema with the payload's ``status`` typed INTEGER (a sink whose
    column type drifted)."""
    fields = []
    for field in default_sink_fields():
        if field.name == PAYLOAD:
            field = replace(
                field,
                fields=tuple(
                    replace(f, type="INTEGER") if f.name == "status" else f for f in field.fields
                ),
            )
        fields.append(field)
    return tuple(fields)


def test_an_append_judges_values_by_the_schema_given(tmp_path: Path) -> None:
    # "ok" is no INTEGER: the given schema's judgement keeps the line with status NULL.
    con = duckdb.connect()
    schema = _status_as_integer()
    create_sink(con, schema=schema)
    report = load_logs(con, [_file(tmp_path, "a.jsonl", "public")], schema=schema, replace=False)
    assert report.loaded == 1
    rows = con.execute(f"SELECT {PAYLOAD}.lane, {PAYLOAD}.status FROM {SINK_TABLE}").fetchall()
    assert rows == [("public", None)]


def test_a_load_replaces_the_sink_table_by_default(tmp_path: Path) -> None:
    con = duckdb.connect()
    load_logs(con, [_file(tmp_path, "a.jsonl", "public")])
    load_logs(con, [_file(tmp_path, "b.jsonl", "admin")])
    assert _lanes(con) == ["admin"]


def test_a_load_that_does_not_replace_appends_to_the_table(tmp_path: Path) -> None:
    con = duckdb.connect()
    load_logs(con, [_file(tmp_path, "a.jsonl", "public")])
    report = load_logs(con, [_file(tmp_path, "b.jsonl", "admin", "premium")], replace=False)
    assert report.loaded == 2
    assert _lanes(con) == ["admin", "premium", "public"]


def test_the_named_table_is_the_one_filled(tmp_path: Path) -> None:
    con = duckdb.connect()
    report = load_logs(con, [_file(tmp_path, "a.jsonl", "public")], table="mornings")
    assert report.table == "mornings"
    assert _lanes(con, "mornings") == ["public"]
    tables = {name for (name,) in con.execute("SHOW TABLES").fetchall()}
    assert tables == {"mornings"}


@pytest.mark.parametrize("append", [False, True])
def test_a_given_sink_schema_is_the_one_loaded_into(tmp_path: Path, append: bool) -> None:
    # A sink exported before `lane` existed: the table has no such column, and the rows
    # must fit it (appending included), not the models' current schema.
    con = duckdb.connect()
    schema = _without_lane()
    create_sink(con, schema=schema)
    path = _file(tmp_path, "a.jsonl", "public")
    report = load_logs(con, [path], schema=schema, replace=not append)
    assert report.loaded == 1
    ((record,),) = con.execute(f"SELECT {PAYLOAD} FROM {SINK_TABLE}").fetchall()
    assert "lane" not in record
    assert record["event"] == "pipeline_run"


def test_create_sink_makes_the_table_of_the_schema_given(tmp_path: Path) -> None:
    con = duckdb.connect()
    create_sink(con, schema=_without_lane())
    ((kind,),) = con.execute(
        "SELECT data_type FROM information_schema.columns"
        f" WHERE table_name = '{SINK_TABLE}' AND column_name = '{PAYLOAD}'"
    ).fetchall()
    assert " lane VARCHAR" not in kind  # (render_lane stays)
    assert " status VARCHAR" in kind


def test_rows_duckdb_refuses_name_the_file_and_the_error_class_only(tmp_path: Path) -> None:
    # Appending into a table someone made with other columns: the judged rows do not
    # fit. The message names the file and DuckDB's error class, never a value.
    con = duckdb.connect()
    con.execute(f"CREATE TABLE {SINK_TABLE} (x INTEGER)")
    path = _file(tmp_path, "a.jsonl", "premium")
    with pytest.raises(LoadError) as raised:
        load_logs(con, [path], replace=False)
    message = str(raised.value)
    assert message.startswith(f"{path}: DuckDB refused the rows (")
    assert message.endswith("Exception)")
    assert "premium" not in message


class _Watch:
    """A progress listener that also looks at the table and the spool's folder whenever
    a file starts (the load has set everything up by then)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, spool_root: Path | None = None) -> None:
        self.con, self.spool_root = con, spool_root
        self.updates: list[int] = []
        self.oids: list[int] = []
        self.folders: list[list[str]] = []

    def start_file(self, label: str, size: int) -> None:
        ((oid,),) = self.con.execute(
            f"SELECT table_oid FROM duckdb_tables() WHERE table_name = '{SINK_TABLE}'"
        ).fetchall()
        self.oids.append(oid)
        if self.spool_root is not None:
            self.folders.append(sorted(p.name for p in self.spool_root.iterdir()))

    def update(self, done: int) -> None:
        self.updates.append(done)

    def finish_file(self) -> None:
        pass


def test_files_holding_sql_from_bytes_are_read_whole_by_duckdb(tmp_path: Path) -> None:
    # DuckDB reads the whole file at once: the bar jumps to its size. Below the
    # threshold Python reads it, and moves the bar every 8192 records (none in 2).
    path = _file(tmp_path, "a.jsonl", "public", "admin")
    size = path.stat().st_size
    for sql_from, updates in ((size, [size]), (size + 1, [])):
        con = duckdb.connect()
        watch = _Watch(con)
        assert load_logs(con, [path], sql_from=sql_from, progress=watch).loaded == 2
        assert watch.updates == updates
        assert _lanes(con) == ["admin", "public"]


def test_into_a_table_the_load_creates_the_first_files_rows_become_the_table(
    tmp_path: Path,
) -> None:
    # Not copied (a million rows cost 8% of the load to copy): the staging table takes
    # the empty table's place. Appending copies into the table, which stays.
    paths = [_file(tmp_path, "a.jsonl", "public"), _file(tmp_path, "b.jsonl", "admin")]
    con = duckdb.connect()
    watch = _Watch(con)
    load_logs(con, paths, progress=watch)
    ((after,),) = con.execute(
        f"SELECT table_oid FROM duckdb_tables() WHERE table_name = '{SINK_TABLE}'"
    ).fetchall()
    assert watch.oids[0] != watch.oids[1] == after
    assert _lanes(con) == ["admin", "public"]
    watch = _Watch(con)
    load_logs(con, [_file(tmp_path, "c.jsonl", "premium")], replace=False, progress=watch)
    assert watch.oids == [after]
    assert _lanes(con) == ["admin", "premium", "public"]


@pytest.mark.parametrize("refused", [False, True], ids=["loaded", "refused"])
def test_the_spool_is_a_named_temporary_folder_gone_after_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: bool
) -> None:
    # The judged rows wait in a spool file under TMPDIR: its folder names the tool (a
    # load killed midway leaves it behind), and a load removes it, refused or not.
    spool_root = tmp_path / "tmp"
    spool_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool_root))
    con = duckdb.connect()
    if refused:
        con.execute(f"CREATE TABLE {SINK_TABLE} (x INTEGER)")
    watch = _Watch(con, spool_root)
    path = _file(tmp_path, "a.jsonl", "public")
    if refused:
        with pytest.raises(LoadError):
            load_logs(con, [path], replace=False, progress=watch)
    else:
        load_logs(con, [path], progress=watch)
    ((folder,),) = watch.folders
    assert folder.startswith("agent-telemetry-")
    assert list(spool_root.iterdir()) == []
