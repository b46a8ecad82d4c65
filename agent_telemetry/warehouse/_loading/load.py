"""Load log files into the sink-shaped DuckDB table the views read.

Each file is opened and read once (``_reading.source``), split into records and classified by
the reader ``check-logs`` uses too (``_reading.records``), and each telemetry record's values
are judged (``_judging.python``) into a row of the sink's shape: ``timestamp``, ``insertId`` and
the ``jsonPayload`` record. The rows go to a spool file that one ``INSERT`` per file
stores, so a file loads whole or not at all and memory stays bounded by the largest
record, whatever the file's size: they wait in the staging table (``staging``) until
the file is read whole, and are then counted against earlier files' entries
(``entries``) and stored (``store``). ``report`` holds what the load reports.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson

from agent_telemetry.views import TableField, sink_fields
from agent_telemetry.warehouse._judging.python import SinkPayload, ValueKind, insert_id, time_of
from agent_telemetry.warehouse._loading.fast import (
    SQL_FROM,
    STAGED,
    python_lines,
    qualifies,
    worth_sql,
)
from agent_telemetry.warehouse._loading.progress import LoadProgress
from agent_telemetry.warehouse._loading.report import FileLoad, LoadReport
from agent_telemetry.warehouse._loading.staging import Staging
from agent_telemetry.warehouse._reading.inputs import distinct_inputs, size_on_disk
from agent_telemetry.warehouse._reading.records import Kind, Record, _record, iter_records
from agent_telemetry.warehouse._reading.source import (
    DEFAULT_LIMITS,
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
BATCH = 8192  # rows written to the spool at a time (and how often progress moves)


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
    staging = Staging(con, table, sink, fast=fast, fresh=replace)
    loaded = []
    try:
        with tempfile.TemporaryDirectory(prefix="agent-telemetry-") as spool_dir:
            spool = Path(spool_dir) / "rows.jsonl"
            for number, path in enumerate(files, 1):
                with LogInput(path, limits=limits) as log:
                    if progress is not None:
                        progress.start_file(path.name, size_on_disk(path))
                    staging.last = number == len(files)
                    loaded.append(_load_file(staging, log, spool, progress))
                    # (Not on an error: the load stops, and a DuckDB error leaves the
                    # transaction aborted until ``drop`` rolls it back.)
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


def _load_file(
    staging: Staging, log: LogInput, spool: Path, progress: LoadProgress | None
) -> FileLoad:
    report = FileLoad(log.label, log.layout, str(log.encoding))
    counts = (
        staging.fast.stage(staging.con, log, reset=staging.reset)
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
        # Stored whole or refused; ``staging.commit`` checks how many rows were staged.
        try:
            staging.con.execute(spool_insert(STAGED, str(spool), staging.sink))
        except duckdb.Error as error:  # a sink typed so a judged value cannot fit it
            refused = type(error).__name__
            raise LoadError(f"{log.label}: DuckDB refused the rows ({refused})") from None
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
