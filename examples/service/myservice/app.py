"""The whole service: a cache in front of a slow function, emitting one line per lookup."""

from __future__ import annotations

import time

from agent_telemetry.emit import configure, emit

# Once, at start-up: emit-by-name resolves in this service's own catalogue.
configure(catalogue="myservice.telemetry")

_MEMORY: dict[str, str] = {}


def lookup(key: str) -> str:
    """The cached value of ``key``; the key itself never reaches telemetry."""
    started = time.monotonic()
    value = _MEMORY.get(key)
    result = "hit" if value is not None else "miss"
    if value is None:
        value = _MEMORY[key] = key.upper()
    elapsed_ms = min(int((time.monotonic() - started) * 1000), 10_000)
    emit("cache_lookup", result=result, tier="memory", lookup_ms=elapsed_ms)
    return value
