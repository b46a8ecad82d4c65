"""Capacity, counted: the figures of the issue, exact counting after rounding, and the
one function every reader (rules, lock, check, dictionary) calls."""

from __future__ import annotations

import dataclasses
import math
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema import catalogue
from agent_telemetry.schema.capacity import (
    EVENT_BUDGET_BITS,
    domain_values,
    event_capacity,
    is_exact,
    round_significant,
    round_with,
    rounded_values,
    show_bits,
    step_table,
    tenths,
)
from agent_telemetry.schema.lock import build_lock
from agent_telemetry.schema.spec import EventSpec, FieldSpec
from tests.schema.attacks import define, event


def _exact(spec: EventSpec) -> EventSpec:
    """The event as it was before the precision change: every int exact."""
    fields = tuple(dataclasses.replace(f, precision=None) for f in spec.fields)
    return dataclasses.replace(spec, fields=fields)


def test_the_issues_figures_before_the_precision_change() -> None:
    # log2 of each field's domain, +1 value when optional: the table in issue 23, with
    # pipeline_run's stalled reason and provider lane of issue 30 (+2.8 bits); then, since
    # issue 36, +1 value per field (rejected) and the unknown_fields flag (x2).
    bits = {s.name: event_capacity(_exact(s)).bits for s in catalogue()}
    assert bits == {
        "pipeline_run": "81.0",
        "chat_turn": "45.8",
        "pipeline_render": "44.2",
        "provider_status": "29.9",
    }
    run = event_capacity(_exact(next(s for s in catalogue() if s.name == "pipeline_run")))
    assert [f.bits for f in run.fields if f.name.endswith("_ms")] == ["21.8", "21.8"]


def test_the_catalogue_after_the_precision_change() -> None:
    bits = {s.name: event_capacity(s).bits for s in catalogue()}
    assert bits == {
        "pipeline_run": "61.3",  # issue 36's data review approves exactly this
        "chat_turn": "35.9",
        "pipeline_render": "31.3",
        "provider_status": "24.9",
    }
    run = event_capacity(next(s for s in catalogue() if s.name == "pipeline_run"))
    # 0..999, then 900 values a decade, then 1,000,000..3,600,000 by 10,000; absent; and
    # rejected (named in invalid_fields).
    assert run.field("duration_ms") is not None
    assert run.field("duration_ms").values == 1000 + 3 * 900 + 261 + 1 + 1  # type: ignore[union-attr]


def test_the_lock_records_the_same_figures() -> None:
    lock = build_lock(catalogue())
    for spec in catalogue():
        entry = lock.events[spec.name][spec.schema_version]
        capacity = event_capacity(spec)
        assert entry.capacity_bits == float(capacity.bits)
        assert entry.capacity_values == capacity.values
        for locked, counted in zip(entry.fields, capacity.fields, strict=True):
            assert (locked.values, locked.bits) == (counted.values, float(counted.bits))


@given(st.integers(min_value=1, max_value=2**70))
def test_tenths_are_log2_rounded_to_nearest(values: int) -> None:
    exact = 10 * math.log2(values)
    got = tenths(values)
    assert abs(got - exact) <= 0.5 + 1e-9
    if abs(exact - round(exact)) > 1e-6 and abs(exact % 1 - 0.5) > 1e-6:
        assert got == round(exact)


def test_tenths_at_powers_of_two_are_exact() -> None:
    for k in range(0, 80):
        assert tenths(2**k) == 10 * k
        assert show_bits(tenths(2**k)) == f"{k}.0"


def _reference(value: int, digits: int) -> int:
    """Significant-digit rounding, half away from zero, by decimal arithmetic."""
    if value == 0:
        return 0
    d = Decimal(abs(value))
    exponent = d.adjusted() - digits + 1
    if exponent <= 0:
        return value
    rounded = int(d.scaleb(-exponent).quantize(Decimal(1), ROUND_HALF_UP).scaleb(exponent))
    return rounded if value > 0 else -rounded


@given(st.integers(min_value=-(2**53), max_value=2**53), st.integers(min_value=1, max_value=15))
def test_rounding_matches_decimal_arithmetic(value: int, digits: int) -> None:
    assert round_significant(value, digits) == _reference(value, digits)
    if value >= 10**digits:
        assert round_with(value, step_table(digits)) == _reference(value, digits)


def _boundaries(digits: int) -> set[int]:
    """Every value of the two decimal lengths past ``digits`` (each half-way point among
    them), plus the edges of every longer length and of every bit length up to 2^53."""
    values = set(range(10**digits, 10 ** (digits + 2)))
    for length in range(digits + 2, 17):
        top, step = 10**length, 10 ** (length + 1 - digits)
        for centre in (top, top + step // 2, top - step // 20 * 10, 3 * top + step // 2):
            values |= {centre - 1, centre, centre + 1}
    for bits in range(1, 54):
        values |= {2**bits - 1, 2**bits, 2**bits + 1}
    return {v for v in values if v >= 10**digits}


@pytest.mark.parametrize("digits", [1, 2, 3, 4])
def test_the_emitters_step_table_rounds_as_decimal_arithmetic_at_every_edge(digits: int) -> None:
    # The emitter rounds through step_table (a lookup by bit length); a float half-step or
    # a wrong half would pass random values and write 1230.0 or 1000 for 1005.
    table = step_table(digits)
    for value in sorted(_boundaries(digits)):
        rounded = round_with(value, table)
        assert type(rounded) is int
        assert rounded == _reference(value, digits), value


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (999, 999),
        (1234, 1230),
        (1235, 1240),
        (9995, 10_000),
        (3_599_999, 3_600_000),
        (-1235, -1240),
    ],
)
def test_rounding_at_the_edges(value: int, rounded: int) -> None:
    assert round_significant(value, 3) == rounded


@given(
    st.integers(min_value=-3000, max_value=3000),
    st.integers(min_value=0, max_value=6000),
    st.integers(min_value=1, max_value=3),
)
def test_rounded_values_are_counted_exactly(ge: int, width: int, digits: int) -> None:
    le = ge + width
    ge, le = round_significant(ge, digits), round_significant(le, digits)
    assert is_exact(ge, digits)
    assert is_exact(le, digits)
    brute = {round_significant(v, digits) for v in range(ge, le + 1)}
    assert all(ge <= v <= le for v in brute)  # rounding never leaves exact bounds
    assert rounded_values(ge, le, digits) == len(brute)


def test_no_precision_counts_every_value() -> None:
    assert rounded_values(-5, 5, None) == 11


@pytest.mark.parametrize(
    ("ge", "le", "values"),
    [(-1, 1, 3), (-1, 0, 2), (0, 1, 2), (-2, -1, 2), (-9, 1, 11), (-1, 9, 11)],
)
def test_bounds_around_zero_count_zero_once(ge: int, le: int, values: int) -> None:
    assert rounded_values(ge, le, 2) == values


def test_an_int_of_one_value_has_a_domain_of_one() -> None:
    one = FieldSpec("mode", "int", True, "The only mode.", ge=5, le=5)
    assert domain_values(one) == 1
    with pytest.raises(ValueError, match=r"^mode: an int without bounds has no capacity$"):
        domain_values(dataclasses.replace(one, ge=6))


def test_an_event_of_exactly_64_bits_is_accepted_and_one_bit_more_is_not() -> None:
    # A required field of three members writes four things (or is rejected), two bits;
    # one of one member, one bit; the unknown_fields flag, one more bit: 31 * 2 + 1 + 1.
    fields = "\n".join(
        f'f{i:02d}: Literal["a", "b", "c"] = Field(description="Bits {i}.")' for i in range(31)
    )
    fields += '\nlast: Literal["a"] = Field(description="One bit.")'
    model = define(event(fields))
    assert event_capacity(model.spec()).bits == f"{EVENT_BUDGET_BITS}.0"  # type: ignore[attr-defined]
    with pytest.raises(SchemaRuleError) as caught:
        define(event(fields + '\nextra: Literal["a"] = Field(description="One more.")'))
    assert caught.value.rule == "EVENT_CAPACITY"
    assert caught.value.detail.startswith("attack_event can say 65.0 bits per line")


def test_the_budget_refusal_names_the_fields_that_carry_the_most() -> None:
    source = event(
        """
        a: int | None = count(0, 9_999_999, "A.", waiver="w")
        b: int | None = count(0, 9_999_999, "B.", waiver="w")
        c: int | None = count(0, 9_999_999, "C.", waiver="w")
        small: bool | None = flag("Small.")
        """
    )
    with pytest.raises(SchemaRuleError) as caught:
        define(source)
    assert caught.value.detail == (
        "attack_event can say 72.8 bits per line, over the budget of 64; the fields that "
        "carry the most: a (23.3), b (23.3), c (23.3). Bucket or round them, or split the event"
    )


@pytest.mark.parametrize(
    "bounds", [{"ge": None}, {"le": None}, {"ge": None, "le": None}, {"ge": 10, "le": 9}]
)
def test_an_int_without_two_ordered_bounds_has_no_capacity(bounds: dict[str, int | None]) -> None:
    # The definition rules refuse such a field first; counting one anyway would make a
    # budget out of nothing (a negative or unbounded count).
    spec = catalogue()[0]
    field = next(f for f in spec.fields if f.kind == "int")
    with pytest.raises(ValueError, match=f"^{field.name}: an int without bounds has no capacity$"):
        domain_values(dataclasses.replace(field, **bounds))


def test_a_channel_of_no_values_has_no_bits() -> None:
    with pytest.raises(ValueError, match=r"^a channel holds at least one value$"):
        tenths(0)


def test_an_event_capacity_names_its_event_and_version() -> None:
    for spec in catalogue():
        found = event_capacity(spec)
        assert (found.event, found.schema_version) == (spec.name, spec.schema_version)
