"""The telemetry processor chain: plain structlog processors, each testable alone.

``(logger, method_name, event_dict) -> event_dict``, run in this order:

1. ``resolve_event``: ``event_dict["event"]`` (a name, model class or instance) -> a plan,
   or a closed-set reject reason;
2. ``validate_fields``: ``event_dict["fields"]`` -> ``event_dict["checked"]``: the
   validated values, the names of invalid fields, the count of unknown keys;
3. ``build_record``: the line's dict, in envelope order (orjson keeps insertion order);
4. ``render_line``: the final processor; one orjson call, newline included.

The chain reads the mode from ``event_dict["strict"]``, bound into the logger's
context by ``configure``.
"""

from __future__ import annotations

from typing import Any

import orjson
from structlog.typing import EventDict, WrappedLogger

from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.emit._time import rfc3339_utc
from agent_telemetry.emit._validate import RejectReason, check, plan_by_name, resolve
from agent_telemetry.schema import EVENTS

REJECTED_EVENT = "telemetry_rejected"
REJECTED_SCHEMA_VERSION = 1
SEVERITY = "INFO"

Record = dict[str, Any]
_NO_KWARGS: dict[str, Any] = {}  # structlog only unpacks it; never mutated


def resolve_event(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """``event`` -> ``plan``, or ``reason`` (strict mode raises instead)."""
    event = event_dict.get("event")  # structlog leaves the key out when event is None
    if type(event) is str:
        plan = plan_by_name(event)
        if plan is not None:
            event_dict["plan"] = plan
            return event_dict
    elif "reason" in event_dict:  # already rejected by the caller (``TelemetryLogger.reject``)
        return event_dict
    resolved = resolve(event)
    if resolved.reason is not None:
        if event_dict.get("strict"):
            if resolved.reason is RejectReason.RETIRED_VERSION:
                hint = "a retired schema_version; emit the event's current model (EVENTS)"
            else:
                hint = f"known events: {', '.join(EVENTS)}; or pass an event model"
            problem = Problem(None, resolved.reason.value, hint)
            raise TelemetryValidationError(None, (problem,))
        event_dict["reason"] = resolved.reason
        return event_dict
    event_dict["plan"] = resolved.plan
    if resolved.instance_fields is not None:
        # An instance carries its own fields; keywords passed beside it are not used.
        event_dict["extra_unknown"] = len(event_dict["fields"])
        event_dict["fields"] = resolved.instance_fields
    return event_dict


def validate_fields(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """``fields`` -> ``checked`` (strict mode raises on any invalid or unknown field)."""
    plan = event_dict.get("plan")
    if plan is None:
        return event_dict
    event_dict["checked"] = check(
        plan, event_dict["fields"], event_dict["strict"], event_dict.get("extra_unknown", 0)
    )
    return event_dict


def build_record(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """A fresh dict in line order; the scratch keys of earlier processors stay behind."""
    plan = event_dict.get("plan")
    time = rfc3339_utc()
    if plan is None:
        return {
            "event": REJECTED_EVENT,
            "schema_version": REJECTED_SCHEMA_VERSION,
            "severity": SEVERITY,
            "time": time,
            "reason": event_dict["reason"].value,
        }
    values, invalid, unknown = event_dict["checked"]
    record = {
        "event": plan.event,
        "schema_version": plan.schema_version,
        "severity": SEVERITY,
        "time": time,
    }
    for name, value in values.items():
        if value is not None:
            record[name] = value
    if invalid:
        record["invalid_fields"] = list(invalid)
    if unknown:
        record["unknown_fields"] = unknown
    return record


def render_line(
    _logger: WrappedLogger, _method: str, event_dict: EventDict
) -> tuple[tuple[bytes, EventDict], dict[str, Any]]:
    """Final processor: the writer's arguments, the line as bytes and the record."""
    return (orjson.dumps(event_dict, option=orjson.OPT_APPEND_NEWLINE), event_dict), _NO_KWARGS


PROCESSORS = (resolve_event, validate_fields, build_record, render_line)
