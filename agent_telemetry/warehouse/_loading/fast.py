"""The fast path of the load: DuckDB reads and judges a plain JSON-lines file in SQL.

A file qualifies when DuckDB can read its lines exactly as ``_reading.source`` and
``_reading.records`` would split them: an uncompressed UTF-8 file without a byte-order
mark, in JSON lines. DuckDB's CSV reader splits it into lines in parallel (one column,
no quoting), and ``_judging.typed`` judges each line. The lines it leaves to Python are
judged by ``_reading.records`` and ``_judging.python`` from their text, as the slow path
judges every line.

DuckDB refuses the whole file rather than guess (invalid UTF-8, a carriage return, a
line longer than its buffer): the file then takes the slow path. Either way the rows
land in the staging table, and ``_loading.load`` finishes the file the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import duckdb

from agent_telemetry.warehouse._judging.python import PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._judging.sql import PYTHON
from agent_telemetry.warehouse._judging.typed import SHAPES, TypedJudge, file_shape
from agent_telemetry.warehouse._reading.inputs import size_on_disk
from agent_telemetry.warehouse._reading.records import Kind
from agent_telemetry.warehouse._reading.source import LogInput

STAGED = "_agent_telemetry_staged"
# Each line as one VARCHAR: no delimiter, quote or escape a line can hold, LF only.
READER = (
    "read_csv($path, columns = {'line': 'VARCHAR'}, header = false, auto_detect = false, "
    "delim = '\\x01', quote = '', escape = '', new_line = '\\n')"
)
_KINDS = {kind.value: kind for kind in Kind}
SNIFF = 1 << 16  # the bytes that decide a file's shape (``_judging.typed.file_shape``)
# A run whose regular files hold fewer bytes is judged by Python alone: DuckDB plans the
# SQL judge for about 0.1 s a file, what Python takes for about 2 MiB of lines (both
# paths cost the same between 1.5 and 3 MiB: docs/performance.md).
SQL_FROM = 1 << 21


def opened(log: LogInput) -> Path:
    """The file ``log`` opened, by its descriptor: DuckDB reads that file, even when its
    path names another one by now (a file replaced while the load runs)."""
    return Path(f"/proc/self/fd/{log.fileno()}")


def head(log: LogInput) -> bytes:
    """The file's first bytes, read by position (the file's own reading is untouched)."""
    return os.pread(log.fileno(), SNIFF, 0)


def worth_sql(paths: Iterable[Path], sql_from: int = SQL_FROM) -> bool:
    """Whether a run over ``paths`` takes the SQL path at all: its regular files hold at
    least ``sql_from`` bytes between them (a pipe's size is not known: it counts 0)."""
    return sum(size_on_disk(path) for path in paths) >= sql_from


def qualifies(log: LogInput) -> bool:
    """Whether DuckDB reads this file's lines as ``_reading.source`` hands them on."""
    return (
        log.layout == "lines"
        and not log.gzip
        and log.encoding.name == "utf-8"
        and not log.encoding.bom
        and opened(log).is_file()
    )


class FastJudge:
    """Stage a file's SQL-judged rows; one per load (the statement is built once)."""

    def __init__(
        self, keep: frozenset[str], kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS
    ) -> None:
        self._insert = {
            shape: f"INSERT INTO {STAGED} BY NAME "
            f"{TypedJudge(keep, kinds, shape).statement(READER)}"
            for shape in SHAPES
        }

    def stage(
        self,
        con: duckdb.DuckDBPyConnection,
        log: LogInput,
        *,
        reset: Callable[[], None],
    ) -> dict[Kind, int] | None:
        """Judge the file into the staging table: the records by kind, not counting the
        lines left to Python (``python_lines``). None when DuckDB cannot read the file
        exactly; the staging table is then emptied by ``reset`` (the refusal may have
        aborted the load's transaction), for the slow path."""
        insert = self._insert[file_shape(head(log))]
        try:
            con.execute(insert, {"path": str(opened(log))})
        except (duckdb.InvalidInputException, duckdb.IOException):
            reset()
            return None
        rows = con.execute(
            f"SELECT kind, count(*) FROM {STAGED} WHERE kind NOT IN ('blank', '{PYTHON}') "
            "GROUP BY kind"
        ).fetchall()
        return {_KINDS[kind]: count for kind, count in rows}


def python_lines(con: duckdb.DuckDBPyConnection) -> Iterator[bytes]:
    """The staged lines left to Python, as the file holds them (UTF-8)."""
    cursor = con.execute(f"SELECT line FROM {STAGED} WHERE kind = ?", [PYTHON])
    while rows := cursor.fetchmany(4096):
        for (line,) in rows:
            yield line.encode("utf-8")
