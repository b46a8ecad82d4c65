"""Plain data the BigQuery adapter returns: no client objects, no google.cloud import."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_telemetry.errors import AgentTelemetryError


class BigQueryError(AgentTelemetryError):
    """A BigQuery call failed, or the client cannot be created; says which and why."""


_LEGACY_TYPES = {
    "INT64": "INTEGER",
    "FLOAT64": "FLOAT",
    "BOOL": "BOOLEAN",
    "STRUCT": "RECORD",
}


@dataclass(frozen=True, slots=True)
class TableField:
    """One schema field as the API reports it (legacy type names, mode always set)."""

    name: str
    type: str
    mode: str = "NULLABLE"
    description: str | None = None
    fields: tuple[TableField, ...] = ()

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> TableField:
        kind = str(data.get("type", "")).upper()
        return cls(
            name=str(data["name"]),
            type=_LEGACY_TYPES.get(kind, kind),
            mode=str(data.get("mode") or "NULLABLE").upper(),
            description=data.get("description") or None,
            fields=tuple(cls.from_api(f) for f in data.get("fields", ()) or ()),
        )

    def to_api(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "type": self.type, "mode": self.mode}
        if self.description:
            data["description"] = self.description
        if self.fields:
            data["fields"] = [f.to_api() for f in self.fields]
        return data

    def shape(self) -> tuple[Any, ...]:
        """Name, type, mode and nested shape: what a query sees, without descriptions."""
        return (self.name.lower(), self.type, self.mode, tuple(f.shape() for f in self.fields))


@dataclass(frozen=True, slots=True)
class TableState:
    """What ``tables.get`` says about a table or view."""

    table_id: str
    kind: str
    labels: dict[str, str] = field(hash=False)
    description: str | None
    schema: tuple[TableField, ...]
    view_query: str | None
    modified_ms: int | None


@dataclass(frozen=True, slots=True)
class DryRun:
    """A dry run's verdict: the output schema, or the server's error (first line)."""

    schema: tuple[TableField, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
