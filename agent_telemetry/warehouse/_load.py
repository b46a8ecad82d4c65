"""Load log files into the sink-shaped DuckDB table the views read.

Fast path: DuckDB's own JSON reader parses a JSON-lines file in one ``INSERT``; every
non-blank line becomes a row (all NULL when it is not a JSON object), so the insert's
count is the file's line count, and the non-telemetry rows are deleted in the same
transaction. Only when some lines were skipped does a second, exact Python pass say
what they were (plain text, truncated JSON, other JSON, or LogEntries when the file
began with emitter lines). JSON-array exports, and any file DuckDB's reader refuses,
go through a streaming Python reader that hands telemetry records to DuckDB in batches.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.views import TableField, sink_fields
from agent_telemetry.warehouse._duckdb_types import (
    create_table_sql,
    quote_identifier,
)
from agent_telemetry.warehouse._load_progress import LoadProgress, run_watched
from agent_telemetry.warehouse._load_scan import (
    FileLayout,
    Kind,
    LogItem,
    Shape,
    classify_record,
    iter_lines,
    iter_records,
    sniff,
    spool,
)
from agent_telemetry.warehouse._load_sql import (
    SinkColumns,
    batch_insert,
    bulk_insert,
    delete_non_telemetry,
    local_table_fields,
)

SINK_TABLE = "run_googleapis_com_stdout"
BATCH = 20_000
Method = Literal["duckdb", "python"]


class LoadError(AgentTelemetryError):
    """A log file that cannot be read at all (missing, unreadable)."""


@dataclass(slots=True)
class FileLoad:
    """What one file held. ``records`` counts non-blank lines (or array elements)."""

    path: str
    layout: FileLayout
    method: Method
    records: int = 0
    loaded: int = 0
    text: int = 0  # not JSON: the service's own plain log lines
    truncated: int = 0  # began like JSON but did not parse
    other_json: int = 0  # JSON that is not a telemetry record
    cut_at: int | None = None  # a gzip stream broke off (cut or corrupt) at this record

    @property
    def skipped(self) -> int:
        return self.records - self.loaded


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Every file's counts; ``skipped`` = ``non_telemetry`` + ``truncated``."""

    table: str
    files: tuple[FileLoad, ...] = field(default=())

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


def default_sink_fields() -> tuple[TableField, ...]:
    """The sink table ``agent-telemetry sink-schema --layout partitioned`` pins in BigQuery."""
    return sink_fields("partitioned")


def create_sink(
    con: duckdb.DuckDBPyConnection,
    *,
    table: str = SINK_TABLE,
    schema: Sequence[TableField] | None = None,
) -> SinkColumns:
    """(Re)create the empty sink table; ``schema`` overrides the models' sink schema."""
    schema = default_sink_fields() if schema is None else schema
    sink = SinkColumns.from_schema(schema)
    con.execute(f"DROP TABLE IF EXISTS {quote_identifier(table)}")
    con.execute(create_table_sql(table, local_table_fields(schema)))
    return sink


def load_logs(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[str | Path],
    *,
    table: str = SINK_TABLE,
    schema: Sequence[TableField] | None = None,
    progress: LoadProgress | None = None,
    replace: bool = True,
    method: Literal["auto", "python"] = "auto",
) -> LoadReport:
    """Load every file into ``table`` (created from the sink schema when ``replace``).

    ``method="python"`` forces the exact streaming reader for every file (the fallback
    the fast path takes for files DuckDB refuses); both give the same rows and counts.
    """
    files = [Path(p) for p in paths]
    for path in files:
        if not path.exists():
            raise LoadError(f"{path}: no such file")
        if path.is_dir():
            raise LoadError(f"{path}: is a directory")
    if replace:
        sink = create_sink(con, table=table, schema=schema)
    else:
        sink = SinkColumns.from_schema(default_sink_fields() if schema is None else schema)
    loaded = []
    with tempfile.TemporaryDirectory(prefix="agent-telemetry-") as spool_dir:
        for number, path in enumerate(files):
            source = path if path.is_file() else _spool(path, Path(spool_dir) / str(number))
            size = source.stat().st_size
            if progress is not None:
                progress.start_file(path.name, size)
            loader = _FileLoader(con, table, sink, source, size, progress, label=str(path))
            loaded.append(loader.run(method))
            if progress is not None:
                progress.finish_file()
    return LoadReport(table, tuple(loaded))


def _spool(path: Path, into: Path) -> Path:
    try:
        return spool(path, into)
    except OSError as error:
        raise LoadError(f"{path}: {error.strerror or error}") from None


class _FileLoader:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        sink: SinkColumns,
        path: Path,
        size: int,
        progress: LoadProgress | None,
        *,
        label: str,
    ) -> None:
        self.con = con
        self.label = label  # the path as given (``path`` may be a spooled copy)
        self.table = table
        self.sink = sink
        self.path = path
        self.size = size
        self.progress = progress
        self.gzip = False

    def run(self, method: Literal["auto", "python"]) -> FileLoad:
        try:
            sniffed = sniff(self.path)
        except OSError as error:
            raise LoadError(f"{self.label}: {error.strerror or error}") from None
        self.gzip = sniffed.gzip
        if sniffed.layout == "array" or method == "python":
            return self._python(iter_records(self.path, sniffed.layout), sniffed.layout)
        try:
            return self._duckdb(sniffed.shape)
        except duckdb.Error:
            # Should DuckDB's reader refuse a file outright, the Python reader takes any
            # bytes, one line at a time.
            return self._python(iter_records(self.path, "lines"), "lines")

    def _fraction(self) -> Callable[[float], None] | None:
        progress = self.progress
        if progress is None:
            return None
        size = self.size
        return lambda fraction: progress.update(int(fraction * size))

    def _duckdb(self, shape: Shape) -> FileLoad:
        report = FileLoad(self.label, "lines", "duckdb")
        insert = bulk_insert(
            self.table, str(self.path), self.sink, shape, gzip=self.gzip, only_telemetry=False
        )
        self.con.execute("BEGIN TRANSACTION")
        try:
            ((rows,),) = run_watched(self.con, insert, self._fraction())
            ((dropped,),) = self.con.execute(delete_non_telemetry(self.table)).fetchall()
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")
        report.records = int(rows)
        report.loaded = int(rows) - int(dropped)
        if dropped:
            self._explain_skipped(report, shape)
        return report

    def _explain_skipped(self, report: FileLoad, shape: Shape) -> None:
        """Exact kinds of the skipped lines; LogEntries among emitter lines get loaded too."""
        other = Shape.ENTRY if shape is Shape.EMITTER else Shape.EMITTER
        other_kind = Kind.ENTRY if other is Shape.ENTRY else Kind.EMITTER
        other_seen = 0
        for _number, raw in iter_lines(self.path):
            kind, _value = classify_record(raw)
            if kind is Kind.TEXT:
                report.text += 1
            elif kind is Kind.MALFORMED:
                report.truncated += 1
            elif kind is other_kind:
                other_seen += 1
        if other_seen:
            insert = bulk_insert(
                self.table, str(self.path), self.sink, other, gzip=self.gzip, only_telemetry=True
            )
            ((rows,),) = self.con.execute(insert).fetchall()
            report.loaded += int(rows)
        report.other_json = report.records - report.loaded - report.text - report.truncated

    def _python(self, records: Iterator[LogItem], layout: FileLayout) -> FileLoad:
        report = FileLoad(self.label, layout, "python")
        batches: dict[Shape, list[str]] = {Shape.EMITTER: [], Shape.ENTRY: []}
        done = 0
        sent = 0
        self.con.execute("BEGIN TRANSACTION")
        try:
            for record in records:
                done += record.size
                if record.kind is Kind.BLANK:
                    continue
                report.records += 1
                if record.kind is Kind.TEXT:
                    report.text += 1
                elif record.kind is Kind.MALFORMED:
                    report.truncated += 1
                    if record.cut:
                        report.cut_at = record.position
                elif record.kind is Kind.OTHER_JSON:
                    report.other_json += 1
                else:
                    shape = Shape.EMITTER if record.kind is Kind.EMITTER else Shape.ENTRY
                    batch = batches[shape]
                    batch.append(record.text)
                    sent += 1
                    if len(batch) >= BATCH:
                        report.loaded += self._flush(shape, batch)
                        if self.progress is not None:
                            self.progress.update(done)
            for shape, batch in batches.items():
                if batch:
                    report.loaded += self._flush(shape, batch)
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")
        # A record DuckDB could not type as telemetry (an event that is not a string).
        report.other_json += sent - report.loaded
        return report

    def _flush(self, shape: Shape, batch: list[str]) -> int:
        ((rows,),) = self.con.execute(
            batch_insert(self.table, self.sink, shape), [batch]
        ).fetchall()
        batch.clear()
        return int(rows)
