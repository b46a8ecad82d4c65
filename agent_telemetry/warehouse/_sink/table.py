"""The sink-shaped DuckDB table, and the statement that fills it from judged records.

The local sink keeps the columns of the BigQuery sink table the views read,
``timestamp``, ``jsonPayload`` and ``insertId`` (which the views de-duplicate by),
typed from the same sink schema. Everything is derived from that schema, so a sink
table typed the way a self-made BigQuery sink would have guessed it (FLOAT for
integers, a missing column) is loaded by the same code.

Python reads and judges every record (``_reading.records``, ``_judging.python``) and writes the
telemetry as rows already in the sink's shape, one JSON object per line, to a spool
file; one ``INSERT ... FROM read_json`` stores them. DuckDB only types values the
judgement already read, so it never decides what a line means.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_telemetry.views import (
    ENVELOPE_KEYS,
    INSERT_ID_COLUMN,
    PAYLOAD_COLUMN,
    TableField,
    event_payload_keys,
)
from agent_telemetry.warehouse._judging.python import PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._sink.duckdb_types import (
    SinkSchemaError,
    column_types,
    duckdb_type,
    quote_identifier,
    record_fields,
)

PAYLOAD = PAYLOAD_COLUMN["partitioned"]
TIMESTAMP = "timestamp"
INSERT_ID = INSERT_ID_COLUMN["partitioned"]
REQUIRED_ENVELOPE_KEYS = ("event", "schema_version")
LOCAL_COLUMNS = (TIMESTAMP, PAYLOAD, INSERT_ID)
# What the sink schema gives the insert id; added when a schema lacks it, since the
# views key each LogEntry by it.
INSERT_ID_FIELD = TableField(
    INSERT_ID, "STRING", "NULLABLE", "Unique id Cloud Logging gave the entry."
)
# The DuckDB type a payload value has once judged (the pinned sink schema's types).
_JUDGED_TYPES = {"int": "BIGINT", "string": "VARCHAR", "bool": "BOOLEAN", "strings": "VARCHAR[]"}
# The types the SQL judge gives the envelope columns (the pinned sink schema's).
_JUDGED_ENVELOPE = {TIMESTAMP: "TIMESTAMPTZ", INSERT_ID: "VARCHAR"}
# One judged row stays far below this; DuckDB's reader buffers per object.
MAX_ROW_BYTES = 1 << 20


def local_fields(schema: Sequence[TableField]) -> list[TableField]:
    """The sink schema's fields the local table keeps (the LogEntry envelope the views
    never read would only cost load time), in schema order; ``insertId`` is added at
    the end when the schema lacks it."""
    fields = [field for field in schema if field.name in LOCAL_COLUMNS]
    names = [field.name for field in fields]
    for name in (TIMESTAMP, PAYLOAD):
        if name not in names:
            raise SinkSchemaError(f"sink schema has no {name!r} column")
    if INSERT_ID not in names:
        fields.append(INSERT_ID_FIELD)
    return fields


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


OWNERS: Mapping[str, tuple[str, ...]] = event_payload_keys()


@dataclass(frozen=True, slots=True)
class SinkColumns:
    """The sink table's columns and its payload's fields, as DuckDB types."""

    columns: Mapping[str, str]
    payload: Mapping[str, str]
    structure: Mapping[str, Any]  # json_transform structure of the payload
    # How each payload key of the catalogue is read (``_judging.python.payload_kinds``).
    kinds: Mapping[str, ValueKind] = dataclasses.field(default_factory=lambda: PAYLOAD_KINDS)
    # Each event's own payload keys (``views.event_payload_keys``): what its copies rank by.
    owners: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=lambda: OWNERS)

    @classmethod
    def from_schema(
        cls,
        schema: Sequence[TableField],
        kinds: Mapping[str, ValueKind] | None = None,
        owners: Mapping[str, tuple[str, ...]] | None = None,
    ) -> SinkColumns:
        schema = local_fields(schema)
        columns = column_types(schema)
        payload_fields = record_fields(schema, PAYLOAD)
        payload = {f.name: duckdb_type(f) for f in payload_fields}
        for key in REQUIRED_ENVELOPE_KEYS:
            if key not in payload:
                raise SinkSchemaError(f"sink schema's {PAYLOAD} has no {key!r} field")
        structure = {f.name: _structure(f) for f in payload_fields}
        return cls(
            columns,
            payload,
            structure,
            PAYLOAD_KINDS if kinds is None else kinds,
            OWNERS if owners is None else owners,
        )

    @property
    def kept(self) -> frozenset[str]:
        """Payload keys the table has a column for."""
        return frozenset(self.payload)

    @property
    def judged_types(self) -> bool:
        """Whether every payload column has the type a judged value already has (the
        pinned sink schema), so DuckDB can read the rows typed, without casting."""
        return all(
            key in self.kinds and _JUDGED_TYPES[self.kinds[key]] == kind
            for key, kind in self.payload.items()
        )

    @property
    def judged_envelope(self) -> bool:
        """Whether ``timestamp`` and ``insertId`` have the types the SQL judge gives them
        (the pinned sink schema's): cast to another, a value would differ from the text
        Python stores, or fail where Python's rows are refused with a ``LoadError``."""
        return all(self.columns[name] == kind for name, kind in _JUDGED_ENVELOPE.items())


def _structure(field: TableField) -> Any:
    """A BigQuery field as a json_transform structure (dicts, one-item lists, type names)."""
    if field.type.upper() in ("RECORD", "STRUCT"):
        inner: Any = {child.name: _structure(child) for child in field.fields}
    else:
        inner = duckdb_type(dataclasses.replace(field, mode="NULLABLE"))
    if field.mode.upper() == "REPEATED":
        return [inner]
    return inner


def _columns_literal(columns: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{sql_string(k)}: {sql_string(v)}" for k, v in columns.items()) + "}"


def spool_insert(table: str, spool: str, sink: SinkColumns) -> str:
    """Insert the judged rows of a spool file (one JSON object per line).

    With the pinned sink schema the rows are read typed. A table typed otherwise (a
    self-made sink's FLOAT or STRING columns) gets its values cast by json_transform,
    which gives NULL where a cast fails, as the views' SAFE_CAST would.
    """
    typed = sink.judged_types
    columns = {
        name: (kind if name != PAYLOAD or typed else "JSON") for name, kind in sink.columns.items()
    }
    source = (
        f"read_json({sql_string(spool)}, format = 'newline_delimited', "
        f"maximum_object_size = {MAX_ROW_BYTES}, columns = {_columns_literal(columns)})"
    )
    select = ", ".join(
        quote_identifier(name)
        if name != PAYLOAD or typed
        else (
            f"json_transform({quote_identifier(name)}, {sql_string(json.dumps(sink.structure))})"
            f" AS {quote_identifier(name)}"
        )
        for name in sink.columns
    )
    return f"INSERT INTO {quote_identifier(table)} BY NAME SELECT {select} FROM {source}"


def conflicting_copies(table: str, sink: SinkColumns) -> str:
    """How many stored copies of an entry hold another payload than the copy the views
    keep: the views' rule (docs/design.md, "One row per log entry") run on the table:
    the envelope (``event`` first), then each event's own columns, read only for copies
    of that event, as telemetry_quality ranks them."""
    payload = quote_identifier(PAYLOAD)

    def read(name: str) -> str:
        column = f"{payload}.{quote_identifier(name)}"
        if sink.payload[name].endswith("[]"):  # an array ranks by its JSON text, '[]' if absent
            return f"coalesce(CAST(to_json({column}) AS VARCHAR), '[]')"
        return column

    event = f"{payload}.{quote_identifier('event')}"
    keys = [f"{read(name)} ASC NULLS FIRST" for name in ENVELOPE_KEYS if name in sink.payload]
    for owner, names in sink.owners.items():
        keys += [
            f"CASE WHEN {event} = {sql_string(owner)} THEN {read(name)} END ASC NULLS FIRST"
            for name in names
            if name in sink.payload
        ]
    entry = f"PARTITION BY {quote_identifier(INSERT_ID)}, {quote_identifier(TIMESTAMP)}"
    ranked = f"{entry} ORDER BY {', '.join(keys)}"
    return (
        "SELECT coalesce(sum(copies - alike), 0) FROM ("
        f"SELECT count(*) OVER ({entry}) AS copies, count(*) OVER ({ranked}) AS alike, "
        f"row_number() OVER ({ranked}) AS place FROM {quote_identifier(table)} "
        f"WHERE {quote_identifier(INSERT_ID)} IS NOT NULL) WHERE place = 1"
    )
