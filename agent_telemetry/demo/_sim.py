"""A discrete-event loop on a simulated clock, and the emitter writing at that clock.

The workload runs hours of service time in well under a second: callbacks fire in time
order, and every line the real emitter writes carries the simulated time: ``emitting_at``
configures the emitter's public ``clock`` option for the length of the block only.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, Any

MS = 1
SECOND = 1000 * MS
MINUTE = 60 * SECOND


class Simulation:
    """Callbacks at simulated milliseconds since ``start``, run in time order."""

    def __init__(self, start: datetime) -> None:
        self.start = start.astimezone(UTC)
        self.now = 0
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self._order = itertools.count()

    def at(self, when: int, callback: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (max(when, self.now), next(self._order), callback))

    def after(self, delay: int, callback: Callable[[], None]) -> None:
        self.at(self.now + delay, callback)

    def run(self, until: int) -> None:
        while self._queue and self._queue[0][0] <= until:
            self.now, _, callback = heapq.heappop(self._queue)
            callback()
        self.now = until

    def epoch_ns(self) -> int:
        return int(self.start.timestamp()) * 1_000_000_000 + self.now * 1_000_000


@contextmanager
def emitting_at(sim: Simulation, stream: IO[Any]) -> Iterator[None]:
    """Inside the block, ``emit`` writes the package's own events (whatever catalogue the
    process configured before) to ``stream`` (strict mode), stamped with sim time."""
    from agent_telemetry.emit import configure, reset_defaults, settings
    from agent_telemetry.schema.catalogue import default_catalogue

    previous = settings()
    configure(stream=stream, strict=True, clock=sim.epoch_ns, catalogue=default_catalogue())
    try:
        yield
    finally:
        reset_defaults()
        configure(
            stream=previous.stream,
            strict=previous.strict,
            clock=previous.clock,
            catalogue=previous.catalogue or default_catalogue(),
        )
