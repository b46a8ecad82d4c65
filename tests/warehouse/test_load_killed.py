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

    database, replace, kill_at, *files = sys.argv[1:]

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
    load_logs(con, files, progress=Killer(), replace=replace == "replace")
    sys.exit(0)
    """
)


def _files(tmp_path: Path, lanes: list[str]) -> list[Path]:
    return [
        write_lines(tmp_path / f"{lane}.jsonl", [line("pipeline_run", lane=lane, status="ok")])
        for lane in lanes
    ]


def _kill_load(database: Path, files: list[Path], *, replace: bool, kill_at: int) -> None:
    mode = "replace" if replace else "append"
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_LOAD, str(database), mode, str(kill_at), *map(str, files)],
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


@pytest.mark.parametrize("kill_at", [2, 3])
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
