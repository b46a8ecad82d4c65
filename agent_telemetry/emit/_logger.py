"""The emitter's own structlog logger: never ``structlog.configure``, never ``logging``.

A ``BoundLoggerBase`` subclass over a ``LineWriter``, with the telemetry processor
chain. The mode is bound into its context, so the processors read it as data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import IO, Any

from structlog import BoundLoggerBase
from structlog.typing import Context, Processor, WrappedLogger

from agent_telemetry.emit._output import LineWriter, Shared
from agent_telemetry.emit._processors import PROCESSORS, Record
from agent_telemetry.schema.envelope import RejectReason


class TelemetryLogger(BoundLoggerBase):
    """Runs one event through the chain and returns the record written (or None)."""

    def __init__(
        self, logger: WrappedLogger, processors: Iterable[Processor], context: Context
    ) -> None:
        super().__init__(logger, processors, context)
        # A plain attribute, not a property: ``emit`` reads it where calling anything
        # could raise RecursionError.
        self.strict = bool(context["strict"])

    def emit(self, event: object, fields: dict[str, Any]) -> Record | None:
        """Run ``event`` and ``fields`` through the chain; write the line; return the record.

        What structlog's ``_process_event`` does (the bound context plus the event's
        keys make the event dict, which runs through the processors in order), written
        out for this one call shape: measured ~0.4 us a line cheaper than calling it, as
        it copies the context, then ``update(**kw)``s a second dict, then dispatches on
        the final processor's result type, which in this chain is always ``render_line``'s
        ``((line, record), {})``. ``reject`` and tests still run the same processors
        through ``_process_event`` itself.
        """
        event_dict: Any = self._context.copy()  # measured: half a {**context, ...} display
        event_dict["event"] = event
        event_dict["fields"] = fields
        logger = self._logger
        for processor in self._processors:
            event_dict = processor(logger, "info", event_dict)
        (line, record), _ = event_dict
        return logger.info(line, record)  # type: ignore[no-any-return]

    def reject(self, reason: RejectReason) -> Record | None:
        """Write a ``telemetry_rejected`` line with ``reason``."""
        (line, record), _ = self._process_event("info", None, {"reason": reason, "fields": {}})
        return self._logger.info(line, record)  # type: ignore[no-any-return]


def make_logger(
    shared: Shared,
    stream: IO[Any] | None,
    strict: bool,
    clock: Callable[[], int] | None = None,
) -> TelemetryLogger:
    """The mode and the clock (None: the real one) are bound into the logger's context."""
    return TelemetryLogger(
        LineWriter(shared, stream),
        processors=list(PROCESSORS),
        context={"strict": strict, "clock": clock},
    )
