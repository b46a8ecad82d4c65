"""The emitter's own structlog logger: never ``structlog.configure``, never ``logging``.

A ``BoundLoggerBase`` subclass over a ``LineWriter``, with the telemetry processor
chain. The mode is bound into its context, so the processors read it as data.
"""

from __future__ import annotations

from typing import IO, Any

from structlog import BoundLoggerBase

from agent_telemetry.emit._output import LineWriter, Shared
from agent_telemetry.emit._processors import PROCESSORS, Record
from agent_telemetry.emit._validate import RejectReason


class TelemetryLogger(BoundLoggerBase):
    """Runs one event through the chain and returns the record written (or None)."""

    @property
    def strict(self) -> bool:
        return bool(self._context["strict"])

    def emit(self, event: object, fields: dict[str, Any]) -> Record | None:
        # structlog's own event-dict assembly and processor loop; the chain never drops an
        # event (no DropEvent), so _proxy_to_logger's extra frame buys nothing here.
        # structlog types ``event`` as str; here it is a name, a model class or an
        # instance, which the first processor resolves.
        args, _ = self._process_event("info", event, {"fields": fields})  # type: ignore[arg-type]
        return self._logger.info(*args)  # type: ignore[no-any-return]

    def reject(self, reason: RejectReason) -> Record | None:
        """Write a ``telemetry_rejected`` line with ``reason``."""
        args, _ = self._process_event("info", None, {"reason": reason, "fields": {}})
        return self._logger.info(*args)  # type: ignore[no-any-return]


def make_logger(shared: Shared, stream: IO[Any] | None, strict: bool) -> TelemetryLogger:
    return TelemetryLogger(
        LineWriter(shared, stream),
        processors=list(PROCESSORS),
        context={"strict": strict},
    )
