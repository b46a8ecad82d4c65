"""The DuckDB statements that move log records into the sink-shaped table.

The local sink keeps the two columns of the BigQuery sink table the views read,
``timestamp`` and ``jsonPayload``, typed from the same sink schema. Everything is
derived from that schema, so a sink table typed the way a self-made BigQuery sink
would have guessed it (FLOAT for integers, a missing column) is loaded by the same
code. The emitter's line carries the payload at the top level
with ``time`` and ``severity``, which Cloud Logging lifts into the LogEntry; an export
already holds LogEntries with ``timestamp`` and ``jsonPayload``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent_telemetry.views import INSERT_ID_COLUMN, PAYLOAD_COLUMN, TableField
from agent_telemetry.warehouse._duckdb_types import (
    SinkSchemaError,
    column_types,
    duckdb_type,
    quote_identifier,
    record_fields,
)
from agent_telemetry.warehouse._load_scan import Shape

PAYLOAD = PAYLOAD_COLUMN["partitioned"]
TIMESTAMP = "timestamp"
# Cloud Logging lifts these keys of a JSON line into the LogEntry (time -> timestamp).
LIFTED = {"time": TIMESTAMP, "severity": "severity"}
REQUIRED_ENVELOPE_KEYS = ("event", "schema_version")
LOCAL_COLUMNS = (TIMESTAMP, PAYLOAD)


def local_fields(schema: Sequence[TableField]) -> list[TableField]:
    """The sink schema's fields the local table keeps (the LogEntry envelope the views
    never read would only cost load time), in schema order."""
    fields = [field for field in schema if field.name in LOCAL_COLUMNS]
    names = [field.name for field in fields]
    for name in LOCAL_COLUMNS:
        if name not in names:
            raise SinkSchemaError(f"sink schema has no {name!r} column")
    return fields


# The views keep one row per log entry by insertId with timestamp (docs/design.md,
# "Views"): the table has the column so they run. Nothing fills it yet (NULL: rows without
# an insert id are never merged); reading it from LogEntries means moving it into
# LOCAL_COLUMNS.
INSERT_ID = INSERT_ID_COLUMN["partitioned"]


def local_table_fields(schema: Sequence[TableField]) -> list[TableField]:
    """The local table's columns: ``local_fields`` and the insert id, in schema order (a
    schema without an insert id gets a STRING one)."""
    local_fields(schema)  # every loaded column must be there
    fields = [field for field in schema if field.name in (*LOCAL_COLUMNS, INSERT_ID)]
    if all(field.name != INSERT_ID for field in fields):
        fields.append(TableField(INSERT_ID, "STRING", "NULLABLE"))
    return fields


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class SinkColumns:
    """The sink table's columns and its payload's fields, as DuckDB types."""

    columns: Mapping[str, str]
    payload: Mapping[str, str]
    structure: Mapping[str, Any]  # json_transform structure of a LogEntry's kept columns

    @classmethod
    def from_schema(cls, schema: Sequence[TableField]) -> SinkColumns:
        schema = local_fields(schema)
        columns = column_types(schema)
        payload_fields = record_fields(schema, PAYLOAD)
        payload = {f.name: duckdb_type(f) for f in payload_fields}
        for key in REQUIRED_ENVELOPE_KEYS:
            if key not in payload:
                raise SinkSchemaError(f"sink schema's {PAYLOAD} has no {key!r} field")
        structure = {f.name: _structure(f) for f in schema}
        return cls(columns, payload, structure)

    def line_structure(self) -> dict[str, Any]:
        """json_transform structure of one emitter line (payload plus lifted keys)."""
        payload_structure: Mapping[str, Any] = self.structure[PAYLOAD]
        lifted = {key: self.structure[col] for key, col in LIFTED.items() if col in self.columns}
        return {**payload_structure, **lifted}

    def line_columns(self) -> dict[str, str]:
        """read_json columns of one emitter line."""
        lifted = {key: self.columns[col] for key, col in LIFTED.items() if col in self.columns}
        return {**self.payload, **lifted}


def _structure(field: TableField) -> Any:
    """A BigQuery field as a json_transform structure (dicts, one-item lists, type names)."""
    if field.is_record:
        inner: Any = {child.name: _structure(child) for child in field.fields}
    else:
        inner = duckdb_type(replace(field, mode="NULLABLE"))
    if field.mode == "REPEATED":
        return [inner]
    return inner


def _select_list(sink: SinkColumns, shape: Shape, prefix: str) -> str:
    """Select list producing sink columns by name from a read record (``prefix`` + key)."""
    if shape is Shape.ENTRY:
        return ", ".join(
            f"{prefix}{quote_identifier(name)} AS {quote_identifier(name)}" for name in sink.columns
        )
    parts = [
        f"{prefix}{quote_identifier(key)} AS {quote_identifier(col)}"
        for key, col in LIFTED.items()
        if col in sink.columns
    ]
    # Cloud Logging lifts `time` and `severity` out of the payload, so they stay NULL there.
    packed = ", ".join(
        f"{sql_string(name)}: "
        + ("NULL" if name in LIFTED else f"{prefix}{quote_identifier(name)}")
        for name in sink.payload
    )
    parts.append(f"{{{packed}}} AS {quote_identifier(PAYLOAD)}")
    return ", ".join(parts)


def _columns_literal(columns: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{sql_string(k)}: {sql_string(v)}" for k, v in columns.items()) + "}"


TELEMETRY_FILTER = " AND ".join(
    f"{quote_identifier(PAYLOAD)}.{quote_identifier(key)} IS NOT NULL"
    for key in REQUIRED_ENVELOPE_KEYS
)


def bulk_insert(
    table: str,
    path: str,
    sink: SinkColumns,
    shape: Shape,
    *,
    gzip: bool,
    only_telemetry: bool,
) -> str:
    """Insert every non-blank line of a JSON-lines file, parsed by DuckDB's own reader.

    Lines that are not JSON objects (plain text, truncated JSON) arrive as all-NULL rows
    when ``only_telemetry`` is false, so the insert's row count is the file's line count;
    ``delete_non_telemetry`` then removes them in the same transaction.
    """
    columns = sink.columns if shape is Shape.ENTRY else sink.line_columns()
    source = (
        f"read_json({sql_string(path)}, format = 'newline_delimited', ignore_errors = true, "
        # By content, not by name: DuckDB would guess from the extension.
        f"compression = {sql_string('gzip' if gzip else 'none')}, "
        f"columns = {_columns_literal(columns)})"
    )
    select = f"SELECT {_select_list(sink, shape, '')} FROM {source}"
    if only_telemetry:
        select = f"SELECT * FROM ({select}) WHERE {TELEMETRY_FILTER}"
    return f"INSERT INTO {quote_identifier(table)} BY NAME {select}"


def delete_non_telemetry(table: str) -> str:
    return f"DELETE FROM {quote_identifier(table)} WHERE NOT ({TELEMETRY_FILTER})"


def batch_insert(table: str, sink: SinkColumns, shape: Shape) -> str:
    """Insert a batch of raw JSON texts (parameter $1, a list), typed by json_transform."""
    structure = sink.structure if shape is Shape.ENTRY else sink.line_structure()
    transform = f"json_transform(raw, {sql_string(json.dumps(structure))})"
    select = _select_list(sink, shape, "j.")
    return (
        f"INSERT INTO {quote_identifier(table)} BY NAME SELECT * FROM ("
        f"SELECT {select} FROM (SELECT {transform} AS j "
        f"FROM (SELECT unnest($1::VARCHAR[]) AS raw))) WHERE {TELEMETRY_FILTER}"
    )
