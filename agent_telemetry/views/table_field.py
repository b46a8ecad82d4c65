"""One field of a BigQuery table schema, and BigQuery's two spellings of its type.

The sink table the views read, the views' own columns and what the BigQuery API reports
about either are all ``TableField`` (views, warehouse and deploy share it). Its ``type``
is spelled the way BigQuery's JSON table schema spells it (``INTEGER``, ``FLOAT``,
``BOOLEAN``, ``RECORD``); GoogleSQL, the language of the view SQL, spells those four
``INT64``, ``FLOAT64``, ``BOOL`` and ``STRUCT``. The API accepts either spelling, so
``from_api`` keeps one.

Which type a model field gets is ``FieldSpec.bigquery_type`` (one entry per field kind,
in ``agent_telemetry.schema.spec``); the DuckDB name of each type is the warehouse's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The types whose GoogleSQL name differs from their JSON-schema name; the rest are the same.
_GOOGLESQL_NAMES: Mapping[str, str] = {
    "INTEGER": "INT64",
    "FLOAT": "FLOAT64",
    "BOOLEAN": "BOOL",
    "RECORD": "STRUCT",
}
_SCHEMA_NAMES: Mapping[str, str] = {sql: schema for schema, sql in _GOOGLESQL_NAMES.items()}

NULLABLE = "NULLABLE"
REPEATED = "REPEATED"


def googlesql_type(schema_type: str) -> str:
    """The GoogleSQL name of a JSON-schema type name (``INTEGER`` -> ``INT64``)."""
    return _GOOGLESQL_NAMES.get(schema_type, schema_type)


def schema_type(type_name: str) -> str:
    """The JSON-schema name of a type, spelled either way (``int64`` -> ``INTEGER``)."""
    upper = type_name.upper()
    return _SCHEMA_NAMES.get(upper, upper)


@dataclass(frozen=True, slots=True)
class TableField:
    """One schema field: JSON-schema type name, mode always set, sub-fields of a RECORD."""

    name: str
    type: str
    mode: str = NULLABLE
    description: str | None = None
    fields: tuple[TableField, ...] = ()

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> TableField:
        """A field of a BigQuery JSON schema (``bq show --schema``, ``to_api_repr``)."""
        return cls(
            name=str(data["name"]),
            type=schema_type(str(data.get("type", ""))),
            mode=str(data.get("mode") or NULLABLE).upper(),
            description=data.get("description") or None,
            fields=tuple(cls.from_api(f) for f in data.get("fields", ()) or ()),
        )

    @classmethod
    def from_googlesql(cls, name: str, sql_type: str, description: str | None) -> TableField:
        """A scalar or ``ARRAY<scalar>`` column as GoogleSQL declares it."""
        if sql_type.startswith("ARRAY<") and sql_type.endswith(">"):
            return cls(name, schema_type(sql_type[len("ARRAY<") : -1]), REPEATED, description)
        return cls(name, schema_type(sql_type), NULLABLE, description)

    def to_api(self) -> dict[str, Any]:
        """The field as BigQuery's JSON schema writes it."""
        data: dict[str, Any] = {"name": self.name, "type": self.type, "mode": self.mode}
        if self.description:
            data["description"] = self.description
        if self.fields:
            data["fields"] = [f.to_api() for f in self.fields]
        return data

    @property
    def is_record(self) -> bool:
        return self.type == "RECORD"

    def googlesql(self) -> str:
        """The column's GoogleSQL type: ``STRUCT<...>`` for a record, ``ARRAY<...>`` if repeated."""
        if self.is_record:
            inner = ", ".join(f"{f.name} {f.googlesql()}" for f in self.fields)
            kind = f"STRUCT<{inner}>"
        else:
            kind = googlesql_type(self.type)
        return f"ARRAY<{kind}>" if self.mode == REPEATED else kind

    def type_label(self) -> str:
        """The type as a plan shows it: ``ARRAY<INTEGER>`` for a repeated ``INTEGER``."""
        return f"ARRAY<{self.type}>" if self.mode == REPEATED else self.type

    def shape(self) -> tuple[Any, ...]:
        """Name, type, mode and nested shape: what a query sees, without descriptions."""
        return (self.name.lower(), self.type, self.mode, tuple(f.shape() for f in self.fields))
