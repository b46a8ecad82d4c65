"""One judgement of a telemetry record's values, shared by ``preview`` and ``check-logs``.

``preview`` loads what this module reads (and NULL for what it refuses) into the sink
table, so the views show a value exactly when ``check-logs``, which asks this module
too, reports it valid. The views read every value defensively (``SAFE_CAST`` to FLOAT64
then a bounds and integrality check for integers), so the same readings are accepted
here:

- integer fields: a JSON integer; a JSON number with an integral value (``1.0``: Cloud
  Logging keeps JSON numbers as doubles); a string holding a JSON number with an
  integral value (``"5"``: BigQuery read-backs write every value as a string);
- booleans: ``true``/``false``, or the strings ``"true"``/``"false"`` (read-backs);
- closed sets (enum fields), ``event``: a JSON string only;
- ``invalid_fields``: a JSON array; its strings;
- timestamps: an emitter line's ``time`` in RFC 3339 (0 to 9 fractional digits,
  truncated to microseconds; ``Z`` or an offset), which is what Cloud Logging lifts; a
  LogEntry's or row's ``timestamp`` also in BigQuery's ``2026-05-09 07:35:25[.ffffff]``
  with `` UTC`` or no zone (read-backs); anything else reads as NULL.

Anything else is refused: NULL in the sink, a ``type`` violation in ``check-logs``. A
value read from a string or a double is a coercion, which ``check-logs`` counts apart
(and, with ``--strict-types``, reports as a ``type`` violation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal

from agent_telemetry.views import JSON_NUMBER, payload_fields
from agent_telemetry.warehouse._reading.records import Shape, Telemetry

if TYPE_CHECKING:
    from agent_telemetry.schema import EventSpec

ValueKind = Literal["int", "string", "bool", "strings"]
_INT64 = (-(2**63), 2**63 - 1)
# A JSON number, as BigQuery read-backs write numbers inside strings.
_NUMBER = re.compile(JSON_NUMBER)
_TIMESTAMP = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-]\d{2}:\d{2})| UTC)?"
)
# What Cloud Logging lifts from a line's `time`: RFC 3339, a `T` and a zone.
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})"
)
# The emitter's own format (check-logs --strict-types): RFC 3339 UTC, microseconds, Z.
_EMITTER_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
_BOOLEANS = {"true": True, "false": False}


class Coercion(StrEnum):
    """How a value arrived when it was not in the emitter's own JSON type."""

    NUMBER_AS_STRING = "numbers_as_strings"  # "5": BigQuery read-backs
    BOOLEAN_AS_STRING = "booleans_as_strings"  # "true": BigQuery read-backs
    INTEGRAL_DOUBLE = "integral_doubles"  # 5.0: Cloud Logging keeps numbers as doubles


class _Invalid:
    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()
Reading = tuple[Any, Coercion | None]
_REFUSED: Reading = (INVALID, None)


def read_int(value: object) -> Reading:
    """An integer, however the views would read it; INVALID when they read NULL for
    its type (a non-integral number is INVALID: no integer field allows it)."""
    kind = type(value)
    if kind is int:
        return value, None
    if kind is float:
        assert isinstance(value, float)
        if value.is_integer():  # False for inf and nan
            return int(value), Coercion.INTEGRAL_DOUBLE
        return _REFUSED
    if kind is str:
        assert isinstance(value, str)
        match = _NUMBER.fullmatch(value)
        if match is None:
            return _REFUSED
        if match.group(1) is None and match.group(2) is None:
            try:
                return int(value), Coercion.NUMBER_AS_STRING
            except ValueError:  # more digits than Python converts: no field's bound
                return _REFUSED
        number = float(value)
        if number.is_integer():
            return int(number), Coercion.NUMBER_AS_STRING
    return _REFUSED


def read_string(value: object) -> Reading:
    return (value, None) if type(value) is str else _REFUSED


def read_bool(value: object) -> Reading:
    if type(value) is bool:
        return value, None
    if type(value) is str and value in _BOOLEANS:
        return _BOOLEANS[value], Coercion.BOOLEAN_AS_STRING
    return _REFUSED


def read_strings(value: object) -> Reading:
    """``invalid_fields``: the strings of a JSON array (anything else in it is dropped)."""
    if type(value) is not list:
        return _REFUSED
    assert isinstance(value, list)
    return [item for item in value if type(item) is str], None


READERS = {"int": read_int, "string": read_string, "bool": read_bool, "strings": read_strings}


def read_timestamp(value: object) -> str | None:
    """The instant as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (UTC), or None when it is none of
    the accepted forms. Equal strings are equal instants (a key for duplicates)."""
    if type(value) is not str:
        return None
    assert isinstance(value, str)
    match = _TIMESTAMP.fullmatch(value)
    if match is None:
        return None
    date, time, fraction, _zulu, offset = match.groups()
    micros = (fraction or "")[:6].ljust(6, "0")
    try:
        if offset is None or offset in ("+00:00", "-00:00"):
            datetime.fromisoformat(f"{date}T{time}")  # a real date and time of day
            return f"{date}T{time}.{micros}Z"
        when = datetime.fromisoformat(f"{date}T{time}.{micros}{offset}").astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    return when.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def time_of(telemetry: Telemetry) -> str | None:
    """When a telemetry record happened, as ``read_timestamp`` writes it: an emitter
    line's ``time`` only when it is RFC 3339 (what Cloud Logging lifts into the entry's
    timestamp), an entry's or row's ``timestamp`` in any accepted form."""
    value = telemetry.time
    if type(value) is not str:
        return None
    assert isinstance(value, str)
    if _EMITTER_TIME.fullmatch(value):  # the emitter's own format is already canonical
        try:
            datetime.fromisoformat(value[:-1])
        except ValueError:
            return None
        return value
    if telemetry.shape is Shape.EMITTER and not _RFC3339.fullmatch(value):
        return None
    return read_timestamp(value)


def is_emitter_time(value: object) -> bool:
    """Whether ``value`` is the emitter's exact time format (RFC 3339 UTC, microseconds, Z)."""
    return (
        isinstance(value, str)
        and bool(_EMITTER_TIME.fullmatch(value))
        and (read_timestamp(value) is not None)
    )


def payload_kinds(specs: tuple[EventSpec, ...] | None = None) -> dict[str, ValueKind]:
    """How each payload key is read, from the pinned sink schema's types (of ``specs``'
    catalogue; default: the package's own events)."""
    kinds: dict[str, ValueKind] = {}
    by_type: dict[str, ValueKind] = {"INTEGER": "int", "BOOLEAN": "bool"}
    for field in payload_fields(specs):
        repeated = field.mode == "REPEATED"
        kinds[field.name] = "strings" if repeated else by_type.get(field.type, "string")
    return kinds


PAYLOAD_KINDS: dict[str, ValueKind] = payload_kinds()
# Cloud Logging lifts these keys of an emitter line into the LogEntry.
LIFTED_KEYS = frozenset({"time", "severity"})


class _Never:
    """A type no decoded JSON value has: a list must always be read (its items too)."""


# The Python type a value already has when it needs no reading.
_NATIVE: dict[ValueKind, type] = {"int": int, "string": str, "bool": bool, "strings": _Never}


class SinkPayload:
    """The payload as the sink table holds it: each key with a column read as its type
    reads it (``READERS``); refused values and other keys left out (NULL).

    Called once per telemetry record: values already of their type (nearly all) are
    taken in one comprehension; only the rest go through the readers one by one.
    """

    def __init__(
        self, keep: frozenset[str], kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS
    ) -> None:
        entry = {key: kind for key, kind in kinds.items() if key in keep}
        # Cloud Logging lifts these out of an emitter line's payload.
        emitter = {key: kind for key, kind in entry.items() if key not in LIFTED_KEYS}
        self._plans = {
            shape: (plan, {key: _NATIVE[kind] for key, kind in plan.items()}, plan.keys())
            for shape, plan in ((Shape.EMITTER, emitter), (Shape.ENTRY, entry))
        }
        self._plans[Shape.ANALYTICS] = self._plans[Shape.ENTRY]

    def __call__(self, telemetry: Telemetry) -> dict[str, Any]:
        kinds, natives, keys = self._plans[telemetry.shape]
        low, high = _INT64
        payload = telemetry.payload
        row = {
            key: value
            for key, value in payload.items()
            if (found := type(value)) is natives.get(key)
            and (found is not int or low <= value <= high)
        }
        for key in (payload.keys() - row.keys()) & keys:
            value = payload[key]
            if value is None:
                continue
            kind = kinds[key]
            read = READERS[kind](value)[0]
            if read is not INVALID and (kind != "int" or low <= read <= high):
                row[key] = read
        return row


def insert_id(telemetry: Telemetry) -> str | None:
    value = telemetry.insert_id
    return value if type(value) is str else None


class Duplicates:
    """LogEntries seen before in this run, by insert id and timestamp (exports are not
    de-duplicated; the views keep one row per entry the same way). Records without an
    insert id (the emitter's own lines) are never duplicates. Holds a 64-bit hash per
    entry, not the entry."""

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def seen(self, entry_id: str | None, timestamp: str | None) -> bool:
        """Whether this entry was seen before; records it if not."""
        if entry_id is None or timestamp is None:
            return False
        key = hash((entry_id, timestamp))
        if key in self._seen:
            return True
        self._seen.add(key)
        return False
