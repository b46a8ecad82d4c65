"""DuckDB column types of a BigQuery table schema.

The local sink table is built from the same fields ``sink_fields`` gives BigQuery (or a
BigQuery JSON schema the caller passes), so there is one description of the sink; this
module only names its types in DuckDB.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.views import TableField

# DuckDB's name of each BigQuery type, by its JSON-schema name (TableField.type); RECORD
# and REPEATED are built below.
_DUCKDB_TYPES: Mapping[str, str] = {
    "STRING": "VARCHAR",
    "INTEGER": "BIGINT",
    "FLOAT": "DOUBLE",
    "NUMERIC": "DECIMAL(38, 9)",
    "BOOLEAN": "BOOLEAN",
    # BigQuery's TIMESTAMP is an instant; sqlglot transpiles it to DuckDB's TIMESTAMPTZ.
    "TIMESTAMP": "TIMESTAMPTZ",
    "DATETIME": "TIMESTAMP",
    "DATE": "DATE",
    "TIME": "TIME",
    "BYTES": "BLOB",
    "JSON": "JSON",
}


class SinkSchemaError(AgentTelemetryError, ValueError):
    """A sink schema field this warehouse cannot type."""


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_fields(schema: Sequence[Mapping[str, Any]]) -> tuple[TableField, ...]:
    """A BigQuery JSON schema (``sink_schema``, ``bq show --schema``) as ``TableField``s."""
    try:
        return tuple(TableField.from_api(field) for field in schema)
    except KeyError:
        raise SinkSchemaError("a sink schema field has no name") from None


def duckdb_type(field: TableField) -> str:
    """The DuckDB type of one BigQuery schema field (RECORD -> STRUCT, REPEATED -> list)."""
    if field.is_record:
        if not field.fields:
            raise SinkSchemaError(f"sink schema field {field.name!r}: a RECORD needs fields")
        inner = ", ".join(
            f"{quote_identifier(child.name)} {duckdb_type(child)}" for child in field.fields
        )
        base = f"STRUCT({inner})"
    elif field.type in _DUCKDB_TYPES:
        base = _DUCKDB_TYPES[field.type]
    else:
        raise SinkSchemaError(
            f"sink schema field {field.name!r}: unsupported type {field.type or '?'}"
        )
    if field.mode == "REPEATED":
        return f"{base}[]"
    return base


def column_types(fields: Iterable[TableField]) -> dict[str, str]:
    """Column name -> DuckDB type, in schema order."""
    columns: dict[str, str] = {}
    for field in fields:
        if field.name in columns:
            raise SinkSchemaError(f"sink schema field {field.name!r} appears twice")
        columns[field.name] = duckdb_type(field)
    return columns


def record_fields(schema: Sequence[TableField], name: str) -> Sequence[TableField]:
    """The sub-fields of the top-level RECORD ``name`` (``jsonPayload``)."""
    for field in schema:
        if field.name == name:
            if not field.is_record:
                raise SinkSchemaError(f"sink schema field {name!r} is not a RECORD")
            return field.fields
    raise SinkSchemaError(f"sink schema has no {name!r} column")


def create_table_sql(table: str, schema: Sequence[TableField]) -> str:
    columns = ", ".join(
        f"{quote_identifier(name)} {kind}" for name, kind in column_types(schema).items()
    )
    return f"CREATE TABLE {quote_identifier(table)} ({columns})"
