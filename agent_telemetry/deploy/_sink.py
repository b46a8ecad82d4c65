"""The deployed sink table against the sink schema the models imply: what is missing, and
the additive patch that adds it.

A log sink that creates its own table adds a payload column only when a line first
carries that key, so a field that was never logged has no column and every view that
reads it fails its dry run. The patch only appends fields (NULLABLE, or REPEATED for
lists) at the end of the payload record: BigQuery allows nothing else, and nothing
existing is removed, reordered or retyped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import PAYLOAD_COLUMN, TableField, sink_fields

_SHARD_SUFFIX = re.compile(r"[0-9]{8}")


@dataclass(frozen=True, slots=True)
class MissingField:
    """A payload field the models define and the deployed sink table lacks."""

    path: str
    field: TableField

    def describe(self) -> str:
        return f"{self.path} {self.field.type_label()}"


def sink_table_name(config: DeploymentConfig, layout: Layout, table_names: Sequence[str]) -> str:
    """The sink table whose schema the views see: the table itself, or the newest date shard
    (a wildcard query takes its schema from the most recently created shard)."""
    table = config.source.table_for(layout)
    if not table.endswith("*"):
        return table
    prefix = table[:-1]
    shards = sorted(
        name
        for name in table_names
        if name.startswith(prefix) and _SHARD_SUFFIX.fullmatch(name[len(prefix) :])
    )
    return shards[-1] if shards else table


def desired_payload(layout: Layout, specs: tuple[EventSpec, ...] | None = None) -> TableField:
    payload = PAYLOAD_COLUMN[layout]
    for field in sink_fields(layout, specs):
        if field.name == payload:
            return field
    raise LookupError(f"sink schema has no {payload} record")  # pragma: no cover


def _find(fields: Sequence[TableField], name: str) -> TableField | None:
    # BigQuery column names are case-insensitive.
    return next((f for f in fields if f.name.lower() == name.lower()), None)


def _missing(deployed: TableField, desired: TableField, path: str) -> list[MissingField]:
    found: list[MissingField] = []
    for want in desired.fields:
        have = _find(deployed.fields, want.name)
        if have is None:
            found.append(MissingField(f"{path}.{want.name}", want))
        elif want.is_record and have.is_record:
            found.extend(_missing(have, want, f"{path}.{have.name}"))
    return found


def missing_payload_fields(
    deployed: Sequence[TableField], layout: Layout, specs: tuple[EventSpec, ...] | None = None
) -> tuple[MissingField, ...]:
    """Payload fields of the models' sink schema (of ``specs``; default: the package's
    events) that ``deployed`` lacks, in schema order."""
    desired = desired_payload(layout, specs)
    have = _find(deployed, desired.name)
    if have is None:
        return (MissingField(desired.name, desired),)
    if not have.is_record:
        # A payload that is not a record cannot take fields; the dry runs will say why.
        return ()
    return tuple(_missing(have, desired, have.name))


def _append(field: TableField, parts: Sequence[str], new: TableField) -> TableField:
    if not parts:
        return TableField(
            field.name, field.type, field.mode, field.description, (*field.fields, new)
        )
    head, rest = parts[0], parts[1:]
    children = tuple(
        _append(child, rest, new) if child.name.lower() == head.lower() else child
        for child in field.fields
    )
    return TableField(field.name, field.type, field.mode, field.description, children)


def patched_schema(
    deployed: Sequence[TableField], missing: Sequence[MissingField]
) -> tuple[TableField, ...]:
    """``deployed`` with every missing field appended to its record; nothing else changes."""
    schema = list(deployed)
    for item in missing:
        parts = item.path.split(".")
        if len(parts) == 1:
            schema.append(item.field)
            continue
        schema = [
            _append(top, parts[1:-1], item.field) if top.name.lower() == parts[0].lower() else top
            for top in schema
        ]
    return tuple(schema)
