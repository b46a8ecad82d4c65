"""Capacity: how much one line of an event can say, counted in bits.

Every channel a model author controls is counted from the specs alone, so the same
function serves every catalogue (the package's and a service's own), and the rules, the
lock, the compatibility rules, ``check`` and the data dictionary all read it here: a
figure can never differ between two places.

- A field's channel holds as many values as its domain: the members of a closed set,
  ``le - ge + 1`` for an int (or, with a precision, the distinct values left after
  rounding), two for a bool; an optional field has one more (absent), and every field
  one more again (rejected: dropped and named in ``invalid_fields``, which the lenient
  emitter writes in model order, so the list is a function of the fields' states).
- The envelope's own channels (``ENVELOPE_CHANNELS``): ``unknown_fields`` is a flag
  (absent, or ``1``), two values; ``severity`` is a constant; ``time`` is the clock's,
  not the caller's (a caller that chooses *when* to emit is a timing channel no count of
  a line can bound; docs/rules.md says so).
- An event's capacity is the product of its fields' counts and the envelope's: the
  number of different lines one version can write. ``event`` and ``schema_version``
  take one value on every line of one version (the emitter writes only catalogued,
  current versions), so they add nothing within an event; the choice *between* events
  is bounded by the catalogue's own review (a new event is a new lock entry): a line of
  a catalogue says at most log2(sum over its events of their counts) bits.

Counts are exact integers; bits are shown to a tenth, rounded to nearest with integer
arithmetic only (no float at an edge decides a budget or a review).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from agent_telemetry.schema.spec import EventSpec, FieldSpec

# Per event version: at most 2**64 different lines (64 bits).
EVENT_BUDGET_BITS = 64
EVENT_BUDGET_VALUES = 1 << EVENT_BUDGET_BITS
# A closed set of more members needs a reviewed waiver (ENUM_SIZE).
MAX_MEMBERS = 64
# An int field of more bits needs a precision or a reviewed waiver (INT_PRECISION).
PRECISION_REQUIRED_BITS = 16
# Significant digits a precision may keep: 2**53 has 16 digits, so 15 still rounds.
MAX_PRECISION = 15

_POW10: tuple[int, ...] = tuple(10**n for n in range(20))


def round_significant(value: int, digits: int) -> int:
    """``value`` rounded to ``digits`` significant digits, half away from zero.

    Integer arithmetic only: 1_234_567 -> 1_230_000 at 3 digits, 1_235 -> 1_240.
    """
    magnitude = -value if value < 0 else value
    if magnitude < _POW10[digits]:
        return value
    step = _POW10[len(str(magnitude)) - digits]
    rounded = (magnitude + step // 2) // step * step
    return -rounded if value < 0 else rounded


# By bit length b: (the power of ten a b-bit value is compared with, then half the
# rounding step and the step below it, and the same from it on). A positive int of b
# bits has one of two decimal lengths, told apart by that one comparison.
StepTable = tuple[tuple[int, int, int, int, int], ...]


def step_table(digits: int) -> StepTable:
    """The rounding steps of ``digits`` significant digits, indexed by bit length (for
    the emitter's hot path: a lookup and a comparison instead of counting digits)."""
    table = []
    for bits in range(64):
        length = len(str(1 << (bits - 1))) if bits else 1
        below = _POW10[max(0, length - digits)]
        above = _POW10[max(0, length + 1 - digits)]
        table.append((_POW10[length], below // 2, below, above // 2, above))
    return tuple(table)


def round_with(value: int, table: StepTable) -> int:
    """``round_significant`` for a value of at least 0, through a ``step_table``."""
    top, half_below, below, half_above, above = table[value.bit_length()]
    if value < top:
        return (value + half_below) // below * below
    return (value + half_above) // above * above


def is_exact(value: int, digits: int) -> bool:
    """Whether ``value`` has at most ``digits`` significant digits (rounds to itself)."""
    return round_significant(value, digits) == value


def _at_most(limit: int, digits: int) -> int:
    """How many integers in ``0 .. limit`` have at most ``digits`` significant digits."""
    if limit < 0:
        return 0
    count = 1  # zero
    low = 1
    length = 1
    while low <= limit:
        high = min(limit, _POW10[length] - 1)
        step = _POW10[max(0, length - digits)]
        # Multiples of step in low .. high (low is a power of ten, so one of them).
        count += high // step - (low - 1) // step
        low = _POW10[length]
        length += 1
    return count


def rounded_values(ge: int, le: int, digits: int | None) -> int:
    """How many different values an int field in ``ge .. le`` can write.

    Without a precision, every integer in the bounds. With one, the values rounding
    can give, which (for bounds exact at that precision, INT_PRECISION) are exactly the
    integers in the bounds with at most ``digits`` significant digits: rounding never
    leaves the bounds and maps every such value to itself.
    """
    if digits is None:
        return le - ge + 1
    if ge >= 0:
        return _at_most(le, digits) - _at_most(ge - 1, digits)
    if le <= 0:
        return rounded_values(-le, -ge, digits)
    return _at_most(le, digits) + _at_most(-ge, digits) - 1  # zero counted once


def domain_values(field: FieldSpec) -> int:
    """The number of values the field's domain holds (absence not counted)."""
    if field.kind == "enum":
        return len(field.members)
    if field.kind == "bool":
        return 2
    if field.ge is None or field.le is None or field.ge > field.le:
        raise ValueError(f"{field.name}: an int without bounds has no capacity")
    return rounded_values(field.ge, field.le, field.precision)


# A rejected value is one more state of every field: dropped, and its name written in
# ``invalid_fields`` (a required field that is missing is named there too).
REJECTED_STATE = 1


def field_values(field: FieldSpec) -> int:
    """The number of different things the field can say on a line: its domain, plus
    one for an optional field (absent), plus one for every field (rejected, named in
    ``invalid_fields``)."""
    return domain_values(field) + (0 if field.required else 1) + REJECTED_STATE


def tenths(values: int) -> int:
    """log2(values) in tenths of a bit, rounded to nearest (half up), exactly.

    10*log2(v) = floor(20*log2(v)) halved, rounding up: floor(log2(x)) of an integer is
    its bit length minus one, so no float is involved.
    """
    if values < 1:
        raise ValueError("a channel holds at least one value")
    return (values**20).bit_length() // 2


def show_bits(tenths_of_bit: int) -> str:
    """Tenths of a bit as text: ``756`` -> ``"75.6"``."""
    return f"{tenths_of_bit // 10}.{tenths_of_bit % 10}"


@dataclass(frozen=True, slots=True)
class FieldCapacity:
    name: str
    values: int

    @property
    def tenths(self) -> int:
        return tenths(self.values)

    @property
    def bits(self) -> str:
        return show_bits(self.tenths)


# What the emitter writes beside the fields that a caller's call can change: the
# ``unknown_fields`` flag (absent, or 1 when the call passed keys the event does not
# define). ``invalid_fields`` is counted in each field (REJECTED_STATE); ``event``,
# ``schema_version`` and ``severity`` are constant within a version.
ENVELOPE_CHANNELS: tuple[FieldCapacity, ...] = (FieldCapacity("unknown_fields", 2),)


@dataclass(frozen=True, slots=True)
class EventCapacity:
    """One event version's capacity: each field's, the envelope's, and the whole line's."""

    event: str
    schema_version: int
    fields: tuple[FieldCapacity, ...]
    envelope: tuple[FieldCapacity, ...] = ENVELOPE_CHANNELS

    @property
    def values(self) -> int:
        """Different lines the version can write: the product of its fields' counts
        and the envelope's (the whole line as written)."""
        return prod(f.values for f in self.fields) * prod(f.values for f in self.envelope)

    @property
    def tenths(self) -> int:
        return tenths(self.values)

    @property
    def bits(self) -> str:
        return show_bits(self.tenths)

    @property
    def within_budget(self) -> bool:
        return self.values <= EVENT_BUDGET_VALUES

    def widest(self, n: int = 3) -> tuple[FieldCapacity, ...]:
        """The ``n`` fields that carry the most, widest first (model order on ties)."""
        return tuple(sorted(self.fields, key=lambda f: -f.values)[:n])

    def field(self, name: str) -> FieldCapacity | None:
        return next((f for f in self.fields if f.name == name), None)


def event_capacity(spec: EventSpec) -> EventCapacity:
    """The capacity of one event version, field by field."""
    return EventCapacity(
        spec.name,
        spec.schema_version,
        tuple(FieldCapacity(f.name, field_values(f)) for f in spec.fields),
    )


def review_tenths(bits: float) -> int:
    """A data review's approved capacity in tenths of a bit (reviews give one decimal)."""
    return round(bits * 10)
