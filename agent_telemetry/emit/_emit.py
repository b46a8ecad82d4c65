"""``emit``: the one call services make."""

from __future__ import annotations

import threading
from typing import Any, Final

from agent_telemetry.emit._config import CURRENT, SHARED
from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.emit._processors import Record
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.envelope import RejectReason

# Per thread, "emitting" is in its dict while that thread is inside ``emit``. The dict is
# fetched once per call: one thread-local lookup, then plain dict operations (measured:
# a third of the cost of reading and setting a threading.local attribute twice).
_THREAD: Final = threading.local()
_INTERNAL_ERROR: Final = RejectReason.INTERNAL_ERROR


def emit(event: str | type[TelemetryEvent] | TelemetryEvent, /, **fields: Any) -> Record | None:
    """Validate one event and write it as one JSON line; return the record written.

    ``event`` is an event name (``"pipeline_run"``), an event model class, or an event
    instance (then pass no fields). Anything else is typed as an error but, at run time,
    handled like any other invalid input. Returns the dict that was written (or captured), or
    None when nothing was written.

    Lenient mode (the default) never raises for any input: invalid values are dropped
    and named in ``invalid_fields``, unknown keys are dropped and flagged in
    ``unknown_fields`` (1, never their count), an unknown event writes a
    ``telemetry_rejected`` line, and a failed write is counted. Strict mode raises
    ``TelemetryValidationError`` instead.

    A call made while the same thread is already inside ``emit`` (from a signal handler,
    the stream's own ``write``, a clock, a value's ``__str__``) is dropped and counted in
    ``reentrant_dropped``: its line would otherwise land inside the one being written.

    Only ``BaseException``s that are not ``Exception``s (``KeyboardInterrupt``,
    ``SystemExit``) pass through, deliberately: swallowing a real Ctrl-C is worse. Below,
    every call sits inside a ``try``: at the recursion limit any call can raise.
    """
    state = _THREAD.__dict__
    if "emitting" in state:
        try:
            with SHARED.count_lock:  # re-entrant: this thread may be the one counting
                SHARED.counters.reentrant_dropped += 1
        except Exception:
            pass
        return None
    # No call between this store and the ``try``, so nothing (not even an exception a
    # signal handler raises) can leave it set.
    state["emitting"] = True
    try:
        logger = CURRENT.logger
        try:
            return logger.emit(event, fields)
        except TelemetryValidationError:
            if logger.strict:  # the strict chain's own error; lenient swallows even this
                raise
        except Exception:
            pass
        # Outside the except block, so nothing raised below carries the failure as context.
        try:
            with SHARED.count_lock:
                SHARED.counters.internal_errors += 1
            if not logger.strict:
                return logger.reject(_INTERNAL_ERROR)
        except Exception:
            return None
        # Strict only. At the recursion limit, building it may raise RecursionError instead.
        raise TelemetryValidationError(None, (Problem(None, _INTERNAL_ERROR.value),))
    finally:
        del state["emitting"]
