"""The telemetry processor chain: plain structlog processors, each testable alone.

``(logger, method_name, event_dict) -> event_dict``, run in this order:

1. ``resolve_event``: ``event_dict["event"]`` (a name, model class or instance) -> a plan,
   or a closed-set reject reason;
2. ``validated_record``: ``event_dict["fields"]`` -> the line's dict, in envelope order
   (orjson keeps insertion order): validated values, the names of invalid fields, the
   count of unknown keys. Valid fields take the hot path (``_fast_record``: one
   validator call returns the record); anything else goes to the model (``check``);
3. ``render_line``: the final processor; one orjson call, newline included.

The chain reads the mode from ``event_dict["strict"]`` and the clock from
``event_dict["clock"]`` (None: the real clock), bound into the logger's context by
``configure``. The line's ``time`` is ``stamp(clock)``: without a clock that is the
same one call of ``rfc3339_utc()`` the hot path made before the option existed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from structlog.typing import EventDict, WrappedLogger

from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.emit._time import rfc3339_utc
from agent_telemetry.emit._validate import (
    STATE,
    Plan,
    check,
    plan_by_name,
    resolve,
)
from agent_telemetry.schema.envelope import (
    ENVELOPE_KEYS,
    REJECTED_EVENT,
    REJECTED_SCHEMA_VERSION,
    SEVERITY,
    UNKNOWN_FLAG,
    RejectReason,
)

Record = dict[str, Any]
_NO_KWARGS: dict[str, Any] = {}  # structlog only unpacks it; never mutated
_dumps = orjson.dumps
_APPEND_NEWLINE = orjson.OPT_APPEND_NEWLINE
Clock = Callable[[], int]
# Set by ``TelemetryLogger.emit`` when the hot path already refused the fields: the
# model decides without asking it again.
CAREFUL = "careful"


def stamp(clock: Clock | None) -> str:
    """The line's ``time``: now, or what the configured clock says (integer nanoseconds)."""
    if clock is None:
        return rfc3339_utc()
    ns = clock()
    if type(ns) is not int:
        raise TypeError("the configured clock must return integer nanoseconds")
    return rfc3339_utc(ns)


def resolve_event(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """``event`` -> ``plan``, or ``reason`` (strict mode raises instead)."""
    event = event_dict.get("event")  # structlog leaves the key out when event is None
    if type(event) is str:
        active = STATE.active
        plan = active.by_name.get(event) or plan_by_name(event, active)
        if plan is not None:
            event_dict["plan"] = plan
            return event_dict
    elif "reason" in event_dict:  # already rejected by the caller (``TelemetryLogger.reject``)
        event_dict["plan"] = None
        return event_dict
    resolved = resolve(event)
    if resolved.reason is not None:
        if event_dict.get("strict"):
            if resolved.reason is RejectReason.RETIRED_VERSION:
                hint = "a retired schema_version; emit the event's current model (EVENTS)"
            else:
                known = ", ".join(STATE.active.catalogue.events)
                hint = (
                    f"known events: {known}; an event model must be the configured "
                    "catalogue's own (configure(catalogue=...))"
                )
            problem = Problem(None, resolved.reason.value, hint)
            raise TelemetryValidationError(None, (problem,))
        event_dict["reason"] = resolved.reason
        event_dict["plan"] = None
        return event_dict
    event_dict["plan"] = resolved.plan
    if resolved.instance_fields is not None:
        # An instance carries its own fields; keywords passed beside it are not used.
        if event_dict["fields"]:
            event_dict["extra_unknown"] = len(event_dict["fields"])
        event_dict["fields"] = resolved.instance_fields
    return event_dict


def validated_record(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """``fields`` -> the line's record (strict mode raises on any invalid or unknown field).

    A fresh dict in line order: the envelope, the validated values in model order, then
    ``invalid_fields`` and the ``unknown_fields`` flag when non-empty. The scratch keys of earlier
    processors stay behind. Validating and building are one processor because on the
    hot path one validator call returns the record itself.
    """
    plan = event_dict["plan"]  # None: rejected, ``reason`` says why
    if plan is None:
        return rejected_record(event_dict["reason"], event_dict.get("clock"))
    fields = event_dict["fields"]
    # "extra_unknown": keywords passed beside an instance; only the model counts them.
    if plan.fast is not None and "extra_unknown" not in event_dict and CAREFUL not in event_dict:
        try:
            record: Record = plan.fast(fields)
        except Exception:
            pass  # decided below by the model, whatever went wrong here
        else:
            clock = event_dict.get("clock")
            record["time"] = rfc3339_utc() if clock is None else stamp(clock)
            return record
    extra_unknown = event_dict.get("extra_unknown", 0)
    values, invalid, unknown = check(plan, fields, event_dict["strict"], extra_unknown)
    return record_of(plan, values, invalid, unknown, event_dict.get("clock"))


def record_of(
    plan: Plan,
    values: dict[str, Any],
    invalid: tuple[str, ...],
    unknown: int,
    clock: Clock | None = None,
) -> Record:
    """The envelope, then the ``values`` (in model order) that are not None.

    ``unknown_fields`` is a flag, always 1: how many unknown keys a call passed is a
    number the caller chooses, which capacity could not bound (schema.capacity).
    """
    record = {
        "event": plan.event,
        "schema_version": plan.schema_version,
        "severity": SEVERITY,
        "time": stamp(clock),
    }
    for name, value in values.items():
        if value is not None:
            record[name] = value
    if invalid:
        record["invalid_fields"] = list(invalid)
    if unknown:
        record["unknown_fields"] = UNKNOWN_FLAG
    return record


def rejected_record(reason: RejectReason, clock: Clock | None = None) -> Record:
    """A ``telemetry_rejected`` line's record: the envelope and a closed-set ``reason``.

    A configured clock that fails stamps the real time here, so the rejection still lands.
    """
    try:
        time = stamp(clock)
    except Exception:
        time = rfc3339_utc()
    return {
        "event": REJECTED_EVENT,
        "schema_version": REJECTED_SCHEMA_VERSION,
        "severity": SEVERITY,
        "time": time,
        "reason": reason.value,
    }


def render_line(
    _logger: WrappedLogger, _method: str, event_dict: EventDict
) -> tuple[tuple[bytes, EventDict], dict[str, Any]]:
    """Final processor: the writer's arguments, the line as bytes and the record.

    A value orjson cannot write (none passes the re-check, but should one) costs only
    its own field: it is dropped and named in ``invalid_fields``, the line still lands.
    """
    try:
        line = _dumps(event_dict, None, _APPEND_NEWLINE)
    except Exception:
        line = _dumps(drop_unwritable(event_dict), None, _APPEND_NEWLINE)
    return (line, event_dict), _NO_KWARGS


def drop_unwritable(record: EventDict) -> EventDict:
    """Drop (in place) each field value orjson cannot write, naming it in
    ``invalid_fields``; the envelope keys stay where they are, in line order."""
    dropped: list[str] = []
    for name, value in list(record.items()):
        if name in ENVELOPE_KEYS:
            continue
        try:
            _dumps(value)
        except Exception:
            del record[name]
            dropped.append(name)
    if dropped:
        invalid = [n for n in record.pop("invalid_fields", ()) if type(n) is str]
        unknown = record.pop("unknown_fields", None)
        named = invalid + [n for n in dropped if n not in invalid]
        # In model order, as every other line's: the order must say nothing more.
        event = record.get("event")
        plan = plan_by_name(event) if type(event) is str else None
        if plan is not None:
            rank = {name: i for i, name in enumerate(plan.order)}
            named.sort(key=lambda name: rank.get(name, len(rank)))
        record["invalid_fields"] = named
        if unknown is not None:
            record["unknown_fields"] = unknown
    return record


PROCESSORS = (resolve_event, validated_record, render_line)
