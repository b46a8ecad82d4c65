"""The envelope every emitted line carries, and the emitter's ``telemetry_rejected`` line.

One definition: the emitter writes these keys and reasons, the views and ``check-logs``
read them.
"""

from __future__ import annotations

from enum import StrEnum

# Written first on every line, in this order.
ENVELOPE_HEAD: tuple[str, ...] = ("event", "schema_version", "severity", "time")
# Written last, only when non-empty / non-zero.
ENVELOPE_TAIL: tuple[str, ...] = ("invalid_fields", "unknown_fields")
ENVELOPE_KEYS: frozenset[str] = frozenset(ENVELOPE_HEAD + ENVELOPE_TAIL)
# Keys every line's envelope already uses (and the LogEntry's timestamp); a field may
# not shadow them.
RESERVED_FIELD_NAMES: frozenset[str] = ENVELOPE_KEYS | {"timestamp"}
# What reports and telemetry_quality show for a name in invalid_fields that is not a field
# of the event: the name itself is never shown (it could be personal data).
NOT_A_FIELD = "<not a field>"

# The severity of every line the emitter writes (Cloud Logging lifts it).
SEVERITY = "INFO"
# What ``unknown_fields`` says when a call passed keys the event does not define: a flag,
# never a count (issue 36). Lines written before may hold a larger count.
UNKNOWN_FLAG = 1

REJECTED_EVENT = "telemetry_rejected"
REJECTED_SCHEMA_VERSION = 1


class RejectReason(StrEnum):
    """Why a call wrote a ``telemetry_rejected`` line instead of its event."""

    UNKNOWN_EVENT = "unknown_event"  # a name that is not in the catalogue
    BAD_EVENT_TYPE = "bad_event_type"  # not a name, an event model or an event instance
    INTERNAL_ERROR = "internal_error"  # the emitter itself failed; the call still returned
    # A model of a catalogue event at another schema_version than the current one (a
    # retired class): only the current version is written, so a stale service shows up.
    RETIRED_VERSION = "retired_version"
