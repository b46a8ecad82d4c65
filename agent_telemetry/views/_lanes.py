"""``lane_health``: per model-provider lane and 5-minute window, did the lane finish work?

The one aggregate view. It reads no sink: only the event views of ``pipeline_run`` and
``provider_status`` (their newest versions, in the target dataset), so it inherits their
checks and their one row per log entry. It exists for the failure the event views cannot
show alone: a lane that looks busy (runs start and end) but finishes nothing, because its
provider is out of quota or rate-limited, or because its runs go silent and are reaped.

No SQL text is trusted as written: the query is parsed, qualified against the event
views' own columns (an unknown column or view is a build error) and printed by sqlglot;
``_lanes_proof`` reads the committed SQL back and holds each column to what it may read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec
from agent_telemetry.views._describe import ENVELOPE_COLUMNS, source_plan, view_name
from agent_telemetry.views._render import (
    DIALECT,
    ColumnDoc,
    ViewBuildError,
    ViewDefinition,
    finish_view,
    render,
    table_ref,
    view_labels,
)
from agent_telemetry.views._sql_error import sql_error_text
from agent_telemetry.views.table_field import googlesql_type

LANE_VIEW = "lane_health"
LANE_WINDOW_MINUTES = 5
# The error classes a dead provider shows up as (counted per window, when failed).
PROVIDER_ERRORS: tuple[str, ...] = ("rate_limited", "quota_exhausted", "model_overloaded")
# Every value the view compares with, checked against the models' sets at build time.
RUN_FIELDS: dict[str, tuple[str, ...]] = {
    "provider": (),
    "status": ("ok", "failed"),
    "reason": ("stalled",),
    "error_class": PROVIDER_ERRORS,
    "queue_wait_ms": (),
}
STATUS_FIELDS: dict[str, tuple[str, ...]] = {"provider": (), "state": ("live",)}
LIVE = "live"


@dataclass(frozen=True, slots=True)
class LaneColumn:
    """One column of ``lane_health``: its type, meaning, and the event-view columns its
    value is computed from (``view.column``), which the binding proof holds it to."""

    name: str
    sql_type: str
    description: str
    reads: frozenset[str]


def _reads(*names: str) -> frozenset[str]:
    return frozenset(names)


def lane_columns(run_view: str, status_view: str) -> tuple[LaneColumn, ...]:
    """The columns, in order; ``run_view`` and ``status_view`` are the views read.

    ``reads`` is everything a column's value is computed from, the columns a window
    function partitions and orders by included: the lane and window keys of both views
    (``KEYS``) wherever a value is ranked or carried within a lane."""
    run = f"{run_view}."
    status = f"{status_view}."
    keys = _reads(run + "provider", run + "timestamp", status + "provider", status + "timestamp")
    counted = [
        LaneColumn(
            f"runs_{error}",
            "INT64",
            f"Runs that ended in the window failed with error_class {error}.",
            _reads(run + "status", run + "error_class"),
        )
        for error in PROVIDER_ERRORS
    ]
    return (
        LaneColumn(
            "window_start",
            "TIMESTAMP",
            f"Start of the {LANE_WINDOW_MINUTES}-minute window (UTC, aligned to the hour); a "
            f"window is a row when runs ended on the lane or {status_view} lines came in it.",
            _reads(run + "timestamp", status + "timestamp"),
        ),
        LaneColumn(
            "provider",
            "STRING",
            f"Model-provider lane ({run_view}.provider, {status_view}.provider).",
            _reads(run + "provider", status + "provider"),
        ),
        LaneColumn(
            "state",
            "STRING",
            f"Last known state of the lane at the window's end: the state of its newest "
            f"{status_view} line up to then, from any probe; NULL before the first.",
            keys | {status + "state"},
        ),
        LaneColumn(
            "runs_ended",
            "INT64",
            f"Runs on the lane that ended in the window ({run_view} lines, any status).",
            _reads(),
        ),
        LaneColumn("runs_ok", "INT64", "Runs that ended ok in the window.", _reads(run + "status")),
        *counted,
        LaneColumn(
            "runs_stalled",
            "INT64",
            "Runs reaped in the window because their heartbeat went silent (reason stalled).",
            _reads(run + "reason"),
        ),
        LaneColumn(
            "queue_wait_p95_ms",
            "INT64",
            "95th percentile (nearest rank) of queue_wait_ms of the runs that ended in the "
            "window; NULL when none had a wait.",
            _reads(run + "queue_wait_ms", run + "provider", run + "timestamp"),
        ),
        LaneColumn(
            "looks_dead",
            "BOOL",
            "Runs ended, none ok, while the state was known and not live or a run was reaped "
            "stalled: the lane looks busy but finishes nothing. Never NULL.",
            keys | {status + "state", run + "status", run + "reason"},
        ),
    )


LANE_DESCRIPTION = (
    "Per model-provider lane and 5-minute window: the lane's last known state, the runs that "
    "ended (ok, failed by provider error class, reaped stalled), their queue wait p95, and "
    "looks_dead, a lane that looks busy but finishes nothing. Reads the event views, not the "
    "sink. Generated by agent-telemetry; do not edit."
)


@dataclass(frozen=True, slots=True)
class LanePlan:
    """What the template needs: the two views read and the values compared with."""

    run_view: str
    status_view: str
    columns: tuple[LaneColumn, ...]
    window_minutes: int = LANE_WINDOW_MINUTES
    provider_errors: tuple[str, ...] = PROVIDER_ERRORS
    live: str = LIVE


def _newest(specs: tuple[EventSpec, ...], event: str) -> EventSpec | None:
    found = [s for s in specs if s.name == event]
    return max(found, key=lambda s: s.schema_version) if found else None


def _has(spec: EventSpec | None, wanted: dict[str, tuple[str, ...]]) -> bool:
    """``spec`` has every field, and every value the view compares a field with."""
    if spec is None:
        return False
    fields = {f.name: f for f in spec.fields}
    for name, values in wanted.items():
        field = fields.get(name)
        if field is None or any(v not in field.members for v in values):
            return False
    return True


def lane_plan(specs: tuple[EventSpec, ...]) -> LanePlan | None:
    """The plan over the newest ``pipeline_run`` and ``provider_status`` of ``specs``; None
    when a catalogue lacks either, or a field or value the view reads (a service's own
    catalogue need not have them)."""
    run = _newest(specs, "pipeline_run")
    status = _newest(specs, "provider_status")
    if run is None or status is None or not _has(run, RUN_FIELDS):
        return None
    if not _has(status, STATUS_FIELDS):
        return None
    run_view = view_name(run.name, run.schema_version)
    status_view = view_name(status.name, status.schema_version)
    return LanePlan(run_view, status_view, lane_columns(run_view, status_view))


def event_view_columns(spec: EventSpec) -> dict[str, str]:
    """An event view's output columns and GoogleSQL types (envelope and fields)."""
    envelope = {c.name: c.sql_type for c in ENVELOPE_COLUMNS}
    columns = {name: envelope[name] for name in ("timestamp", "schema_version")}
    columns.update({f.name: googlesql_type(f.bigquery_type) for f in spec.fields})
    columns["invalid_fields"] = envelope["invalid_fields"]
    return columns


def read_views_schema(
    config: DeploymentConfig, plan: LanePlan, specs: tuple[EventSpec, ...]
) -> dict[str, Any]:
    """The views ``lane_health`` reads, as the nested mapping sqlglot qualifies against."""
    target = config.target
    run = _newest(specs, "pipeline_run")
    status = _newest(specs, "provider_status")
    if run is None or status is None:
        raise ViewBuildError(f"{LANE_VIEW}: the catalogue lacks an event it reads")
    return {
        target.project: {
            target.dataset: {
                plan.run_view: event_view_columns(run),
                plan.status_view: event_view_columns(status),
            }
        }
    }


def foreign_tables(tree: exp.Expr, config: DeploymentConfig, plan: LanePlan) -> list[str]:
    """Tables ``tree`` reads that are not the two event views of the target dataset (CTEs
    aside): what the build refuses and the binding proof (``_lanes_proof``) reports."""
    target = config.target
    allowed = {(target.project, target.dataset, v) for v in (plan.run_view, plan.status_view)}
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    found = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name.lower() in ctes:
            continue
        if (table.catalog, table.db, table.name) not in allowed:
            found.append(".".join(p for p in (table.catalog, table.db, table.name) if p))
    return found


def compile_lane_query(
    sql: str, config: DeploymentConfig, plan: LanePlan, specs: tuple[EventSpec, ...]
) -> str:
    """Parse, qualify against the event views' columns, check what is read, and format."""
    try:
        qualified = qualify(
            sqlglot.parse_one(sql, dialect=DIALECT),
            schema=read_views_schema(config, plan, specs),
            dialect=DIALECT,
            validate_qualify_columns=True,
            identify=False,
        )
    except (ParseError, OptimizeError) as exc:
        raise ViewBuildError(f"{LANE_VIEW}: {sql_error_text(exc)}") from exc
    if foreign_tables(qualified, config, plan):
        raise ViewBuildError(f"{LANE_VIEW}: reads a table other than the event views")
    return qualified.sql(dialect=DIALECT, pretty=True, copy=False) + "\n"


def lane_health_view(
    config: DeploymentConfig, layout: Layout, specs: tuple[EventSpec, ...]
) -> ViewDefinition | None:
    """``lane_health`` for ``layout`` (its SQL is the same in every layout: it reads views),
    or None when the catalogue cannot have it."""
    plan = lane_plan(specs)
    if plan is None:
        return None
    target = config.target
    sql = render(
        "lane_health.sql.j2",
        plan=plan,
        run_ref=table_ref(target.project, target.dataset, plan.run_view),
        status_ref=table_ref(target.project, target.dataset, plan.status_view),
    )
    version = max(s.schema_version for s in specs if s.name in ("pipeline_run", "provider_status"))
    return finish_view(
        name=LANE_VIEW,
        config=config,
        source=source_plan(config, layout),
        query=compile_lane_query(sql, config, plan, specs),
        description=LANE_DESCRIPTION,
        columns=tuple(ColumnDoc(c.name, c.sql_type, c.description) for c in plan.columns),
        labels=view_labels(layout, version, "lanes"),
        schema_version=version,
        event=None,
        reads=(plan.run_view, plan.status_view),
    )
