"""``capture()``: assert a service's telemetry in its own tests.

Like ``structlog.testing.capture_logs``: inside the block, every record the emitter
would write is appended to the yielded list instead of going to the stream. Records are
the dicts ``emit`` returns (envelope included), from every thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agent_telemetry.emit._config import SHARED, configure, settings
from agent_telemetry.emit._processors import Record


@contextmanager
def capture(*, strict: bool | None = None) -> Iterator[list[Record]]:
    """Yield the list of records emitted inside the block; nothing reaches the stream.

    ``strict``: when given, the mode inside the block (restored afterwards), so a
    service's tests can turn invalid telemetry into a ``TelemetryValidationError``.
    """
    records: list[Record] = []
    previous = settings().strict
    if strict is not None:
        configure(strict=strict)
    with SHARED.lock:
        SHARED.sinks.append(records)
    try:
        yield records
    finally:
        with SHARED.lock:
            # Remove this capture's own list (by identity), wherever nesting left it.
            SHARED.sinks[:] = [sink for sink in SHARED.sinks if sink is not records]
        if strict is not None:
            configure(strict=previous)
