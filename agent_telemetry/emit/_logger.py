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

    def _process_event(self, method_name: str, event: str | None, event_kw: dict[str, Any]) -> Any:
        """structlog's hook for custom wrappers, with the same contract: the bound
        context, the event keywords and ``event`` make the event dict, which runs
        through the processors in order.

        Leaner than the inherited one, measured ~0.3 us per line: one dict display
        instead of ``copy()`` plus ``update(**kw)``, and no dispatch on the final
        processor's return type, which in this chain is always ``render_line``'s
        ``((line, record), {})``.
        """
        event_dict: Any = {**self._context, **event_kw}
        if event is not None:
            event_dict["event"] = event
        logger = self._logger
        for processor in self._processors:
            event_dict = processor(logger, method_name, event_dict)
        return event_dict

    def emit(self, event: object, fields: dict[str, Any]) -> Record | None:
        # The chain never drops an event (no DropEvent), so _proxy_to_logger's extra
        # frame buys nothing here. structlog types ``event`` as str; here it is a name,
        # a model class or an instance, which the first processor resolves.
        (line, record), _ = self._process_event("info", event, {"fields": fields})  # type: ignore[arg-type]
        return self._logger.info(line, record)  # type: ignore[no-any-return]

    def reject(self, reason: RejectReason) -> Record | None:
        """Write a ``telemetry_rejected`` line with ``reason``."""
        (line, record), _ = self._process_event("info", None, {"reason": reason, "fields": {}})
        return self._logger.info(line, record)  # type: ignore[no-any-return]


def make_logger(shared: Shared, stream: IO[Any] | None, strict: bool) -> TelemetryLogger:
    return TelemetryLogger(
        LineWriter(shared, stream),
        processors=list(PROCESSORS),
        context={"strict": strict},
    )
