"""Generated BigQuery views over the telemetry sink, bound field by field to the models.

Public API (heavy modules load on first use, so ``import agent_telemetry.views`` and the
CLI stay cheap):

- ``load_config(path) -> DeploymentConfig``: the deployment file, identifiers validated;
- ``generate_views(config, layout=None, specs=None) -> tuple[ViewDefinition, ...]``: one
  view per event version (``specs``, default every registered version), then
  ``telemetry_quality``; ``view_name(event, version)`` names them (version 1: the event's
  name, version N: ``<event>_v<N>``);
- ``sink_schema(layout) -> list[dict]``: BigQuery JSON schema to pre-create the sink table;
- ``binding_violations(query, spec, layout)``: proof, read back from the SQL with sqlglot
  lineage, that every model field has exactly one column reading exactly its payload key;
- ``build(config_path, check) -> BuildResult``: write (or, with ``check``, diff) the
  committed SQL for every layout and the data dictionary ``docs/telemetry.md``;
- BigQuery deployment (the ``[bigquery]`` extra): ``BigQueryWarehouse.connect(...)``,
  ``make_plan(warehouse, config) -> DeploymentPlan``, ``approve(plan, by) -> Approval``,
  ``apply_plan(warehouse, config, approval) -> ApplyResult``;
- ``Warehouse``: the local DuckDB warehouse (log files -> sink-shaped table -> these
  views, transpiled by sqlglot), see ``agent_telemetry.views.warehouse``;
- ``check_logs(paths) -> CheckReport``: real log lines checked against the models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agent_telemetry.views._config import (
    LAYOUTS,
    ConfigError,
    DeploymentConfig,
    KnownEvents,
    Layout,
    SourceConfig,
    TargetConfig,
    check_exceptions,
    load_config,
    parse_config,
)
from agent_telemetry.views._describe import ENVELOPE_NAMES, QUALITY_VIEW, view_name
from agent_telemetry.views._sink import PAYLOAD_COLUMN, sink_schema

if TYPE_CHECKING:
    from agent_telemetry.views._bigquery_apply import ApplyResult, apply_plan
    from agent_telemetry.views._bigquery_approval import (
        Approval,
        ApprovalError,
        approve,
        read_approval,
        write_approval,
    )
    from agent_telemetry.views._bigquery_client import BigQueryWarehouse
    from agent_telemetry.views._bigquery_plan import DeploymentPlan, PlanError, make_plan
    from agent_telemetry.views._bigquery_types import BigQueryError
    from agent_telemetry.views._bindings import (
        BindingViolation,
        binding_violations,
        column_lineage,
        expected_sources,
        view_lineage,
    )
    from agent_telemetry.views._build import (
        GENERATED_DIR,
        BuildResult,
        build,
        expected_files,
        sql_path,
    )
    from agent_telemetry.views._checklogs import CheckReport, check_logs
    from agent_telemetry.views._render import (
        ColumnDoc,
        ViewBuildError,
        ViewDefinition,
        generate_views,
    )
    from agent_telemetry.views.warehouse import LoadReport, Warehouse

_LAZY = {
    "ApplyResult": "_bigquery_apply",
    "apply_plan": "_bigquery_apply",
    "Approval": "_bigquery_approval",
    "ApprovalError": "_bigquery_approval",
    "approve": "_bigquery_approval",
    "read_approval": "_bigquery_approval",
    "write_approval": "_bigquery_approval",
    "BigQueryWarehouse": "_bigquery_client",
    "DeploymentPlan": "_bigquery_plan",
    "PlanError": "_bigquery_plan",
    "make_plan": "_bigquery_plan",
    "BigQueryError": "_bigquery_types",
    "BindingViolation": "_bindings",
    "binding_violations": "_bindings",
    "column_lineage": "_bindings",
    "expected_sources": "_bindings",
    "view_lineage": "_bindings",
    "GENERATED_DIR": "_build",
    "BuildResult": "_build",
    "build": "_build",
    "expected_files": "_build",
    "sql_path": "_build",
    "ColumnDoc": "_render",
    "ViewBuildError": "_render",
    "ViewDefinition": "_render",
    "generate_views": "_render",
    # The local warehouse (DuckDB): see agent_telemetry.views.warehouse.
    "CheckReport": "_checklogs",
    "check_logs": "_checklogs",
    "LoadReport": "warehouse",
    "Warehouse": "warehouse",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ENVELOPE_NAMES",
    "GENERATED_DIR",
    "LAYOUTS",
    "PAYLOAD_COLUMN",
    "QUALITY_VIEW",
    "ApplyResult",
    "Approval",
    "ApprovalError",
    "BigQueryError",
    "BigQueryWarehouse",
    "BindingViolation",
    "BuildResult",
    "CheckReport",
    "ColumnDoc",
    "ConfigError",
    "DeploymentConfig",
    "DeploymentPlan",
    "KnownEvents",
    "Layout",
    "LoadReport",
    "PlanError",
    "SourceConfig",
    "TargetConfig",
    "ViewBuildError",
    "ViewDefinition",
    "Warehouse",
    "apply_plan",
    "approve",
    "binding_violations",
    "build",
    "check_exceptions",
    "check_logs",
    "column_lineage",
    "expected_files",
    "expected_sources",
    "generate_views",
    "load_config",
    "make_plan",
    "parse_config",
    "read_approval",
    "sink_schema",
    "sql_path",
    "view_lineage",
    "view_name",
    "write_approval",
]
