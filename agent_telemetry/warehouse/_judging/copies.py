"""Which copy of a log entry counts: the rule the views keep one copy by, in Python.

Log exports are not de-duplicated, and two copies of one entry (same insertId and
timestamp) may even hold different payloads. The views rank the copies by the envelope's
payload columns (``event`` first), then by the copy's event's own columns, in the sink
schema's order, as the sink holds them, ascending with NULL first (an array by its JSON
text, ``[]`` when absent), and keep the first (docs/design.md, "One row per log entry").
``rank_key`` is that order over a judged row (``SinkPayload``),
so ``check-logs`` judges exactly the copy the views show, and counts as conflicting
the copies whose payload differs from it, as ``telemetry_quality`` does.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

import orjson

from agent_telemetry.schema import EventSpec
from agent_telemetry.views import ENVELOPE_KEYS, event_payload_keys, payload_fields
from agent_telemetry.warehouse._reading.records import Telemetry

# A payload column the copies are ranked by: (name, repeated).
Key = tuple[str, bool]
_NULL: tuple[int] = (0,)


@dataclass(frozen=True, slots=True)
class Order:
    """The envelope's columns (``event`` first), then each event's own (views/_render's
    ``CopyOrder``, as names)."""

    envelope: tuple[Key, ...]
    events: Mapping[str, tuple[Key, ...]]


def copy_order(specs: tuple[EventSpec, ...] | None = None) -> Order:
    """The columns the views of ``specs``' catalogue (default: the package's own) rank
    copies by."""
    repeated = {field.name: field.mode == "REPEATED" for field in payload_fields(specs)}
    return Order(
        envelope=tuple((name, repeated[name]) for name in ENVELOPE_KEYS),
        events={
            event: tuple((name, repeated[name]) for name in names)
            for event, names in event_payload_keys(specs).items()
        },
    )


PACKAGE_ORDER = copy_order()


def _parts(row: Mapping[str, Any], keys: Iterable[Key]) -> list[tuple[Any, ...]]:
    key: list[tuple[Any, ...]] = []
    for name, repeated in keys:
        value = row.get(name)
        if repeated:
            key.append((1, orjson.dumps(value or []).decode()))
        else:
            key.append(_NULL if value is None else (1, value))
    return key


def rank_key(row: Mapping[str, Any], order: Order = PACKAGE_ORDER) -> tuple[tuple[Any, ...], ...]:
    """The copy's place in the views' order: smaller is kept. Copies of two events
    differ in the first part (``event``); a copy names no other event's columns."""
    event = row.get("event")
    own = order.events.get(event, ()) if isinstance(event, str) else ()
    return tuple(_parts(row, (*order.envelope, *own)))


def _judged_key(row: Mapping[str, Any], order: Order) -> tuple[tuple[Any, ...], ...]:
    """``rank_key``, then every other event's columns: among copies the views cannot
    tell apart, the one check-logs judges, whatever order they come in."""
    rest = (key for keys in order.events.values() for key in keys)
    return (*rank_key(row, order), *_parts(row, dict.fromkeys(rest)))


class Copies:
    """The copy kept of each entry with an insert id, and how many of its copies differ
    from it. Each copy's parts go to a spool file; memory holds, per entry, the kept
    copy's place in the spool and two 64-bit hashes of its judged payload."""

    def __init__(self, judge: Callable[[Telemetry], Mapping[str, Any]], order: Order) -> None:
        self._judge = judge  # a copy's judged payload, as the sink holds it
        self._order = order  # the catalogue's columns, as its views rank copies
        # Closed by close(): the spool lives as long as the check.
        self._spool: IO[bytes] = tempfile.TemporaryFile(prefix="agent-telemetry-copies-")  # noqa: SIM115
        self._kept: dict[int, int] = {}  # entry -> see _keep
        self._counts: dict[int, list[int]] = {}  # entry with copies -> [copies, alike]

    def close(self) -> None:
        self._spool.close()

    def add(self, entry: int, telemetry: Telemetry) -> bool:
        """Record one copy of ``entry``; whether the entry was seen before."""
        judged = self._judge(telemetry)
        rank = rank_key(judged, self._order)
        digest = hash(rank) & _MASK
        full = hash(_judged_key(judged, self._order)) & _MASK
        kept = self._kept.get(entry)
        if kept is None:
            self._kept[entry] = self._keep(telemetry, full, digest)
            return False
        counts = self._counts.setdefault(entry, [1, 1])
        counts[0] += 1
        if kept & _MASK == digest:  # alike in every column a view shows
            counts[1] += 1
            if kept >> 64 & _MASK != full:  # which of them check-logs judges: one rule
                held = self._judge(self._read(kept >> 128))
                if _judged_key(judged, self._order) < _judged_key(held, self._order):
                    self._kept[entry] = self._keep(telemetry, full, digest)
        elif rank < rank_key(self._judge(self._read(kept >> 128)), self._order):
            self._kept[entry] = self._keep(telemetry, full, digest)
            counts[1] = 1
        return True

    def _keep(self, telemetry: Telemetry, full: int, digest: int) -> int:
        """The kept copy as one int: its spool offset, the hash of everything it is
        judged by, the hash of what the views show of it."""
        return self._write(telemetry) << 128 | full << 64 | digest

    @property
    def conflicting(self) -> int:
        """Copies whose payload differs from their entry's kept copy."""
        return sum(copies - alike for copies, alike in self._counts.values())

    def kept(self) -> Iterator[Telemetry]:
        """The kept copy of every entry, in the order they were first written."""
        for offset in sorted(value >> 128 for value in self._kept.values()):
            yield self._read(offset)

    def _write(self, telemetry: Telemetry) -> int:
        spool = self._spool
        spool.seek(0, os.SEEK_END)
        offset = spool.tell()
        parts = (telemetry.shape, telemetry.payload, telemetry.time, telemetry.insert_id)
        data = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
        spool.write(len(data).to_bytes(4, "little") + data)
        return offset

    def _read(self, offset: int) -> Telemetry:
        spool = self._spool
        spool.seek(offset)
        size = int.from_bytes(spool.read(4), "little")
        shape, payload, time, insert_id = pickle.loads(spool.read(size))
        return Telemetry(shape, payload, time, insert_id)


_MASK = (1 << 64) - 1
