"""A load whose process dies part-way leaves the user's database file holding its
tables and the files loaded before, and nothing of the load's own: its staging table
is temporary once the first file is stored (or from the start, appending), so it never
reaches the file.

The process is killed for real (``os._exit`` from the progress hook, no clean-up runs),
then the file is reopened as the user would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from agent_telemetry.warehouse._loading.fast import SQL_FROM
from agent_telemetry.warehouse._loading.load import SINK_TABLE, load_logs
from tests.warehouse.lines import line, write_lines

REPO = Path(__file__).resolve().parents[2]

# Loads the files into the database file and dies (exit 17) as the file numbered
# ``kill_at`` starts: the progress hook runs inside the load.
_KILLED_LOAD = textwrap.dedent(
    """
    import os, sys
    import duckdb
    from agent_telemetry.warehouse._loading.load import load_logs

    database, replace, kill_at, sql_from, *files = sys.argv[1:]

    class Killer:
        started = 0

        def start_file(self, label, size):
            self.started += 1
            if self.started == int(kill_at):
                os._exit(17)

        def update(self, done):
            pass

        def finish_file(self):
            pass

    con = duckdb.connect(database)
    load_logs(
        con, files, progress=Killer(), replace=replace == "replace", sql_from=int(sql_from)
    )
    sys.exit(0)
    """
)


def _files(tmp_path: Path, lanes: list[str]) -> list[Path]:
    return [
        write_lines(tmp_path / f"{lane}.jsonl", [line("pipeline_run", lane=lane, status="ok")])
        for lane in lanes
    ]


def _kill_load(
    database: Path, files: list[Path], *, replace: bool, kill_at: int, sql_from: int = SQL_FROM
) -> None:
    mode = "replace" if replace else "append"
    arguments = [str(database), mode, str(kill_at), str(sql_from), *map(str, files)]
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_LOAD, *arguments],
        cwd=REPO,
        # The environment passes on: under mutmut it names the mutant the child runs.
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 17, done.stderr  # killed where asked, not failed earlier


def _after(database: Path) -> tuple[list[str], list[str]]:
    """The tables the reopened file holds (every schema), and the sink's lanes."""
    with duckdb.connect(str(database)) as con:
        tables = con.execute(
            "SELECT schema_name || '.' || table_name FROM duckdb_tables() ORDER BY 1"
        ).fetchall()
        lanes = con.execute(f"SELECT jsonPayload.lane FROM {SINK_TABLE} ORDER BY 1").fetchall()
    return [name for (name,) in tables], [lane for (lane,) in lanes]


def _database(tmp_path: Path) -> Path:
    """A database file holding an earlier load and a table of the user's own."""
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as con:
        load_logs(con, _files(tmp_path, ["earlier"]))
        con.execute("CREATE TABLE notes (said VARCHAR)")
    return database


@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_a_fresh_load_killed_after_its_first_file_leaves_the_users_tables(
    tmp_path: Path, kill_at: int
) -> None:
    database = _database(tmp_path)
    files = _files(tmp_path, ["admin", "batch", "public"])
    _kill_load(database, files, replace=True, kill_at=kill_at)
    tables, lanes = _after(database)
    assert tables == ["main.notes", f"main.{SINK_TABLE}"]
    assert lanes == ["admin", "batch"][: kill_at - 1]


@pytest.mark.parametrize("kill_at", [1, 2])
def test_an_appending_load_killed_part_way_leaves_the_users_tables_as_they_were(
    tmp_path: Path, kill_at: int
) -> None:
    database = _database(tmp_path)
    files = _files(tmp_path, ["admin", "batch"])
    _kill_load(database, files, replace=False, kill_at=kill_at)
    tables, lanes = _after(database)
    assert tables == ["main.notes", f"main.{SINK_TABLE}"]
    assert lanes == ["admin", "earlier"][2 - kill_at :]


def test_a_fresh_load_killed_after_duckdb_refused_its_first_file_leaves_the_users_tables(
    tmp_path: Path,
) -> None:
    # DuckDB's reader refuses CRLF lines: the file goes to Python, after DuckDB's
    # refusal aborted the statement. The file holds no telemetry, so nothing is stored
    # before the kill.
    database = _database(tmp_path)
    text = tmp_path / "startup.log"
    text.write_bytes(b"starting up\r\nlistening on 8080\r\n" * 50)
    files = [text, *_files(tmp_path, ["admin"])]
    _kill_load(database, files, replace=True, kill_at=2, sql_from=0)
    tables, lanes = _after(database)
    assert tables == ["main.notes", f"main.{SINK_TABLE}"]
    assert lanes == []


def test_a_fresh_load_that_duckdb_reads_in_part_stores_every_file(tmp_path: Path) -> None:
    text = tmp_path / "startup.log"
    text.write_bytes(b"starting up\r\nlistening on 8080\r\n" * 50)
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_text(line("pipeline_run", lane="crlf", status="ok") + "\r\n")
    with duckdb.connect() as con:
        files = [text, crlf, *_files(tmp_path, ["admin"])]
        report = load_logs(con, files, sql_from=0)
        rows = con.execute(f"SELECT jsonPayload.lane FROM {SINK_TABLE} ORDER BY 1").fetchall()
        tables = con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    assert (report.loaded, rows) == (2, [("admin",), ("crlf",)])
    assert tables == [(SINK_TABLE,)]


def test_a_load_inside_the_callers_transaction_is_undone_with_it(tmp_path: Path) -> None:
    # The caller's transaction is theirs: the load neither commits it nor breaks it.
    with duckdb.connect() as con:
        load_logs(con, _files(tmp_path, ["earlier"]))
        con.begin()
        report = load_logs(con, _files(tmp_path, ["admin", "batch"]))
        assert report.loaded == 2
        con.rollback()
        rows = con.execute(f"SELECT jsonPayload.lane FROM {SINK_TABLE}").fetchall()
        tables = con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    assert (rows, tables) == ([("earlier",)], [(SINK_TABLE,)])


class _Interrupt:
    """A progress listener whose user presses Ctrl-C as the first file starts."""

    def start_file(self, label: str, size: int) -> None:
        raise KeyboardInterrupt

    def update(self, done: int) -> None:
        pass

    def finish_file(self) -> None:
        pass


def test_a_fresh_load_interrupted_leaves_the_connection_to_the_caller(tmp_path: Path) -> None:
    # Stopped before any file was stored: the load's own transaction is rolled back,
    # so the caller can start theirs, and only their tables and the empty sink remain.
    with duckdb.connect() as con:
        con.execute("CREATE TABLE notes (said VARCHAR)")
        with pytest.raises(KeyboardInterrupt):
            load_logs(con, _files(tmp_path, ["admin"]), progress=_Interrupt())
        con.begin()
        con.execute("INSERT INTO notes VALUES ('still here')")
        con.commit()
        tables = con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
        ((rows,),) = con.execute(f"SELECT count(*) FROM {SINK_TABLE}").fetchall()
    assert (tables, rows) == ([("notes",), (SINK_TABLE,)], 0)


@pytest.mark.parametrize("name", ["None", "null"])
def test_a_fresh_load_keeps_the_users_tables_whatever_their_names(
    tmp_path: Path, name: str
) -> None:
    # The sink table is set aside under a name of the load's own while the first file's
    # rows take its place: never under a name a user's table may have.
    with duckdb.connect() as con:
        con.execute(f'CREATE TABLE "{name}" AS SELECT 42 AS kept')
        load_logs(con, _files(tmp_path, ["admin"]))
        rows = con.execute(f'SELECT kept FROM "{name}"').fetchall()
        lanes = con.execute(f"SELECT jsonPayload.lane FROM {SINK_TABLE}").fetchall()
    assert (rows, lanes) == ([(42,)], [("admin",)])
