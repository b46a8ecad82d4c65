"""Load log files into the sink-shaped DuckDB table the views read.

Each file is opened and read once (``_reading.source``), split into records and classified by
the reader ``check-logs`` uses too (``_reading.records``), and each telemetry record's values
are judged (``_judging.python``) into a row of the sink's shape: ``timestamp``, ``insertId`` and
the ``jsonPayload`` record. The rows go to a spool file that one ``INSERT`` per file
stores, so a file loads whole or not at all and memory stays bounded by the largest
record, whatever the file's size.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import orjson

from agent_telemetry.views import TableField, sink_fields
from agent_telemetry.warehouse._judging.python import SinkPayload, ValueKind, insert_id, time_of
from agent_telemetry.warehouse._loading.fast import (
    SQL_FROM,
    STAGED,
    FastJudge,
    python_lines,
    qualifies,
    worth_sql,
)
from agent_telemetry.warehouse._loading.progress import LoadProgress
from agent_telemetry.warehouse._reading.inputs import Repeat, distinct_inputs, size_on_disk
from agent_telemetry.warehouse._reading.records import Kind, Record, _record, iter_records
from agent_telemetry.warehouse._reading.source import (
    DEFAULT_LIMITS,
    Layout,
    Limits,
    LoadError,
    LogInput,
)
from agent_telemetry.warehouse._sink.duckdb_types import (
    create_table_sql,
    quote_identifier,
)
from agent_telemetry.warehouse._sink.table import (
    INSERT_ID,
    PAYLOAD,
    TIMESTAMP,
    SinkColumns,
    conflicting_copies,
    local_fields,
    spool_insert,
)

__all__ = ["SINK_TABLE", "FileLoad", "LoadError", "LoadReport", "create_sink", "load_logs"]

SINK_TABLE = "run_googleapis_com_stdout"
_SEEN = "_agent_telemetry_seen"  # entries (insert id, timestamp) of earlier files
_NEW = "_agent_telemetry_new"  # this file's entries not seen before
_ASIDE = "__agent_telemetry_empty"  # the empty table's name while staged rows replace it
BATCH = 8192  # rows written to the spool at a time (and how often progress moves)


@dataclass(slots=True)
class FileLoad:
    """What one file held. ``records`` counts non-blank lines (or array elements);
    ``records`` = ``loaded`` + ``text`` + ``other_json`` + ``truncated`` + ``oversized``
    + ``too_deep`` + ``undecodable``."""

    path: str
    layout: Layout
    encoding: str = "utf-8"  # as read: utf-8, utf-8 (BOM), utf-16-le (BOM), ...
    records: int = 0
    loaded: int = 0  # telemetry records, stored (duplicates too: the views keep one)
    text: int = 0  # not JSON: the service's own plain log lines
    truncated: int = 0  # began like JSON but did not parse
    other_json: int = 0  # JSON that is not a telemetry record
    oversized: int = 0  # longer than MAX_RECORD bytes
    too_deep: int = 0  # nested deeper than MAX_DEPTH
    undecodable: int = 0  # invalid UTF-8, or a lone surrogate escape
    duplicates: int = 0  # telemetry LogEntries seen before (insertId and timestamp)
    cut_at: int | None = None  # a gzip stream broke off (cut or corrupt) at this record
    stopped: str | None = None  # why the read stopped at a limit (a gzip bomb?)

    @property
    def skipped(self) -> int:
        return self.records - self.loaded

    def count(self, kind: Kind, count: int = 1) -> None:
        """Count ``count`` records of a kind that is not telemetry (TEXT comes in runs)."""
        if kind is Kind.TEXT:
            self.text += count
        elif kind is Kind.MALFORMED:
            self.truncated += count
        elif kind is Kind.OTHER_JSON:
            self.other_json += count
        elif kind is Kind.OVERSIZED:
            self.oversized += count
        elif kind is Kind.TOO_DEEP:
            self.too_deep += count
        else:
            self.undecodable += count


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Every file's counts; ``skipped`` = ``non_telemetry`` + ``truncated`` + ``hostile``."""

    table: str
    files: tuple[FileLoad, ...] = field(default=())
    repeated: tuple[Repeat, ...] = field(default=())  # inputs naming a file already read
    # Stored copies of an entry (same insertId and timestamp) whose payload differs from
    # the copy the views keep.
    conflicting: int = 0

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)

    @property
    def loaded(self) -> int:
        return sum(f.loaded for f in self.files)

    @property
    def skipped(self) -> int:
        return self.records - self.loaded

    @property
    def non_telemetry(self) -> int:
        return sum(f.text + f.other_json for f in self.files)

    @property
    def truncated(self) -> int:
        return sum(f.truncated for f in self.files)

    @property
    def hostile(self) -> int:
        """Records too long, too deep or not valid Unicode: counted, never read."""
        return sum(f.oversized + f.too_deep + f.undecodable for f in self.files)

    @property
    def stopped(self) -> tuple[FileLoad, ...]:
        return tuple(f for f in self.files if f.stopped is not None)

    @property
    def duplicates(self) -> int:
        return sum(f.duplicates for f in self.files)


def default_sink_fields() -> tuple[TableField, ...]:
    """The sink table ``agent-telemetry sink-schema --layout partitioned`` pins in BigQuery."""
    return sink_fields("partitioned")


def create_sink(
    con: duckdb.DuckDBPyConnection,
    *,
    table: str = SINK_TABLE,
    schema: Sequence[TableField] | None = None,
    kinds: Mapping[str, ValueKind] | None = None,
    owners: Mapping[str, tuple[str, ...]] | None = None,
) -> SinkColumns:
    """(Re)create the empty sink table; ``schema`` overrides the models' sink schema,
    ``kinds`` how the catalogue's payload keys are read and ``owners`` each event's own
    keys (default: the package's)."""
    schema = default_sink_fields() if schema is None else schema
    sink = SinkColumns.from_schema(schema, kinds, owners)
    con.execute(f"DROP TABLE IF EXISTS {quote_identifier(table)}")
    con.execute(create_table_sql(table, local_fields(schema)))
    return sink


def load_logs(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str | Path],
    *,
    table: str = SINK_TABLE,
    schema: Sequence[TableField] | None = None,
    progress: LoadProgress | None = None,
    replace: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    fast: bool = True,
    sql_from: int = SQL_FROM,
    kinds: Mapping[str, ValueKind] | None = None,
    owners: Mapping[str, tuple[str, ...]] | None = None,
) -> LoadReport:
    """Load every file into ``table`` (created from the sink schema when ``replace``).
    A file named twice (directly, through a link or by overlapping globs) is read once:
    the report lists the repeats. A gzip file that passes ``limits`` stops there; what
    it held before is loaded.

    ``fast``: DuckDB judges in SQL what it reads exactly (``_loading.fast``) when the files
    hold ``sql_from`` bytes or more; off, Python judges every record (the tests hold the
    two equal)."""
    files, repeated = distinct_inputs(Path(p) for p in paths)
    if replace:
        sink = create_sink(con, table=table, schema=schema, kinds=kinds, owners=owners)
    else:
        fields = default_sink_fields() if schema is None else schema
        sink = SinkColumns.from_schema(fields, kinds, owners)
    fast = fast and worth_sql(files, sql_from)
    staging = _Staging(con, table, sink, fast=fast, fresh=replace)
    loaded = []
    try:
        with tempfile.TemporaryDirectory(prefix="agent-telemetry-") as spool_dir:
            spool = Path(spool_dir) / "rows.jsonl"
            for number, path in enumerate(files, 1):
                with LogInput(path, limits=limits) as log:
                    if progress is not None:
                        progress.start_file(path.name, size_on_disk(path))
                    staging.last = number == len(files)
                    try:
                        loaded.append(_load_file(staging, log, spool, progress))
                    finally:
                        staging.clear()
                    if progress is not None:
                        progress.finish_file()
    finally:
        staging.drop()
    conflicting = 0
    # In a table this load created, an entry has copies only where one was counted a
    # duplicate: without any, no copy can conflict (the query ranks every keyed row).
    if not replace or any(file.duplicates for file in loaded):
        ((conflicting,),) = con.execute(conflicting_copies(table, sink)).fetchall()
    return LoadReport(table, tuple(loaded), repeated, int(conflicting))


class _Staging:
    """Where a file's judged rows wait until the file is read whole (a file loads whole
    or not at all), and the entries seen in earlier files of this load (exports are not
    de-duplicated; the views keep one row per entry the same way)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        sink: SinkColumns,
        *,
        fast: bool,
        fresh: bool,
    ) -> None:
        """``fresh``: the table is empty and this load created it."""
        self.con, self.table, self.sink = con, table, sink
        # DuckDB draws a progress bar on stdout for long statements: the load has its own.
        ((self._bar,),) = con.execute("SELECT current_setting('enable_progress_bar')").fetchall()
        con.execute("SET enable_progress_bar = false")
        # Into an empty table, the first file's staged rows become the table (``_adopt``):
        # copying a million rows cost 8% of the load. The staging table then lives beside
        # the table (a rename stays in its schema); later files stage in a temporary one.
        self._adopting = fresh
        self._create_staged(temporary=not fresh)
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_SEEN} ({INSERT_ID} VARCHAR, "
            f"{quote_identifier(TIMESTAMP)} TIMESTAMPTZ)"
        )
        self.last = False  # the load's last file: no later file needs its entries
        self._seen = False  # whether earlier files stored entries in _SEEN
        # Only the pinned sink schema's types are what SQL judges into.
        self.fast = FastJudge(sink.kept, sink.kinds) if fast and sink.judged_types else None

    def _create_staged(self, *, temporary: bool) -> None:
        columns = ", ".join(
            f"{quote_identifier(name)} {kind}" for name, kind in self.sink.columns.items()
        )
        self.con.execute(
            f"CREATE OR REPLACE {'TEMP ' if temporary else ''}TABLE {STAGED} "
            f"(kind VARCHAR DEFAULT 'telemetry', {columns}, line VARCHAR)"
        )

    def clear(self) -> None:
        """Empty the staging table: a file's lines (telemetry or not) never reach the next
        file's counts."""
        self.con.execute(f"DELETE FROM {STAGED}")

    def drop(self) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS {STAGED}")
        self.con.execute(f"DROP TABLE IF EXISTS {_SEEN}")
        self.con.execute(f"SET enable_progress_bar = {bool(self._bar)}")

    def commit(self, label: str, loaded: int) -> int:
        """Store the staged telemetry rows in the table; how many were seen before."""
        con, key = self.con, f"{INSERT_ID}, {quote_identifier(TIMESTAMP)}"
        keyed = (
            f"SELECT {key} FROM {STAGED} WHERE kind = 'telemetry' AND {INSERT_ID} IS NOT NULL "
            f"AND {quote_identifier(TIMESTAMP)} IS NOT NULL"
        )
        if self.last and not self._seen:  # only this file's own copies count
            ((entries, new),) = con.execute(
                f"SELECT (SELECT count(*) FROM ({keyed})), "
                f"(SELECT count(*) FROM (SELECT DISTINCT * FROM ({keyed})))"
            ).fetchall()
        else:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_NEW} AS SELECT DISTINCT * FROM ({keyed}) "
                f"EXCEPT SELECT {key} FROM {_SEEN}"
            )
            ((entries,),) = con.execute(f"SELECT count(*) FROM ({keyed})").fetchall()
            ((new,),) = con.execute(f"SELECT count(*) FROM {_NEW}").fetchall()
            con.execute(f"INSERT INTO {_SEEN} SELECT * FROM {_NEW}")
            con.execute(f"DROP TABLE {_NEW}")
            self._seen = self._seen or new > 0
        stored = self._adopt(label) if self._adopting else self._copy(label)
        if stored != loaded:
            raise LoadError(f"{label}: stored {stored} of {loaded} telemetry records")
        return int(entries - new)

    def _copy(self, label: str) -> int:
        """Add the staged telemetry rows to the table; how many."""
        columns = ", ".join(quote_identifier(name) for name in self.sink.columns)
        try:
            ((stored,),) = self.con.execute(
                f"INSERT INTO {quote_identifier(self.table)} BY NAME SELECT {columns} "
                f"FROM {STAGED} WHERE kind = 'telemetry'"
            ).fetchall()
        except duckdb.Error as error:  # the judged rows fit the table: not expected
            refused = type(error).__name__
            raise LoadError(f"{label}: DuckDB refused the rows ({refused})") from None
        return int(stored)

    def _adopt(self, label: str) -> int:
        """Make the staged telemetry rows the (empty) table: drop the other lines and the
        staging columns, and put the staging table in the table's place (the empty table
        is kept aside until then, and put back if the rename fails). How many rows."""
        con, table = self.con, quote_identifier(self.table)
        aside = quote_identifier(f"{self.table}{_ASIDE}")
        con.execute(f"DELETE FROM {STAGED} WHERE kind <> 'telemetry'")
        con.execute(f"ALTER TABLE {STAGED} DROP COLUMN kind")
        con.execute(f"ALTER TABLE {STAGED} DROP COLUMN line")
        con.execute(f"ALTER TABLE {table} RENAME TO {aside}")
        try:
            con.execute(f"ALTER TABLE {STAGED} RENAME TO {table}")
        except duckdb.Error as error:  # not expected: the name was just freed
            con.execute(f"ALTER TABLE {aside} RENAME TO {table}")
            raise LoadError(f"{label}: DuckDB refused the rows ({type(error).__name__})") from None
        con.execute(f"DROP TABLE {aside}")
        self._adopting = False
        self._create_staged(temporary=True)
        ((stored,),) = con.execute(f"SELECT count(*) FROM {table}").fetchall()
        return int(stored)


def _load_file(
    staging: _Staging, log: LogInput, spool: Path, progress: LoadProgress | None
) -> FileLoad:
    report = FileLoad(log.label, log.layout, str(log.encoding))
    counts = (
        staging.fast.stage(staging.con, log)
        if staging.fast is not None and qualifies(log)
        else None
    )
    if counts is None:  # the slow path: Python reads and judges every record
        records: Iterable[Record] = iter_records(log)
    else:
        if progress is not None:  # DuckDB read the whole file
            progress.update(os.fstat(log.fileno()).st_size)
        for kind, count in counts.items():
            if kind is Kind.TELEMETRY:
                report.loaded += count
            else:
                report.records += count
                report.count(kind, count)
        records = (_record(raw, 0) for raw in python_lines(staging.con))
    payload_of = SinkPayload(staging.sink.kept, staging.sink.kinds)
    rows: list[bytes] = []
    python_loaded = 0
    with spool.open("wb") as out:
        for record in records:
            telemetry = record.telemetry
            if telemetry is None:
                if record.kind is not Kind.BLANK:
                    report.records += record.count
                    report.count(record.kind, record.count)
                    if record.cut:
                        report.cut_at = record.position
                continue
            when = time_of(telemetry)
            # Without a timestamp there is no entry key: stored without its id, the row
            # is never merged by the views (the sink's own rows always have one).
            entry_id = insert_id(telemetry) if when is not None else None
            rows.append(
                orjson.dumps({TIMESTAMP: when, INSERT_ID: entry_id, PAYLOAD: payload_of(telemetry)})
            )
            if len(rows) >= BATCH:
                python_loaded += _write(out, rows)
                if progress is not None:
                    progress.update(log.consumed)
        python_loaded += _write(out, rows)
    report.loaded += python_loaded
    report.records += report.loaded
    report.stopped = log.stopped
    if python_loaded:
        try:
            ((stored,),) = staging.con.execute(
                spool_insert(STAGED, str(spool), staging.sink)
            ).fetchall()
        except duckdb.Error as error:  # the judged rows fit the table: not expected
            refused = type(error).__name__
            raise LoadError(f"{log.label}: DuckDB refused the rows ({refused})") from None
        if stored != python_loaded:
            raise LoadError(f"{log.label}: stored {stored} of {python_loaded} telemetry records")
    if report.loaded:
        report.duplicates = staging.commit(log.label, report.loaded)
    return report


def _write(out: Any, rows: list[bytes]) -> int:
    """Write the rows to the spool; how many."""
    count = len(rows)
    if rows:
        out.write(b"\n".join(rows))
        out.write(b"\n")
        rows.clear()
    return count
