"""DuckDB column types read off a BigQuery JSON table schema.

The local sink table is built from the same schema ``sink_schema`` gives BigQuery, so
there is one description of the sink; this module only translates its types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent_telemetry.errors import AgentTelemetryError

BigQueryField = Mapping[str, Any]

_SCALARS: Mapping[str, str] = {
    "STRING": "VARCHAR",
    "INTEGER": "BIGINT",
    "INT64": "BIGINT",
    "FLOAT": "DOUBLE",
    "FLOAT64": "DOUBLE",
    "NUMERIC": "DECIMAL(38, 9)",
    "BOOLEAN": "BOOLEAN",
    "BOOL": "BOOLEAN",
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


def duckdb_type(field: BigQueryField) -> str:
    """The DuckDB type of one BigQuery schema field (RECORD -> STRUCT, REPEATED -> list)."""
    name = str(field.get("name", "?"))
    bq_type = str(field.get("type", "")).upper()
    if bq_type in ("RECORD", "STRUCT"):
        children = field.get("fields") or ()
        if not children:
            raise SinkSchemaError(f"sink schema field {name!r}: a RECORD needs fields")
        inner = ", ".join(
            f"{quote_identifier(str(child['name']))} {duckdb_type(child)}" for child in children
        )
        base = f"STRUCT({inner})"
    elif bq_type in _SCALARS:
        base = _SCALARS[bq_type]
    else:
        raise SinkSchemaError(f"sink schema field {name!r}: unsupported type {bq_type or '?'}")
    if str(field.get("mode", "NULLABLE")).upper() == "REPEATED":
        return f"{base}[]"
    return base


def column_types(fields: Iterable[BigQueryField]) -> dict[str, str]:
    """Column name -> DuckDB type, in schema order."""
    columns: dict[str, str] = {}
    for field in fields:
        name = str(field["name"])
        if name in columns:
            raise SinkSchemaError(f"sink schema field {name!r} appears twice")
        columns[name] = duckdb_type(field)
    return columns


def record_fields(schema: Sequence[BigQueryField], name: str) -> Sequence[BigQueryField]:
    """The sub-fields of the top-level RECORD ``name`` (``jsonPayload``)."""
    for field in schema:
        if field.get("name") == name:
            if str(field.get("type", "")).upper() not in ("RECORD", "STRUCT"):
                raise SinkSchemaError(f"sink schema field {name!r} is not a RECORD")
            children: Sequence[BigQueryField] = field.get("fields") or ()
            return children
    raise SinkSchemaError(f"sink schema has no {name!r} column")


def create_table_sql(table: str, schema: Sequence[BigQueryField]) -> str:
    columns = ", ".join(
        f"{quote_identifier(name)} {kind}" for name, kind in column_types(schema).items()
    )
    return f"CREATE TABLE {quote_identifier(table)} ({columns})"
