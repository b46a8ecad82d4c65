"""The local warehouse: log lines in a sink-shaped DuckDB table, the generated views on it.

    from agent_telemetry.warehouse import Warehouse

    with Warehouse() as wh:                      # or Warehouse("telemetry.duckdb")
        report = wh.load(["telemetry.jsonl"])    # emitter lines or Cloud Logging exports
        wh.create_views()                        # pipeline_run, chat_turn, ..., telemetry_quality
        wh.sql("SELECT lane, count(*) FROM pipeline_run GROUP BY lane").fetchall()

The sink table is typed from ``sink_schema("partitioned")`` and the views are the
generated BigQuery SQL transpiled by sqlglot. ``check_logs(paths)`` checks real log
lines against the models, field by field, without loading them. Both read files with
the same reader and judge values the same way (docs/analyst-guide.md lists the formats);
a file neither can read raises ``LoadError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_telemetry._lazy import lazy_getattr

if TYPE_CHECKING:
    from agent_telemetry.warehouse._checking.check_logs import LogCheckReport, check_logs
    from agent_telemetry.warehouse._checking.rare import RareCombinations
    from agent_telemetry.warehouse._checking.render import render_rare
    from agent_telemetry.warehouse._reading.source import LoadError
    from agent_telemetry.warehouse._warehouse import (
        SINK_TABLE,
        FileLoad,
        LoadProgress,
        LoadReport,
        TranspileError,
        Warehouse,
        default_config,
        duckdb_query,
        local_views,
    )

# check-logs needs neither duckdb nor sqlglot: each name loads its own module on first use.
_LAZY = {
    "LogCheckReport": "_checking.check_logs",
    "check_logs": "_checking.check_logs",
    "RareCombinations": "_checking.rare",  # check-logs' rare combinations, also on the report page
    "render_rare": "_checking.render",  # and as check-logs prints them (the demo too)
    "LoadError": "_reading.source",  # what both commands raise for a file they cannot read
    **dict.fromkeys(
        (
            "SINK_TABLE",
            "FileLoad",
            "LoadProgress",
            "LoadReport",
            "TranspileError",
            "Warehouse",
            "default_config",
            "duckdb_query",
            "local_views",
        ),
        "_warehouse",
    ),
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "SINK_TABLE",
    "FileLoad",
    "LoadError",
    "LoadProgress",
    "LoadReport",
    "LogCheckReport",
    "RareCombinations",
    "TranspileError",
    "Warehouse",
    "check_logs",
    "default_config",
    "duckdb_query",
    "local_views",
    "render_rare",
]
