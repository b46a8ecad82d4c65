"""People who stand out in the data: combinations of values fewer than k lines share.

Capacity (``schema.capacity``) bounds what one line can say. It cannot say whether a
line, among the day's lines, singles someone out: if one admin works on the ``admin``
lane, every admin-lane line that day is that person's. This measures it, per event and
UTC day, over the quasi-identifiers of each event: its closed-set fields (enums, the
buckets among them, and booleans), absence included as a value. A combination that
fewer than ``k`` lines of the day share is *rare*; the lines that carry one are counted
(k-anonymity of the quasi-identifiers). Integers are measures, not counted here.

What is reported is counts only: lines, combinations, lines in rare combinations, and
the sizes of the rarest combinations. The values of a combination smaller than ``k``
are never shown (they are what would single the person out).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from agent_telemetry.schema import EventSpec

DEFAULT_K = 5
RAREST_SHOWN = 3  # sizes of the rarest combinations listed per event and day

Combination = tuple[Hashable, ...]


@cache
def quasi_identifiers(spec: EventSpec) -> tuple[str, ...]:
    """The event's fields whose values a combination is made of: closed sets and booleans."""
    return tuple(f.name for f in spec.fields if f.kind in ("enum", "bool"))


@dataclass(frozen=True, slots=True)
class DayRarity:
    """One event's lines of one UTC day, as counts."""

    event: str
    day: str  # YYYY-MM-DD (UTC)
    lines: int
    combinations: int
    rare_lines: int  # lines whose combination fewer than k lines share
    rare_combinations: int
    rarest: tuple[int, ...]  # sizes of the smallest combinations, smallest first

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "day": self.day,
            "lines": self.lines,
            "combinations": self.combinations,
            "rare_lines": self.rare_lines,
            "rare_combinations": self.rare_combinations,
            "rarest": list(self.rarest),
        }


@dataclass(slots=True)
class RareCombinations:
    """Lines per (event, day, combination), gathered from both of check-logs' paths."""

    k: int = DEFAULT_K
    counts: Counter[tuple[str, str, Combination]] = field(default_factory=Counter)

    def see(self, event: str, day: str, combination: Combination, lines: int = 1) -> None:
        self.counts[(event, day, combination)] += lines

    def days(self) -> list[DayRarity]:
        """Every event and day seen, by event then day."""
        groups: dict[tuple[str, str], list[int]] = {}
        for (event, day, _), lines in self.counts.items():
            groups.setdefault((event, day), []).append(lines)
        out = []
        for (event, day), sizes in sorted(groups.items()):
            sizes.sort()
            rare = [n for n in sizes if n < self.k]
            out.append(
                DayRarity(
                    event=event,
                    day=day,
                    lines=sum(sizes),
                    combinations=len(sizes),
                    rare_lines=sum(rare),
                    rare_combinations=len(rare),
                    rarest=tuple(sizes[:RAREST_SHOWN]),
                )
            )
        return out

    @property
    def rare_lines(self) -> int:
        return sum(n for n in self.counts.values() if n < self.k)

    def as_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "rare_lines": self.rare_lines,
            "days": [d.as_dict() for d in self.days()],
        }


def day_of(stamp: str) -> str:
    """The UTC day of a canonical timestamp (``YYYY-MM-DDTHH:MM:SS.ffffffZ``)."""
    return stamp[:10]


def combination(values: Iterable[Hashable]) -> Combination:
    return tuple(values)
