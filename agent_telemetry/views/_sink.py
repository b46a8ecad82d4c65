"""The sink table the views read, derived from the models.

Two uses: the BigQuery JSON schema printed by ``agent-telemetry sink-schema`` to
pre-create the sink table (so every payload column exists, typed from the models,
before the first line arrives; a sink that makes its own table types JSON numbers as
FLOAT and has no column for a field never logged), and the schema sqlglot qualifies
the generated SQL against (an unknown column fails the build, not the deployment).

The envelope columns are the LogEntry fields a Cloud Logging sink writes for Cloud Run
stdout (https://cloud.google.com/logging/docs/export/bigquery): LogEntry field names
keep their case, payload keys are lowercased.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_telemetry.config import Layout
from agent_telemetry.schema import EventSpec, FieldSpec, version_catalogue
from agent_telemetry.views.table_field import TableField

PAYLOAD_COLUMN: dict[Layout, str] = {
    "partitioned": "jsonPayload",
    "sharded": "jsonPayload",
    "analytics": "json_payload",
}

# The column a sharded layout's views show the sink table's date suffix (YYYYMMDD) in:
# BigQuery prunes the shards of a wildcard table only by a filter on `_TABLE_SUFFIX`
# (docs/views.md, "A date filter prunes").
SHARD_COLUMN = "table_suffix"
SHARD_DESCRIPTION = (
    "The sink shard the line was read from: its table's date suffix, YYYYMMDD (the UTC day "
    "of the entry's timestamp). A filter on this column is the one that limits the days "
    "BigQuery reads and bills."
)

# The LogEntry's insertId: with timestamp, the key the views keep one row per entry by
# (exports are not de-duplicated; docs/design.md, "Views").
INSERT_ID_COLUMN: dict[Layout, str] = {
    "partitioned": "insertId",
    "sharded": "insertId",
    "analytics": "insert_id",
}


def _nullable(name: str, kind: str, description: str) -> TableField:
    return TableField(name, kind, "NULLABLE", description)


def _record(name: str, description: str, fields: Sequence[TableField]) -> TableField:
    return TableField(name, "RECORD", "NULLABLE", description, tuple(fields))


# Envelope keys the emitter writes into every payload (docs/design.md, "The event catalogue").
ENVELOPE_PAYLOAD: tuple[TableField, ...] = (
    _nullable("event", "STRING", "Event name (agent-telemetry envelope)."),
    _nullable(
        "schema_version", "INTEGER", "Schema version of the event (agent-telemetry envelope)."
    ),
    _nullable(
        "time",
        "STRING",
        "RFC 3339 time written by the emitter; Cloud Logging normally lifts it into "
        "timestamp, so this column stays empty on a real sink.",
    ),
)
ENVELOPE_PAYLOAD_TAIL: tuple[TableField, ...] = (
    TableField(
        "invalid_fields",
        "STRING",
        "REPEATED",
        "Names of fields whose values the emitter rejected and dropped, in model order.",
    ),
    _nullable(
        "unknown_fields",
        "INTEGER",
        "1 when the call passed keys the event does not define (dropped by the emitter); "
        "a flag, never their count (lines written by earlier emitters may hold a count).",
    ),
)


def payload_fields(specs: tuple[EventSpec, ...] | None = None) -> tuple[TableField, ...]:
    """The ``jsonPayload`` record: envelope keys, then every model field once, typed.

    ``specs`` defaults to every event version, retired ones too: their lines stay in the
    table and their views read their fields. A name shared by several events or versions
    (``duration_ms``) is one column; its type must agree. Its description quotes each
    event once, from the last version given that has the field (the newest, in registry
    order).
    """
    specs = version_catalogue() if specs is None else specs
    seen: dict[str, tuple[FieldSpec, dict[str, str]]] = {}
    for spec in specs:
        for field in spec.fields:
            if field.name in seen:
                first, events = seen[field.name]
                if first.bigquery_type != field.bigquery_type:
                    raise ValueError(
                        f"{spec.name}.{field.name}: type {field.bigquery_type} conflicts with "
                        f"{next(iter(events))}.{field.name} ({first.bigquery_type}); "
                        "the sink has one column"
                    )
                events[spec.name] = field.description
            else:
                seen[field.name] = (field, {spec.name: field.description})
    fields = []
    for name, (field, events) in seen.items():
        described = " ".join(f"{event}: {text}" for event, text in events.items())
        fields.append(_nullable(name, field.bigquery_type, described))
    return (*ENVELOPE_PAYLOAD, *fields, *ENVELOPE_PAYLOAD_TAIL)


ENVELOPE_KEYS: tuple[str, ...] = tuple(f.name for f in (*ENVELOPE_PAYLOAD, *ENVELOPE_PAYLOAD_TAIL))


def event_payload_keys(specs: tuple[EventSpec, ...] | None = None) -> dict[str, tuple[str, ...]]:
    """Each event's own payload keys (its fields in every version), in the sink schema's
    order. The copies of one log entry are ranked by the envelope (``event`` first), then
    by these keys of the copy's event (docs/design.md, "One row per log entry"), so a view
    reads only its own event's columns."""
    specs = version_catalogue() if specs is None else specs
    owned: dict[str, set[str]] = {}
    for spec in specs:
        owned.setdefault(spec.name, set()).update(f.name for f in spec.fields)
    order = [f.name for f in payload_fields(specs)]
    return {event: tuple(n for n in order if n in names) for event, names in owned.items()}


def sink_schema(
    layout: Layout = "partitioned", specs: tuple[EventSpec, ...] | None = None
) -> list[dict[str, Any]]:
    """BigQuery JSON schema of the sink table (``bq mk --schema`` / ``SchemaField.from_api_repr``).

    ``analytics`` has no sink table to create (Log Analytics owns ``_AllLogs``).
    """
    return [field.to_api() for field in sink_fields(layout, specs)]


def sink_fields(
    layout: Layout = "partitioned", specs: tuple[EventSpec, ...] | None = None
) -> tuple[TableField, ...]:
    """The sink table's fields, ``sink_schema`` before it is written as JSON."""
    if layout == "analytics":
        raise ValueError("the analytics layout reads _AllLogs, which Log Analytics owns")
    if layout not in ("partitioned", "sharded"):
        raise ValueError("layout must be partitioned or sharded")
    string = "STRING"
    return (
        _nullable("logName", string, "Resource name of the log the entry belongs to."),
        _record(
            "resource",
            "Monitored resource that wrote the entry.",
            [
                _nullable("type", string, "Monitored resource type (cloud_run_revision)."),
                _record(
                    "labels",
                    "Monitored resource labels.",
                    [
                        _nullable(label, string, f"Cloud Run {label}.")
                        for label in (
                            "configuration_name",
                            "location",
                            "project_id",
                            "revision_name",
                            "service_name",
                        )
                    ],
                ),
            ],
        ),
        _nullable("textPayload", string, "Payload of a line that was not JSON."),
        _record(
            PAYLOAD_COLUMN[layout],
            "Structured payload: the agent-telemetry line, typed from the event models.",
            payload_fields(specs),
        ),
        _nullable("timestamp", "TIMESTAMP", "Time of the event (the line's time)."),
        _nullable("receiveTimestamp", "TIMESTAMP", "Time Cloud Logging received the entry."),
        _nullable("severity", string, "Severity of the entry."),
        _nullable(
            INSERT_ID_COLUMN[layout],
            string,
            "Unique id of the entry; with timestamp, the key the views keep one row per "
            "entry by (exports are not de-duplicated).",
        ),
        _record(
            "labels",
            "User-defined labels of the entry.",
            [_nullable("instanceId", string, "Cloud Run instance that wrote the entry.")],
        ),
        _nullable("trace", string, "Trace resource name, if any."),
        _nullable("spanId", string, "Span id within the trace, if any."),
        _nullable("traceSampled", "BOOLEAN", "Whether the trace was sampled."),
        _record(
            "sourceLocation",
            "Source code location, if any.",
            [
                _nullable("file", string, "Source file."),
                _nullable("line", "INTEGER", "Line within the file."),
                _nullable("function", string, "Function name."),
            ],
        ),
        _record(
            "split",
            "Present when the entry was split into several entries.",
            [
                _nullable("uid", string, "Id shared by the split entries."),
                _nullable("index", "INTEGER", "Index of this part."),
                _nullable("totalSplits", "INTEGER", "Number of parts."),
            ],
        ),
    )


# Columns of a Log Analytics linked dataset's _AllLogs view that the views may read (and
# GoogleSQL's analyzer registers, agent_telemetry.analyze). A log view's schema is that of
# the LogEntry (https://cloud.google.com/logging/docs/analyze/query-and-view; fields:
# https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry), in snake_case, with
# json_payload, labels and resource.labels as JSON.
_ANALYTICS_COLUMNS: tuple[TableField, ...] = (
    TableField("timestamp", "TIMESTAMP"),
    TableField("receive_timestamp", "TIMESTAMP"),
    TableField("log_name", "STRING"),
    TableField("log_id", "STRING"),
    TableField("severity", "STRING"),
    TableField("insert_id", "STRING"),
    TableField(
        "resource", "RECORD", fields=(TableField("type", "STRING"), TableField("labels", "JSON"))
    ),
    TableField("labels", "JSON"),
    TableField("text_payload", "STRING"),
    TableField("json_payload", "JSON"),
    TableField("trace", "STRING"),
    TableField("span_id", "STRING"),
)


def table_columns(layout: Layout, specs: tuple[EventSpec, ...] | None = None) -> dict[str, str]:
    """Column name -> GoogleSQL type of the table the views read, for sqlglot."""
    fields = _ANALYTICS_COLUMNS if layout == "analytics" else sink_fields(layout, specs)
    return {field.name: field.googlesql() for field in fields}


def qualify_schema(
    layout: Layout,
    project: str,
    dataset: str,
    table: str,
    specs: tuple[EventSpec, ...] | None = None,
) -> dict[str, Any]:
    """The nested mapping sqlglot's qualify and lineage take as ``schema``."""
    return {project: {dataset: {table: table_columns(layout, specs)}}}


def payload_types(specs: tuple[EventSpec, ...] | None = None) -> dict[str, str]:
    """Payload key -> GoogleSQL type, for checking the keys the qualifier cannot see.

    The same keys are read from the STRUCT (partitioned, sharded) or the JSON (analytics).
    """
    return {f.name: f.googlesql() for f in payload_fields(specs)}
