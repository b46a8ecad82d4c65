"""Telemetry coverage: which events, fields and enum members of a catalogue were ever seen.

One count for two readers: ``check-logs --coverage`` (lines read back from logs) and the
pytest plugin's end-of-session report (records a service's tests captured). Counts
only: what is named is the catalogue's own (event, field and member names), never a
value from outside its closed sets.

Every declared item counts once: each event, each of its fields, each member of each
enum field. An event is seen when a valid line of it was; a field when a line carried a
valid value for it; a member when that value was it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_telemetry.schema.spec import EventSpec


@dataclass(slots=True)
class Observed:
    """What was seen, by name: events, (event, field), (event, field, member)."""

    events: set[str] = field(default_factory=set)
    fields: set[tuple[str, str]] = field(default_factory=set)
    members: set[tuple[str, str, str]] = field(default_factory=set)

    def see_record(self, record: Mapping[str, Any], specs: Mapping[str, EventSpec]) -> None:
        """Count one emitted record (the dict ``emit`` returns) of a catalogued event."""
        name = record.get("event")
        spec = specs.get(name) if type(name) is str else None
        if spec is None:
            return
        self.events.add(spec.name)
        for spec_field in spec.fields:
            value = record.get(spec_field.name)
            if value is None:
                continue
            self.fields.add((spec.name, spec_field.name))
            if spec_field.kind == "enum" and value in spec_field.members:
                self.members.add((spec.name, spec_field.name, str(value)))


# Decimals enough for any percent ``below`` a threshold (it is more than 1e-9 under it).
_MAX_DECIMALS = 10


@dataclass(frozen=True, slots=True)
class Coverage:
    """Declared items, and those never seen (``event``, ``event.field``,
    ``event.field=member``), in catalogue order."""

    declared: int
    missing_events: tuple[str, ...]
    missing_fields: tuple[str, ...]
    missing_members: tuple[str, ...]

    @property
    def missing(self) -> int:
        return len(self.missing_events) + len(self.missing_fields) + len(self.missing_members)

    @property
    def percent(self) -> float:
        """Seen items as a percentage of declared ones (100 for an empty catalogue)."""
        if not self.declared:
            return 100.0
        return 100.0 * (self.declared - self.missing) / self.declared

    def below(self, threshold: float) -> bool:
        return self.percent + 1e-9 < threshold

    def figures_below(self, threshold: float) -> tuple[str, str]:
        """The percent and ``threshold`` as a "below" message shows them: the percent with
        one decimal, or as many more as it takes to read below the threshold (55.56, not
        55.6, below 55.6: never a figure that contradicts the message), the threshold as
        given (90, 55.6)."""
        shown = f"{threshold:g}"
        if float(shown) != threshold:  # more digits than %g keeps: every one of them
            shown = repr(threshold)
        for decimals in range(1, _MAX_DECIMALS + 1):
            figure = f"{self.percent:.{decimals}f}"
            if float(figure) < threshold:
                return figure, shown
        return repr(self.percent), shown

    def lines(self) -> list[str]:
        """The report as plain text lines: the figure, then what was never seen."""
        seen = self.declared - self.missing
        out = [f"telemetry coverage: {self.percent:.1f}% ({seen} of {self.declared} declared)"]
        for title, items in (
            ("events never seen", self.missing_events),
            ("fields never seen", self.missing_fields),
            ("enum members never seen", self.missing_members),
        ):
            if items:
                out.append(f"  {title} ({len(items)}): {', '.join(items)}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "percent": round(self.percent, 2),
            "declared": self.declared,
            "missing_events": list(self.missing_events),
            "missing_fields": list(self.missing_fields),
            "missing_members": list(self.missing_members),
        }


def coverage(specs: Iterable[EventSpec], observed: Observed) -> Coverage:
    """The coverage of ``specs`` (each event's current version) by ``observed``."""
    declared = 0
    events: list[str] = []
    fields: list[str] = []
    members: list[str] = []
    for spec in specs:
        declared += 1
        if spec.name not in observed.events:
            events.append(spec.name)
        for spec_field in spec.fields:
            declared += 1
            if (spec.name, spec_field.name) not in observed.fields:
                fields.append(f"{spec.name}.{spec_field.name}")
            for member in spec_field.members if spec_field.kind == "enum" else ():
                declared += 1
                if (spec.name, spec_field.name, member) not in observed.members:
                    members.append(f"{spec.name}.{spec_field.name}={member}")
    return Coverage(declared, tuple(events), tuple(fields), tuple(members))
