"""A plain description of each view, built from the event specs: the data templates render.

No SQL here. A view is its source (layout, table, payload column, filters) and its
columns, each with the read it needs (string, number, bool) and the check that turns an
out-of-set or out-of-bound value into NULL.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, FieldSpec, version_catalogue
from agent_telemetry.schema.grid import Band
from agent_telemetry.views._sink import INSERT_ID_COLUMN, PAYLOAD_COLUMN
from agent_telemetry.views.table_field import googlesql_type

QUALITY_VIEW = "telemetry_quality"


def read_as(field: FieldSpec) -> str:
    """The type a field is read as before its check: its own, but numbers as FLOAT64, so a
    sink that typed them FLOAT (or a value once logged as a string) still reads, and 2.5
    can be told from 2."""
    return "FLOAT64" if field.kind == "int" else googlesql_type(field.bigquery_type)


@dataclass(frozen=True, slots=True)
class ColumnPlan:
    """One model field as a view column."""

    name: str
    kind: str
    sql_type: str
    read_as: str
    members: tuple[str, ...]
    ge: int | None
    le: int | None
    description: str
    domain: str
    grid: tuple[Band, ...] = ()  # a precision's grid: a value off it is out of domain

    @classmethod
    def of(cls, field: FieldSpec) -> ColumnPlan:
        return cls(
            name=field.name,
            kind=field.kind,
            sql_type=googlesql_type(field.bigquery_type),
            read_as=read_as(field),
            members=field.members,
            ge=field.ge,
            le=field.le,
            description=column_description(field),
            domain=field.domain,
            grid=field.grid,
        )


@dataclass(frozen=True, slots=True)
class EnvelopeColumn:
    """A view column that is not a model field."""

    name: str
    sql_type: str
    description: str


ENVELOPE_COLUMNS: tuple[EnvelopeColumn, ...] = (
    EnvelopeColumn("timestamp", "TIMESTAMP", "When the event happened (the log entry's time)."),
    EnvelopeColumn(
        "schema_version", "INT64", "Schema version of the event model the line was written with."
    ),
    EnvelopeColumn(
        "invalid_fields",
        "ARRAY<STRING>",
        "Names of fields whose values the emitter rejected; those columns are NULL.",
    ),
)
VIEW_ENVELOPE_COLUMNS: tuple[str, ...] = tuple(c.name for c in ENVELOPE_COLUMNS)


@dataclass(frozen=True, slots=True)
class SourcePlan:
    """The table a view reads, how its payload is addressed, and whether the views keep
    one row per log entry (``dedupe``: the first row of each ``insert_id`` + timestamp;
    rows without an insert id are all kept)."""

    layout: Layout
    project: str
    dataset: str
    table: str
    payload: str
    log_id: str | None
    dedupe: bool
    insert_id: str


def view_name(event: str, schema_version: int) -> str:
    """The view of one event version: version 1 is named after the event (dashboards that
    read it keep working after a bump), version N is ``<event>_v<N>``."""
    return event if schema_version == 1 else f"{event}_v{schema_version}"


@dataclass(frozen=True, slots=True)
class EventViewPlan:
    """One event version's view: the envelope columns and every field, in model order.

    ``name`` is the event (what the lines say), ``view_name`` the view's own name.
    """

    name: str
    view_name: str
    schema_version: int
    description: str
    fields: tuple[ColumnPlan, ...]


@dataclass(frozen=True, slots=True)
class QualityColumn:
    name: str
    sql_type: str
    description: str


# telemetry_quality's columns and their types, in order: the one place the view's DDL column
# list, the data dictionary and the analyzer test (tests/analyze) take them from.
QUALITY_COLUMNS: tuple[QualityColumn, ...] = (
    QualityColumn("day", "DATE", "UTC day of the lines."),
    QualityColumn("event", "STRING", "Event name."),
    QualityColumn(
        "schema_version", "INT64", "Schema version of the lines (each version has its own view)."
    ),
    QualityColumn("field", "STRING", "Field of the event the counts are about."),
    QualityColumn(
        "lines",
        "INT64",
        "Lines of this event seen that day, a log entry delivered twice counted once "
        "(unless telemetry.toml turns dedupe off).",
    ),
    QualityColumn(
        "lines_with_invalid_fields",
        "INT64",
        "Lines whose invalid_fields was not empty (any field).",
    ),
    QualityColumn(
        "lines_with_unknown_fields", "INT64", "Lines that carried keys the event does not define."
    ),
    QualityColumn(
        "invalid_values",
        "INT64",
        "Lines whose invalid_fields named this field (the emitter rejected its value).",
    ),
    QualityColumn(
        "out_of_domain_values",
        "INT64",
        "Lines with a value for this field outside its set, bounds, precision or type; "
        "the event view shows NULL for them.",
    ),
    QualityColumn(
        "duplicate_entries",
        "INT64",
        "Extra copies of this event's log entries that day (same insertId and timestamp: "
        "exports are not de-duplicated), left out of the event views and of every other "
        "count here; NULL when telemetry.toml turns dedupe off.",
    ),
    QualityColumn(
        "conflicting_duplicates",
        "INT64",
        "Of those copies, the ones whose payload differs from the copy kept (two copies of "
        "one entry that cannot both be true); NULL when telemetry.toml turns dedupe off.",
    ),
)


def column_description(field: FieldSpec) -> str:
    what = field.description.rstrip(".") + "."
    if field.kind == "enum":
        return f"{what} One of: {field.domain}."
    if field.kind == "int":
        return f"{what} Integer {field.domain}."
    return what


def source_plan(config: DeploymentConfig, layout: Layout) -> SourcePlan:
    return SourcePlan(
        layout=layout,
        project=config.source.project,
        dataset=config.source.dataset,
        table=config.source.table_for(layout),
        payload=PAYLOAD_COLUMN[layout],
        log_id=config.source.log_id if layout == "analytics" else None,
        dedupe=config.source.dedupe,
        insert_id=INSERT_ID_COLUMN[layout],
    )


def event_view_plan(spec: EventSpec, current_version: int | None = None) -> EventViewPlan:
    """The view of ``spec``; ``current_version`` is the event's newest version, if newer."""
    retired = ""
    if current_version is not None and current_version > spec.schema_version:
        retired = (
            f" Version {spec.schema_version} is retired: services now write version "
            f"{current_version} (view {view_name(spec.name, current_version)})."
        )
    return EventViewPlan(
        name=spec.name,
        view_name=view_name(spec.name, spec.schema_version),
        schema_version=spec.schema_version,
        description=(
            f"{spec.description} One row per {spec.name} line (schema_version "
            f"{spec.schema_version}); values outside a field's set or bounds are NULL "
            f"and counted in telemetry_quality.{retired} Generated by agent-telemetry; "
            "do not edit."
        ),
        fields=tuple(ColumnPlan.of(f) for f in spec.fields),
    )


def view_plans(specs: tuple[EventSpec, ...] | None = None) -> tuple[EventViewPlan, ...]:
    """One plan per event version (default: every registered version, retired ones too)."""
    specs = version_catalogue() if specs is None else specs
    newest: dict[str, int] = {}
    for spec in specs:
        newest[spec.name] = max(newest.get(spec.name, 0), spec.schema_version)
    return tuple(event_view_plan(s, newest[s.name]) for s in specs)


QUALITY_DESCRIPTION = (
    "Per UTC day, event, schema version and field: lines seen, lines with invalid or "
    "unknown fields, values the emitter rejected (named in invalid_fields), values "
    "outside the field's set or bounds (NULL in the event views) and log entries "
    "delivered more than once. Generated by agent-telemetry; do not edit."
)
