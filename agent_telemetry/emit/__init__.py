"""The emitter services import: validated, Cloud Logging-ready JSON lines.

- ``emit(event, /, **fields)``: validate with the event's model, write one line;
- ``configure(*, stream=None, strict=None)`` and ``reset_defaults()``;
- ``capture()``: the records emitted inside a block, for a service's own tests (the
  pytest fixture ``telemetry_capture`` wraps it);
- ``counters()``: what was written, dropped and rejected, for a service's metrics.

Built on structlog with its own logger and processors: importing or using it never
calls ``structlog.configure`` and never touches ``logging``. It imports no heavier
dependency than pydantic, structlog and orjson.
"""

from agent_telemetry.emit._capture import capture
from agent_telemetry.emit._config import (
    Settings,
    configure,
    counters,
    reset_counters,
    reset_defaults,
    settings,
)
from agent_telemetry.emit._counters import TelemetryCounters
from agent_telemetry.emit._emit import emit
from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.schema.envelope import REJECTED_EVENT, RejectReason

__all__ = [
    "REJECTED_EVENT",
    "Problem",
    "RejectReason",
    "Settings",
    "TelemetryCounters",
    "TelemetryValidationError",
    "capture",
    "configure",
    "counters",
    "emit",
    "reset_counters",
    "reset_defaults",
    "settings",
]
