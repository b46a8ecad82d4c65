"""Generated BigQuery views over the telemetry sink, bound field by field to the models.

SQL generation only: no DuckDB (``agent_telemetry.warehouse``), no network
(``agent_telemetry.deploy``). Heavy modules (sqlglot, jinja2) load on first use, so
``import agent_telemetry.views`` and the CLI stay cheap.

- ``generate_views(config, layout=None, specs=None) -> tuple[ViewDefinition, ...]``: one
  view per event version (``specs``, default every registered version), then
  ``telemetry_quality``; ``view_name(event, version)`` names them (version 1: the event's
  name, version N: ``<event>_v<N>``);
- ``ENVELOPE_KEYS``, ``event_payload_keys(specs)``: the payload keys the copies of one
  log entry are ranked by: the envelope's (``event`` first), then the copy's event's own;
- ``sink_schema(layout) -> list[dict]``: BigQuery JSON schema to pre-create the sink table
  (``sink_fields``: the same as ``TableField``, the one shape of a schema field that
  views, warehouse and deploy share);
- ``table_columns(layout)``: the columns the views read, as GoogleSQL types (the sink
  schema's, or Log Analytics' ``_AllLogs``);
- ``ENVELOPE_COLUMNS``, ``QUALITY_COLUMNS``: the columns (name, GoogleSQL type) every event
  view has besides its fields, and those of ``telemetry_quality``;
- ``binding_violations(query, spec, layout)``: proof, read back from the SQL with sqlglot
  lineage, that every model field has exactly one column reading exactly its payload key
  (``query`` as text, or as the tree ``parse_view(text)`` gives);
- ``lane_violations(query, config, specs)``: the same kind of proof for ``lane_health``,
  the view of views: it reads only the event views' columns, each column exactly those
  it declares (``LANE_VIEW``; ``ViewDefinition.reads`` names the views a view reads);
- ``inlined_query(view, views)``: a view of views with those views' queries written in,
  for a dry run before they exist;
- ``dedupe_violations(query, layout, dedupe)``: proof, read back from the SQL, that a view
  keeps one row per log entry (insertId with timestamp) in the form that keeps pruning;
- ``pruning_violations(query, layout)``: proof, read back from the SQL, that a date
  filter on an event view's ``timestamp`` (a sharded view's ``table_suffix`` too) reaches
  the sink's scan as one BigQuery prunes by (``pushed_to_scan`` follows any filter);
  ``one_day_query(view, views)``: a query of one day of a view, for a dry run's bytes;
- ``build(config_path, check) -> BuildResult``: write (or, with ``check``, diff) the
  committed SQL for every layout and the data dictionary ``docs/telemetry.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_telemetry._lazy import lazy_getattr
from agent_telemetry.views._describe import (
    ENVELOPE_COLUMNS,
    QUALITY_COLUMNS,
    QUALITY_VIEW,
    VIEW_ENVELOPE_COLUMNS,
    view_name,
)
from agent_telemetry.views._reading import JSON_NUMBER, on_grid_sql
from agent_telemetry.views._sink import (
    ENVELOPE_KEYS,
    INSERT_ID_COLUMN,
    PAYLOAD_COLUMN,
    event_payload_keys,
    payload_fields,
    sink_fields,
    sink_schema,
    table_columns,
)
from agent_telemetry.views.table_field import TableField, googlesql_type, schema_type

if TYPE_CHECKING:
    from agent_telemetry.views._bindings import (
        BindingViolation,
        binding_violations,
        column_lineage,
        expected_sources,
        parse_view,
        view_lineage,
    )
    from agent_telemetry.views._build import (
        GENERATED_DIR,
        BuildResult,
        build,
        expected_files,
        installed_package,
        sql_path,
    )
    from agent_telemetry.views._dedupe import dedupe_violations
    from agent_telemetry.views._generate import generate_views
    from agent_telemetry.views._inline import inlined_query
    from agent_telemetry.views._lanes import LANE_VIEW, LANE_WINDOW_MINUTES
    from agent_telemetry.views._lanes_proof import lane_violations
    from agent_telemetry.views._pruning import one_day_query, pruning_violations, pushed_to_scan
    from agent_telemetry.views._render import (
        MANAGED_BY,
        ColumnDoc,
        ViewBuildError,
        ViewDefinition,
        table_ref,
    )

_LAZY = {
    "BindingViolation": "_bindings",
    "binding_violations": "_bindings",
    "column_lineage": "_bindings",
    "expected_sources": "_bindings",
    "parse_view": "_bindings",
    "view_lineage": "_bindings",
    "dedupe_violations": "_dedupe",
    "pruning_violations": "_pruning",
    "one_day_query": "_pruning",
    "pushed_to_scan": "_pruning",
    "LANE_VIEW": "_lanes",
    "LANE_WINDOW_MINUTES": "_lanes",
    "inlined_query": "_inline",
    "lane_violations": "_lanes_proof",
    "GENERATED_DIR": "_build",
    "BuildResult": "_build",
    "build": "_build",
    "expected_files": "_build",
    "installed_package": "_build",
    "sql_path": "_build",
    "MANAGED_BY": "_render",
    "ColumnDoc": "_render",
    "ViewBuildError": "_render",
    "ViewDefinition": "_render",
    "generate_views": "_generate",
    "table_ref": "_render",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "ENVELOPE_COLUMNS",
    "ENVELOPE_KEYS",
    "GENERATED_DIR",
    "INSERT_ID_COLUMN",
    "JSON_NUMBER",
    "LANE_VIEW",
    "LANE_WINDOW_MINUTES",
    "MANAGED_BY",
    "PAYLOAD_COLUMN",
    "QUALITY_COLUMNS",
    "QUALITY_VIEW",
    "VIEW_ENVELOPE_COLUMNS",
    "BindingViolation",
    "BuildResult",
    "ColumnDoc",
    "TableField",
    "ViewBuildError",
    "ViewDefinition",
    "binding_violations",
    "build",
    "column_lineage",
    "dedupe_violations",
    "event_payload_keys",
    "expected_files",
    "expected_sources",
    "generate_views",
    "googlesql_type",
    "inlined_query",
    "installed_package",
    "lane_violations",
    "on_grid_sql",
    "one_day_query",
    "parse_view",
    "payload_fields",
    "pruning_violations",
    "pushed_to_scan",
    "schema_type",
    "sink_fields",
    "sink_schema",
    "sql_path",
    "table_columns",
    "table_ref",
    "view_lineage",
    "view_name",
]
