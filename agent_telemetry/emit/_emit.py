"""``emit``: the one call services make."""

from __future__ import annotations

from typing import Any

from agent_telemetry.emit._config import CURRENT, SHARED
from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.emit._logger import TelemetryLogger
from agent_telemetry.emit._processors import Record
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.envelope import RejectReason


def emit(event: str | type[TelemetryEvent] | TelemetryEvent, /, **fields: Any) -> Record | None:
    """Validate one event and write it as one JSON line; return the record written.

    ``event`` is an event name (``"pipeline_run"``), an event model class, or an event
    instance (then pass no fields). Anything else is typed as an error but, at run time,
    handled like any other invalid input. Returns the dict that was written (or captured), or
    None when nothing was written.

    Lenient mode (the default) never raises for any input: invalid values are dropped
    and named in ``invalid_fields``, unknown keys are dropped and counted in
    ``unknown_fields``, an unknown event writes a ``telemetry_rejected`` line, and a
    failed write is counted. Strict mode raises ``TelemetryValidationError`` instead.

    Only ``BaseException``s that are not ``Exception``s (``KeyboardInterrupt``,
    ``SystemExit``) pass through, deliberately: swallowing a real Ctrl-C is worse.
    """
    logger = CURRENT.logger
    try:
        return logger.emit(event, fields)
    except TelemetryValidationError:
        if logger.strict:  # the strict chain's own error; lenient swallows even this
            raise
    except Exception:
        pass
    # Outside the except block, so nothing raised below carries the failure as context.
    return _internal_error(logger)


def _internal_error(logger: TelemetryLogger) -> Record | None:
    with SHARED.lock:
        SHARED.counters.internal_errors += 1
    if logger.strict:
        raise TelemetryValidationError(None, (Problem(None, RejectReason.INTERNAL_ERROR.value),))
    try:
        return logger.reject(RejectReason.INTERNAL_ERROR)
    except Exception:
        return None
