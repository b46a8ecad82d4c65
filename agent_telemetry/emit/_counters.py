"""Counters a service can export as metrics: what the emitter wrote, dropped and rejected.

Updated by the writer while it holds the write lock, so a snapshot is exact even under
many threads. Keys are event names from the catalogue and closed-set reasons only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from agent_telemetry.emit._processors import REJECTED_EVENT


def _frozen(counter: Counter[str]) -> Mapping[str, int]:
    return MappingProxyType(dict(counter))


@dataclass(frozen=True, slots=True)
class TelemetryCounters:
    """A snapshot. Every mapping is keyed by event name, except ``rejected`` (by reason).

    - ``emitted``: lines written (or captured), ``telemetry_rejected`` lines included;
    - ``invalid``: lines written with at least one name in ``invalid_fields``;
    - ``unknown``: lines written after dropping unknown keys;
    - ``rejected``: ``telemetry_rejected`` lines, per reason;
    - ``write_failed``: lines lost because the stream refused the write;
    - ``internal_errors``: calls on which the emitter itself failed and wrote nothing.
    """

    emitted: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    invalid: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    rejected: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    write_failed: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    internal_errors: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain nested dicts, for a metrics exporter or a JSON health endpoint."""
        return {
            "emitted": dict(self.emitted),
            "invalid": dict(self.invalid),
            "unknown": dict(self.unknown),
            "rejected": dict(self.rejected),
            "write_failed": dict(self.write_failed),
            "internal_errors": self.internal_errors,
        }


class Counters:
    """The live counters; the writer updates them while it holds the write lock."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.emitted: Counter[str] = Counter()
        self.invalid: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.write_failed: Counter[str] = Counter()
        self.internal_errors = 0

    def note_extras(self, record: Mapping[str, Any]) -> None:
        """Beyond ``emitted``: count a written line's rejection, invalid or unknown keys."""
        event = record["event"]
        if event == REJECTED_EVENT:
            self.rejected[record["reason"]] += 1
        if "invalid_fields" in record:
            self.invalid[event] += 1
        if "unknown_fields" in record:
            self.unknown[event] += 1

    def snapshot(self) -> TelemetryCounters:
        return TelemetryCounters(
            emitted=_frozen(self.emitted),
            invalid=_frozen(self.invalid),
            unknown=_frozen(self.unknown),
            rejected=_frozen(self.rejected),
            write_failed=_frozen(self.write_failed),
            internal_errors=self.internal_errors,
        )
