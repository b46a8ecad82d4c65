"""GoogleSQL's own analyzer (ZetaSQL) over the generated views and analysts' queries.

sqlglot and the BigQuery emulator (itself built on sqlglot and DuckDB) cannot tell
whether BigQuery accepts a statement; ZetaSQL is the analyzer BigQuery's dialect is
defined by. It resolves every name and type of a statement against a catalog:

- ``analyze_views(config, layout, sql_dir, specs) -> list[ViewAnalysis]``: every committed
  ``CREATE OR REPLACE VIEW`` of a layout, analyzed whole (column list, OPTIONS, query)
  against the table it reads, typed from the models of ``specs`` (the project's
  catalogue's event versions; None: the package's own) (``source_catalog``);
- ``query_catalog(config, layout, views, specs)``: that table plus the accepted views, as tables
  typed by the analyzer's output columns, for an analyst's query
  (``agent-telemetry views analyze FILE.sql``);
- ``Analyzer(catalog)``: ``analyze(sql)`` one statement, ``analyze_script(sql)`` a file.

Needs the ``[analyze]`` extra (``zetasql==0.1.5``); without it, or with another zetasql,
using anything here raises ``AnalyzerUnavailable`` (importing this package does not).
The first start in a cache directory compiles the analyzer (tens of seconds); later starts
load the compiled module (well under a second): see ``_runtime``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_telemetry._lazy import lazy_getattr
from agent_telemetry.analyze._errors import (
    ANALYZE_EXTRA,
    INSTALL_HINT,
    AnalyzerRejected,
    AnalyzerUnavailable,
)

if TYPE_CHECKING:
    from agent_telemetry.analyze._analyzer import Analysis, Analyzer, OutputColumn
    from agent_telemetry.analyze._catalog import (
        CatalogTree,
        source_catalog,
        source_columns,
        type_text,
    )
    from agent_telemetry.analyze._runtime import CacheInfo, Runtime, cache_dir, runtime
    from agent_telemetry.analyze._views import (
        ViewAnalysis,
        analyze_views,
        committed_view_files,
        query_catalog,
    )

_LAZY = {
    "Analysis": "_analyzer",
    "Analyzer": "_analyzer",
    "OutputColumn": "_analyzer",
    "CatalogTree": "_catalog",
    "source_catalog": "_catalog",
    "source_columns": "_catalog",
    "type_text": "_catalog",
    "CacheInfo": "_runtime",
    "Runtime": "_runtime",
    "cache_dir": "_runtime",
    "runtime": "_runtime",
    "ViewAnalysis": "_views",
    "analyze_views": "_views",
    "committed_view_files": "_views",
    "query_catalog": "_views",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "ANALYZE_EXTRA",
    "INSTALL_HINT",
    "Analysis",
    "Analyzer",
    "AnalyzerRejected",
    "AnalyzerUnavailable",
    "CacheInfo",
    "CatalogTree",
    "OutputColumn",
    "Runtime",
    "ViewAnalysis",
    "analyze_views",
    "cache_dir",
    "committed_view_files",
    "query_catalog",
    "runtime",
    "source_catalog",
    "source_columns",
    "type_text",
]
