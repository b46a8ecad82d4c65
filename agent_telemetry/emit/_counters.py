"""Counters a service can export as metrics: what the emitter wrote, dropped and rejected.

Per-line counters are updated by the thread holding the write lock; the rest under the
count lock, which snapshots take too (never the write lock, so a snapshot does not wait
behind a stuck writer; a line being written at that instant may be counted in part).
Keys are event names of the configured catalogue (anything else, such as an event of a
catalogue configured earlier, is summed under one ``unknown`` key) and closed-set
reasons only. Each emit that
writes nothing lands in exactly one of ``write_failed``, ``partial_write``,
``write_timeouts``, ``internal_errors`` or ``reentrant_dropped``; ``flush_failed`` lines
are also ``emitted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from agent_telemetry.schema.envelope import REJECTED_EVENT

UNKNOWN_KEY = "unknown"


def _frozen(counts: dict[str, int], known: Set[str] | None = None) -> Mapping[str, int]:
    """A read-only copy; with ``known``, every key outside it (and the package's own
    ``telemetry_rejected``) is summed under one ``unknown`` key."""
    if known is None:
        return MappingProxyType(dict(counts))
    folded: dict[str, int] = {}
    for key, value in counts.items():
        name = key if key in known or key == REJECTED_EVENT else UNKNOWN_KEY
        folded[name] = folded.get(name, 0) + value
    return MappingProxyType(folded)


@dataclass(frozen=True, slots=True)
class TelemetryCounters:
    """A snapshot. Every mapping is keyed by event name, except ``rejected`` (by reason).

    - ``emitted``: lines written (or captured), ``telemetry_rejected`` lines included;
    - ``invalid``: lines written with at least one name in ``invalid_fields``;
    - ``unknown``: lines written after dropping unknown keys;
    - ``rejected``: ``telemetry_rejected`` lines, per reason;
    - ``write_failed``: lines lost because the stream refused the write (it took none of
      the line, or raised without saying how much it took);
    - ``partial_write``: lines lost after the stream took part of them: a fragment is on
      the stream, and the next line written there starts on a new line;
    - ``write_timeouts``: lines dropped whole because the stream did not drain (or no
      line went out while it waited for the write lock) within the write timeout;
    - ``flush_failed``: lines written whole whose ``flush`` then raised (counted in
      ``emitted`` too: the stream has the line);
    - ``internal_errors``: calls on which the emitter itself failed and wrote nothing;
    - ``reentrant_dropped``: calls made while the same thread was already inside ``emit``
      (a signal handler, the stream's own ``write``, a clock): dropped, not written inside
      the line being written. Not per event: the call was not validated.
    """

    emitted: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    invalid: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    rejected: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    write_failed: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    partial_write: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    flush_failed: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    write_timeouts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    internal_errors: int = 0
    reentrant_dropped: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain nested dicts, for a metrics exporter or a JSON health endpoint."""
        return {
            "emitted": dict(self.emitted),
            "invalid": dict(self.invalid),
            "unknown": dict(self.unknown),
            "rejected": dict(self.rejected),
            "write_failed": dict(self.write_failed),
            "partial_write": dict(self.partial_write),
            "flush_failed": dict(self.flush_failed),
            "write_timeouts": dict(self.write_timeouts),
            "internal_errors": self.internal_errors,
            "reentrant_dropped": self.reentrant_dropped,
        }


def bump(counts: dict[str, int], key: str) -> None:
    # Plain dicts, not collections.Counter: a dict subclass is several times slower to
    # index, and this runs for every line, inside the write lock.
    counts[key] = counts.get(key, 0) + 1


class Counters:
    """The live counters (see the module's docstring for who updates them under which lock)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.emitted: dict[str, int] = {}
        self.invalid: dict[str, int] = {}
        self.unknown: dict[str, int] = {}
        self.rejected: dict[str, int] = {}
        self.write_failed: dict[str, int] = {}
        self.partial_write: dict[str, int] = {}
        self.flush_failed: dict[str, int] = {}
        self.write_timeouts: dict[str, int] = {}
        self.internal_errors = 0
        self.reentrant_dropped = 0

    def note_extras(self, record: Mapping[str, Any]) -> None:
        """Beyond ``emitted``: count a written line's rejection, invalid or unknown keys."""
        event = record["event"]
        if event == REJECTED_EVENT:
            bump(self.rejected, record["reason"])
        if "invalid_fields" in record:
            bump(self.invalid, event)
        if "unknown_fields" in record:
            bump(self.unknown, event)

    def snapshot(self, known: Set[str] | None = None) -> TelemetryCounters:
        """``known``: the catalogue's event names; any other key (an event of a catalogue
        configured earlier) is counted under ``unknown``."""
        return TelemetryCounters(
            emitted=_frozen(self.emitted, known),
            invalid=_frozen(self.invalid, known),
            unknown=_frozen(self.unknown, known),
            rejected=_frozen(self.rejected),
            write_failed=_frozen(self.write_failed, known),
            partial_write=_frozen(self.partial_write, known),
            flush_failed=_frozen(self.flush_failed, known),
            write_timeouts=_frozen(self.write_timeouts, known),
            internal_errors=self.internal_errors,
            reentrant_dropped=self.reentrant_dropped,
        )
