"""The schema lock: the resolved schema of every event version, as committed JSON.

The lock is what the compatibility rules compare against: it records, per event and
per ``schema_version``, the fields in model order with their kind, sink type,
requiredness, members (sorted: member order means nothing to a reader) and bounds,
plus a sha256 of each description (a description edit changes the lock, never a
reader), and the reviewed exceptions to the definition rules in full: a field's
cardinality waiver (INT_CARDINALITY) and its name review (FIELD_NAME_NO_IDENTIFIER),
so adding or changing one shows in the lock's diff. ``agent-telemetry lock`` writes it;
it is committed and reviewed like code.

Versions: the lock has one entry per registered model (``EVENT_VERSIONS``: the
current models and the retired ones). When an event's ``schema_version`` is bumped, the
old class stays as a retired model, so its entry stays (and its view), and the new
version is a new entry, checked as a new event. The lock is a function of the models
alone: a version whose model is gone leaves the lock, which shows up as a deletion.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_telemetry._files import read_text_or_none
from agent_telemetry._text import clean
from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.schema.capacity import event_capacity, field_values, show_bits, tenths
from agent_telemetry.schema.spec import DataReview, EventSpec, FieldSpec

LOCK_FORMAT: Literal[1] = 1
LOCK_PATH = Path(__file__).with_name("schema.lock.json")
GENERATED_BY = "agent-telemetry lock (do not edit by hand)"


class LockFormatError(AgentTelemetryError, ValueError):
    """The lock file is not a lock this version can read; the message says where."""


def description_sha256(text: str) -> str:
    """Hash of a description with its whitespace normalised (re-wrapping is no change)."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class LockedField(_Frozen):
    """One field of one event version, as the sink and the views see it."""

    name: str
    kind: Literal["enum", "int", "bool"]
    type: Literal["STRING", "INTEGER", "BOOLEAN"]
    required: bool
    members: tuple[str, ...] | None = None
    ge: int | None = None
    le: int | None = None
    description_sha256: str
    cardinality_waiver: str | None = None
    name_review: str | None = None
    precision: int | None = None
    # Capacity (schema.capacity), recorded for readers of the lock; the compatibility
    # rules recount it from the fields above, so a lock written before it existed
    # compares the same.
    values: int | None = None
    bits: float | None = None

    def spec(self) -> FieldSpec:
        """The field as a spec, for the capacity function (descriptions are not kept)."""
        return FieldSpec(
            name=self.name,
            kind=self.kind,
            required=self.required,
            description="",
            members=tuple(self.members or ()),
            ge=self.ge,
            le=self.le,
            precision=self.precision,
        )


class LockedReview(_Frozen):
    """A data review recorded on an event version (``DataReview``), with the event and
    version it names (None in a lock written before reviews named one: such a review
    approves no growth)."""

    reference: str
    reason: str
    bits: float
    event: str | None = None
    schema_version: int | None = None


class LockedEvent(_Frozen):
    """One version of one event."""

    description_sha256: str
    fields: tuple[LockedField, ...]
    capacity_values: int | None = None
    capacity_bits: float | None = None
    data_reviews: tuple[LockedReview, ...] = ()

    def spec(self, name: str, version: int) -> EventSpec:
        """The version as a spec, for the capacity function."""
        return EventSpec(name, version, "", tuple(f.spec() for f in self.fields))

    def field(self, name: str) -> LockedField | None:
        for field in self.fields:
            if field.name == name:
                return field
        return None

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.fields)


class SchemaLock(_Frozen):
    """Every locked event version: ``events[name][schema_version]``."""

    lock_format: Literal[1] = LOCK_FORMAT
    generated_by: str = GENERATED_BY
    events: dict[str, dict[int, LockedEvent]] = Field(default_factory=dict)

    def versions(self) -> Iterable[tuple[str, int, LockedEvent]]:
        """(event, version, entry) in lock order: events by name, versions ascending."""
        for name in sorted(self.events):
            for version in sorted(self.events[name]):
                yield name, version, self.events[name][version]


def lock_field(spec: FieldSpec) -> LockedField:
    return LockedField(
        name=spec.name,
        kind=spec.kind,
        type=spec.bigquery_type,
        required=spec.required,
        members=tuple(sorted(spec.members)) if spec.kind == "enum" else None,
        ge=spec.ge if spec.kind == "int" else None,
        le=spec.le if spec.kind == "int" else None,
        description_sha256=description_sha256(spec.description),
        cardinality_waiver=spec.waiver,
        name_review=spec.name_review,
        precision=spec.precision if spec.kind == "int" else None,
        values=field_values(spec),
        bits=_bits(field_values(spec)),
    )


def _bits(values: int) -> float:
    return float(show_bits(tenths(values)))


def lock_review(review: DataReview) -> LockedReview:
    return LockedReview(
        reference=review.reference,
        reason=review.reason,
        bits=review.bits,
        event=review.event,
        schema_version=review.schema_version,
    )


def lock_event(spec: EventSpec) -> LockedEvent:
    capacity = event_capacity(spec)
    return LockedEvent(
        description_sha256=description_sha256(spec.description),
        fields=tuple(lock_field(field) for field in spec.fields),
        capacity_values=capacity.values,
        capacity_bits=_bits(capacity.values),
        data_reviews=tuple(lock_review(r) for r in spec.reviews),
    )


def build_lock(specs: Iterable[EventSpec]) -> SchemaLock:
    """The lock of ``specs``: every version of every event (``version_catalogue()``)."""
    events: dict[str, dict[int, LockedEvent]] = {}
    for spec in specs:
        events.setdefault(spec.name, {})[spec.schema_version] = lock_event(spec)
    return SchemaLock(events=events)


def _field_json(field: LockedField) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": field.name,
        "kind": field.kind,
        "type": field.type,
        "required": field.required,
    }
    if field.members is not None:
        out["members"] = sorted(field.members)
    if field.ge is not None or field.le is not None:
        out["ge"] = field.ge
        out["le"] = field.le
    if field.precision is not None:
        out["precision"] = field.precision
    out["description_sha256"] = field.description_sha256
    # Only when present: a lock without reviewed exceptions reads as before.
    if field.cardinality_waiver is not None:
        out["cardinality_waiver"] = field.cardinality_waiver
    if field.name_review is not None:
        out["name_review"] = field.name_review
    out["values"] = field.values
    out["bits"] = field.bits
    return out


def _event_json(event: LockedEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description_sha256": event.description_sha256,
        "capacity_values": event.capacity_values,
        "capacity_bits": event.capacity_bits,
    }
    if event.data_reviews:
        out["data_reviews"] = [
            {
                "reference": r.reference,
                "reason": r.reason,
                "bits": r.bits,
                "event": r.event,
                "schema_version": r.schema_version,
            }
            for r in event.data_reviews
        ]
    out["fields"] = [_field_json(f) for f in event.fields]
    return out


def lock_json(lock: SchemaLock) -> dict[str, Any]:
    """The lock as plain JSON data in canonical order (fields keep model order)."""
    return {
        "lock_format": lock.lock_format,
        "generated_by": GENERATED_BY,
        "events": {
            name: {
                str(version): _event_json(lock.events[name][version])
                for version in sorted(lock.events[name])
            }
            for name in sorted(lock.events)
        },
    }


def dump_lock(lock: SchemaLock) -> str:
    """Canonical text of the lock: the same lock always gives the same bytes."""
    return json.dumps(lock_json(lock), indent=2, ensure_ascii=True) + "\n"


def parse_lock(data: Mapping[str, Any]) -> SchemaLock:
    """A lock from JSON data (for example a mutated copy in a test)."""
    try:
        return SchemaLock.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise LockFormatError(f"not a schema lock: {where}: {first['msg']}") from None


def load_lock(text: str, source: str = "schema.lock.json") -> SchemaLock:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LockFormatError(f"{source}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise LockFormatError(f"{source}: not a schema lock: the top level is not an object")
    try:
        return parse_lock(data)
    except LockFormatError as exc:
        raise LockFormatError(f"{source}: {exc}") from None


def read_lock(path: Path) -> SchemaLock | None:
    """The lock at ``path``, or None when there is no file. A symlink, or a file that is
    not UTF-8, raises ``FileRefusedError``."""
    text = read_text_or_none(path)
    if text is None:
        return None
    return load_lock(text, clean(path))


_EVENT_LINE = re.compile(r'^ {4}"([^"]+)": \{$')
_VERSION_LINE = re.compile(r'^ {6}"(\d+)": \{$')
_FIELD_LINE = re.compile(r'^ {12}"name": "([^"]+)",$')


def lock_lines(text: str) -> dict[tuple[str, int | None, str | None], int]:
    """1-based line numbers in canonical lock text: (event, None, None) is the event's line,
    (event, version, None) the version's, (event, version, field) the field's name line."""
    lines: dict[tuple[str, int | None, str | None], int] = {}
    event: str | None = None
    version: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _EVENT_LINE.match(line):
            event, version = match.group(1), None
            lines[(event, None, None)] = number
        elif (match := _VERSION_LINE.match(line)) and event is not None:
            version = int(match.group(1))
            lines[(event, version, None)] = number
        elif (match := _FIELD_LINE.match(line)) and event is not None and version is not None:
            lines[(event, version, match.group(1))] = number
    return lines
