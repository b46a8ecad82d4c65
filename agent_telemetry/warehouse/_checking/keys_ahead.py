"""Entry keys judged ahead, so that only lines whose key another line holds wait.

A LogEntry with an ``insertId`` may have copies in any file, which wait in ``Copies``
until every file is read. When every input is a plain file DuckDB reads exactly and one
starts with such entries, ``prepare`` judges every file first into a table of its lines
with the key of each (SQL's for the lines it decides, Python's for the rest): the keys
more than one line holds go to the ``COPIED`` table, and the check counts each file from
its table (``take``), so each file is read and judged once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb

from agent_telemetry.warehouse._judging.python import insert_id, time_of
from agent_telemetry.warehouse._judging.sql import PYTHON
from agent_telemetry.warehouse._judging.typed import Shape, file_shape
from agent_telemetry.warehouse._loading.fast import head, opened, qualifies
from agent_telemetry.warehouse._reading.records import _record
from agent_telemetry.warehouse._reading.source import Limits, LogInput

KEYS = "_agent_telemetry_keys"  # every entry key of the run's files (``prepare``)
LINES = "_agent_telemetry_lines"  # a file's judged lines (``prepare``), numbered by file
COPIED = "_agent_telemetry_copied"  # the keys held by more than one line
# Without ``prepare``'s keys, LogEntries with insert ids all go to Python (``Copies``):
# for a file that starts with them, the SQL pass would only add its cost. Which path a
# file takes never changes the report.
KEYED = b'"insertId"'


class KeysAhead:
    """The run's entry keys, judged before the check when that pays (``prepare``)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, lines: Mapping[Shape, str]) -> None:
        """``lines``: per file shape, the statement judging each line of a file
        (``CheckedTable.per_line``)."""
        self.con, self._lines = con, lines
        self.keyed = False  # whether the run's keys are known (``prepare``)
        # Files ``prepare`` judged: a file's identity -> the table of its judged lines.
        self._prepared: dict[tuple[int, ...], str] = {}
        self.con.execute(
            f"CREATE TEMP TABLE {COPIED} (copied_id VARCHAR, copied_stamp TIMESTAMPTZ)"
        )

    def prepare(self, paths: Sequence[Path], limits: Limits) -> None:
        """Before the run: when a file starts with LogEntries that carry insert ids and
        DuckDB reads every file exactly, every file is judged first into a table of its
        lines, with the key of each (a copy may be in any file), so that only the lines
        whose key another line shares wait in ``Copies``; otherwise every keyed line
        does. The check then counts from those tables: each file is read and judged
        once. Only regular files are opened here: reading a pipe's first bytes would
        take them from the check."""
        if not all(path.is_file() for path in paths):
            return
        keyed = False
        for path in paths:
            with LogInput(path, limits=limits) as log:
                if not qualifies(log):
                    return
                keyed = keyed or KEYED in head(log)
        if not keyed:
            return
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {KEYS} (id VARCHAR, stamp TIMESTAMPTZ)")
        for number, path in enumerate(paths):
            with LogInput(path, limits=limits) as log:
                if not self._judge_ahead(log, f"{LINES}_{number}"):
                    self.forget()
                    return
        self._copied()

    def _judge_ahead(self, log: LogInput, table: str) -> bool:
        """Judge every line of ``log`` into ``table`` (a line's text only when Python must
        judge it: its place is its row) and record the entry key of every line that is
        one (SQL's for the lines it decides, Python's for the others); False when DuckDB
        cannot read the file exactly (or it changed since ``prepare`` looked)."""
        if not qualifies(log):
            return False
        lines = self._lines[file_shape(head(log))]
        try:
            # In file order (DuckDB keeps a file's order when it stores it): row n + 1
            # is line n + 1, blank lines included.
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * REPLACE "
                f"(CASE WHEN kind = '{PYTHON}' THEN line END AS line) FROM ({lines})",
                {"path": str(opened(log))},
            )
        except (duckdb.InvalidInputException, duckdb.IOException):
            return False
        self._prepared[_identity(log)] = table
        self.con.execute(
            f"INSERT INTO {KEYS} SELECT id, stamp FROM {table} "
            "WHERE id IS NOT NULL AND stamp IS NOT NULL"
        )
        python = self.con.execute(f"SELECT line FROM {table} WHERE kind = '{PYTHON}'").fetchall()
        keys = [_python_key(line.encode("utf-8")) for (line,) in python]
        known = [key for key in keys if key is not None]
        if known:
            self.con.executemany(f"INSERT INTO {KEYS} VALUES (?, ?::TIMESTAMPTZ)", known)
        return True

    def take(self, log: LogInput) -> str | None:
        """The table ``prepare`` judged ``log`` into, handed over once; None if none."""
        return self._prepared.pop(_identity(log), None)

    def forget(self) -> None:
        for table in self._prepared.values():
            self.con.execute(f"DROP TABLE IF EXISTS {table}")
        self._prepared.clear()

    def _copied(self) -> None:
        """The keys held by more than one line: those lines go to ``Copies``; a line
        whose key is its own is checked in SQL, as a line without a key is."""
        self.con.execute(
            f"INSERT INTO {COPIED} SELECT id, stamp FROM {KEYS} GROUP BY id, stamp "
            "HAVING count(*) > 1"
        )
        self.con.execute(f"DROP TABLE {KEYS}")
        self.keyed = True


def _python_key(line: bytes) -> tuple[str, str] | None:
    """A line's entry key as the slow path reads it (``_checking.check_logs._check_record``)."""
    telemetry = _record(line, 0).telemetry
    if telemetry is None:
        return None
    when, entry_id = time_of(telemetry), insert_id(telemetry)
    return None if when is None or entry_id is None else (entry_id, when)


def _identity(log: LogInput) -> tuple[int, ...]:
    """The file ``log`` has open, as it is now: another file, or the same one since
    changed, is not the file ``prepare`` judged."""
    stat = os.fstat(log.fileno())
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
