"""The local warehouse: log lines in a sink-shaped DuckDB table, the generated views on it.

    from agent_telemetry.warehouse import Warehouse

    with Warehouse() as wh:                      # or Warehouse("telemetry.duckdb")
        report = wh.load(["telemetry.jsonl"])    # emitter lines or Cloud Logging exports
        wh.create_views()                        # pipeline_run, chat_turn, ..., telemetry_quality
        wh.sql("SELECT lane, count(*) FROM pipeline_run GROUP BY lane").fetchall()

The sink table is typed from ``sink_schema("partitioned")`` (pass ``schema`` to load
into a table typed the way a self-made BigQuery sink would have guessed it), and the
views are the generated BigQuery SQL transpiled by sqlglot.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import duckdb

from agent_telemetry.schema.catalogue import Catalogue, default_catalogue
from agent_telemetry.views import TableField, event_payload_keys, sink_fields
from agent_telemetry.warehouse._duckdb_views.transpile import (
    TranspileError,
    create_duckdb_views,
    duckdb_query,
)
from agent_telemetry.warehouse._judging.python import payload_kinds
from agent_telemetry.warehouse._loading.load import (
    SINK_TABLE,
    FileLoad,
    LoadError,
    LoadReport,
    default_sink_fields,
    load_logs,
)
from agent_telemetry.warehouse._loading.progress import LoadProgress
from agent_telemetry.warehouse._reading.source import DEFAULT_LIMITS, Limits
from agent_telemetry.warehouse._sink.duckdb_types import table_fields
from agent_telemetry.warehouse._sink.table import PAYLOAD, SinkColumns

if TYPE_CHECKING:
    from agent_telemetry.config import DeploymentConfig, Layout
    from agent_telemetry.views import ViewDefinition

__all__ = [
    "SINK_TABLE",
    "FileLoad",
    "LoadError",
    "LoadProgress",
    "LoadReport",
    "TranspileError",
    "Warehouse",
    "default_config",
    "duckdb_query",
    "local_views",
]

LOCAL_LAYOUT: Layout = "partitioned"
_BUILT_IN_CONFIG = {
    "source": {"project": "agent-telemetry-local", "dataset": "agent_logs"},
    "target": {"project": "agent-telemetry-local", "dataset": "agent_telemetry"},
}


def default_config(path: str | Path | None = None) -> DeploymentConfig:
    """``path`` if given, else ``./telemetry.toml`` if present, else a local placeholder.

    Only the source table names matter locally: they are what gets rewritten.
    """
    from agent_telemetry.config import load_config, parse_config
    from agent_telemetry.project import find_config

    if path is not None:
        return load_config(path)
    found = find_config(Path.cwd(), climb=False)  # the one discovery: a safe folder only
    if found is not None:
        return load_config(found)
    return parse_config(_BUILT_IN_CONFIG, origin="built-in local config")


@functools.cache
def local_views(
    config: DeploymentConfig, catalogue: Catalogue | None = None
) -> tuple[ViewDefinition, ...]:
    """The generated views of ``catalogue`` (default: the package's own events) for the
    sink-table layout the local warehouse mirrors.

    Cached per config and catalogue: generating and qualifying the SQL takes about a second.
    """
    from agent_telemetry.views import generate_views

    specs = None if catalogue is None else catalogue.version_specs()
    return generate_views(config, LOCAL_LAYOUT, specs)


# DuckDB's memory limit for a database file (``--db``): loads of any size then stay
# within about 2 GB of RSS, DuckDB's buffers plus the loader's (bench/warehouse.py --sizes).
FILE_MEMORY_LIMIT = "1GB"


class Warehouse:
    """A DuckDB database (in memory, or the file ``path``) with the sink table and views."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        config: DeploymentConfig | None = None,
        schema: Sequence[Mapping[str, Any]] | None = None,
        table: str = SINK_TABLE,
        memory_limit: str | None = None,
        catalogue: Catalogue | None = None,
    ) -> None:
        self.con = duckdb.connect(":memory:" if path is None else str(path))
        # A database file spills to disk beside it past this limit, so memory stays
        # bounded whatever the logs' size; in memory, DuckDB's own default (80% of RAM).
        limit = memory_limit or (FILE_MEMORY_LIMIT if path is not None else None)
        if limit is not None:
            self.con.execute("SET memory_limit = ?", [limit])
        # The views' DATE(timestamp) is a UTC day, as in BigQuery.
        self.con.execute("SET TimeZone = 'UTC'")
        # Row order is never relied on (every query orders); unordered loads are faster.
        self.con.execute("SET preserve_insertion_order = false")
        self.config = default_config() if config is None else config
        # The events whose lines are loaded and whose views run (a service's own, resolved
        # by the command from [catalogue]); default: the package's own.
        self.catalogue = default_catalogue() if catalogue is None else catalogue
        specs = None if self.catalogue.is_default else self.catalogue.version_specs()
        self._kinds = None if specs is None else payload_kinds(specs)
        self._owners = None if specs is None else event_payload_keys(specs)
        # ``schema`` is a BigQuery JSON schema, as ``sink_schema`` or ``bq show --schema`` give it.
        self.schema: tuple[TableField, ...] = (
            (default_sink_fields() if specs is None else sink_fields(LOCAL_LAYOUT, specs))
            if schema is None
            else table_fields(schema)
        )
        self.table = table
        self.sink = SinkColumns.from_schema(self.schema, self._kinds, self._owners)

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def load(
        self,
        paths: Iterable[str | Path],
        *,
        progress: LoadProgress | None = None,
        replace: bool = True,
        limits: Limits = DEFAULT_LIMITS,
    ) -> LoadReport:
        """Load log files into the sink table (recreated first unless ``replace`` is false);
        ``limits`` caps how far a gzip file may expand."""
        return load_logs(
            self.con,
            paths,
            table=self.table,
            schema=self.schema,
            progress=progress,
            replace=replace,
            limits=limits,
            kinds=self._kinds,
            owners=self._owners,
        )

    def views(self) -> tuple[ViewDefinition, ...]:
        return local_views(self.config, None if self.catalogue.is_default else self.catalogue)

    def create_views(self) -> tuple[str, ...]:
        """Create every generated view under its BigQuery name; returns the names."""
        source = self.config.source
        return create_duckdb_views(
            self.con,
            self.views(),
            (source.project, source.dataset, source.table_for(LOCAL_LAYOUT)),
            sink_table=self.table,
            payload_column=PAYLOAD,
            payload_fields=self.sink.payload,
        )

    def sql(self, query: str, params: object = None) -> duckdb.DuckDBPyRelation:
        """A relation for ``query`` (the views are plain DuckDB views)."""
        return self.con.sql(query, params=params)

    def rows(self, query: str, params: object = None) -> list[tuple[Any, ...]]:
        """All rows of ``query``."""
        return self.con.execute(query, params).fetchall()

    def one(self, query: str, params: object = None) -> tuple[Any, ...]:
        """The single row of ``query`` (an aggregate)."""
        rows = self.rows(query, params)
        if len(rows) != 1:
            raise ValueError(f"expected one row, got {len(rows)}")
        return rows[0]
