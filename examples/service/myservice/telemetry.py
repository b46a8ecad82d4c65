"""myservice's event catalogue: its own events, plus the built-in ones it emits too.

telemetry.toml names this module ([catalogue] module); every agent-telemetry command
and the emitter (``configure(catalogue="myservice.telemetry")``) read ``EVENTS`` here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import EVENTS as BUILT_IN
from agent_telemetry.schema import TelemetryEvent, count


class CacheResult(StrEnum):
    HIT = "hit"
    MISS = "miss"
    STALE = "stale"


class CacheTier(StrEnum):
    MEMORY = "memory"
    DISK = "disk"


class CacheLookup(TelemetryEvent):
    """One line per cache lookup."""

    event_name: ClassVar[str] = "cache_lookup"
    schema_version: ClassVar[int] = 1

    result: CacheResult = Field(description="What the lookup found.")
    tier: CacheTier = Field(description="Which cache tier answered.")
    lookup_ms: int | None = count(0, 10_000, "Lookup wall time in milliseconds.")


EVENTS = {**BUILT_IN, CacheLookup.event_name: CacheLookup}
