"""What a bounded int may say, and which event names read as carrying a value, as an
author meets them: every rule the probe breaks, with its exact message, or none.

Each probe is defined in the test body, so the rules run while the test runs (the
catalogue's own events were checked at import)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

import pytest
from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count, flag
from agent_telemetry.schema.lock import build_lock, lock_json
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import CardinalityWaiver, Precision
from tests.schema.copies import rules_off

PRECISION_RANGE = "precision is a number of significant digits, 1 to 15"
NOT_EXACT = "both bounds must be exact at 3 significant digits, so that rounding never leaves them"
MEASUREMENT = (
    "bits: an int of more than 16 bits is a measurement; keep the digits its analysis "
    'needs (count(..., precision=3)), or add count(..., waiver="why")'
)
REMOVE_WAIVER = "the field is within 16 bits: remove the waiver"


def broken(
    event_name: str | None = "probe_event", schema_version: int = 1, **fields: Any
) -> list[tuple[str, str | None, str]]:
    """Every (rule, field, detail) a probe event with these (annotation, default) fields
    breaks; an event_name of None leaves the class without one."""
    namespace: dict[str, Any] = {
        "__annotations__": {"event_name": ClassVar[str], "schema_version": ClassVar[int]},
        "event_name": event_name,
        "schema_version": schema_version,
        "__doc__": "A probe.",
    }
    if event_name is None:
        del namespace["__annotations__"]["event_name"], namespace["event_name"]
    for name, (annotation, default) in fields.items():
        namespace["__annotations__"][name] = annotation
        namespace[name] = default
    with rules_off():
        model = type("Probe", (TelemetryEvent,), namespace)
    return list(violations(model, TelemetryEvent))


def with_precision(info: Any, digits: Any) -> Any:
    info.metadata.append(Precision(digits))
    return info


def test_a_precision_on_a_flag_is_refused() -> None:
    done = with_precision(flag("Done."), 3)
    assert broken(done=(bool | None, done)) == [
        ("INT_PRECISION", "done", "a precision belongs on a bounded int (count(..., precision=N))")
    ]


@pytest.mark.parametrize("digits", [True, "3", 0, 16])
def test_a_precision_that_is_not_1_to_15_digits_is_refused(digits: Any) -> None:
    ms = with_precision(count(0, 1_000_000, "Ms."), digits)
    assert broken(ms=(int | None, ms)) == [("INT_PRECISION", "ms", PRECISION_RANGE)]


@pytest.mark.parametrize(("le", "digits"), [(1_000_000, 1), (1_000_000, 2)])
def test_the_lowest_precisions_are_accepted_and_round(le: int, digits: int) -> None:
    assert broken(ms=(int | None, count(0, le, "Ms.", precision=digits))) == []


def test_a_precision_of_15_digits_is_accepted() -> None:
    ms = count(0, 1_000_000, "Ms.", precision=15, waiver="reviewed: every ms")
    assert broken(ms=(int | None, ms)) == []


@pytest.mark.parametrize(("ge", "le"), [(0, 3_599_999), (1_001, 3_600_000), (1_001, 3_599_999)])
def test_a_bound_rounding_would_leave_is_refused(ge: int, le: int) -> None:
    assert broken(ms=(int | None, count(ge, le, "Ms.", precision=3))) == [
        ("INT_PRECISION", "ms", NOT_EXACT)
    ]


def test_a_bound_off_a_one_digit_grid_names_one_digit() -> None:
    assert broken(ms=(int | None, count(0, 3_500_000, "Ms.", precision=1))) == [
        ("INT_PRECISION", "ms", NOT_EXACT.replace("3 significant digits", "1 significant digit"))
    ]


def test_an_optional_int_counts_its_none() -> None:
    # 65,535 values and None fill 16 bits; one more value does not fit.
    assert broken(n=(int | None, count(0, 65_534, "N."))) == []
    assert broken(n=(int | None, count(0, 65_535, "N."))) == [
        ("INT_PRECISION", "n", f"16.0 {MEASUREMENT}")
    ]


def test_a_required_int_has_no_none_to_count() -> None:
    n = Field(ge=0, le=65_535, strict=True, description="N.")
    assert broken(n=(int, n)) == []


def test_a_waiver_on_a_narrow_int_is_refused() -> None:
    for ge, le in [(5, 5), (0, 65_534)]:
        n = count(ge, le, "N.", waiver="reviewed")
        assert broken(n=(int | None, n)) == [("INT_PRECISION", "n", REMOVE_WAIVER)]


def test_inverted_bounds_are_refused_without_a_count() -> None:
    assert broken(n=(int | None, count(10, 5, "N."))) == [
        ("INT_BOUNDED", "n", "ge is greater than le")
    ]


def test_a_waiver_on_inverted_bounds_adds_nothing_to_the_bounds_refusal() -> None:
    n = count(10, 5, "N.", waiver="reviewed")
    assert broken(n=(int | None, n)) == [("INT_BOUNDED", "n", "ge is greater than le")]


WIDE = 9_000_000_000_000_000


def wide() -> Any:
    return count(0, WIDE, "Wide.", waiver="reviewed: every value")


def test_a_15_digit_precision_rounds_in_the_event_capacity() -> None:
    rounded = count(0, WIDE, "Rounded.", precision=15, waiver="reviewed: every value")
    assert broken(a=(int | None, wide()), b=(int | None, rounded)) == [
        (
            "EVENT_CAPACITY",
            None,
            "probe_event can say 104.7 bits per line, over the budget of 64; the fields "
            "that carry the most: a (53.0), b (50.7). Bucket or round them, or split the event",
        )
    ]


@pytest.mark.parametrize(
    ("field", "detail"),
    [
        (count(0, 3_599_999, "Ms.", precision=3), NOT_EXACT),
        (count(1_001, 3_600_000, "Ms.", precision=3), NOT_EXACT),
        (with_precision(count(0, 1_000_000, "Ms."), 16), PRECISION_RANGE),
        (with_precision(count(0, 1_000_000, "Ms."), 0), PRECISION_RANGE),
    ],
)
def test_an_unsound_precision_holds_back_the_event_capacity(field: Any, detail: str) -> None:
    # The event is over budget, but its capacity waits until every precision is sound.
    assert broken(a=(int | None, wide()), b=(int | None, field)) == [("INT_PRECISION", "b", detail)]


def done() -> Any:
    return (bool | None, flag("Done."))


KIND = "; an event name is a kind of line"


@pytest.mark.parametrize(
    ("event_name", "holds"),
    [
        ("probe_a1b2c3d4e5f6a7b8c9d0e1f2", "holds a hex or base64-like run"),
        ("probe_user_id", "holds the identifier word 'id'"),
        ("probe_415555", "holds 6 or more digits"),
        ("probe_41555", "holds a number of 4 or more digits beside a word"),
        ("probe_1234", "holds a number of 4 or more digits beside a word"),
        ("probe_10_0_1", "holds 3 or more numeric groups joined by dots or underscores"),
    ],
)
def test_an_event_name_carrying_a_value_is_refused(event_name: str, holds: str) -> None:
    assert broken(event_name=event_name, done=done()) == [
        ("EVENT_NAME_NO_IDENTIFIER", None, f"event_name {holds}{KIND}")
    ]


@pytest.mark.parametrize("event_name", ["probe_123", "probe_1a2b", "probe_2_5", "probe_90_100"])
def test_an_event_name_with_a_bucket_or_short_number_is_accepted(event_name: str) -> None:
    assert broken(event_name=event_name, done=done()) == []


def test_an_event_without_a_name_is_refused_once() -> None:
    assert broken(event_name=None, done=done()) == [
        ("EVENT_NAME", None, "event_name must be lowercase snake_case, at most 64 characters")
    ]


def test_schema_version_999_is_the_last_accepted() -> None:
    assert broken(schema_version=999, done=done()) == []
    assert broken(schema_version=1000, done=done()) == [
        (
            "EVENT_VERSION",
            None,
            "schema_version must be at most 999: a version counts reviewed changes; a larger "
            "number could name someone",
        )
    ]


class Tier(StrEnum):
    free = "free"
    paid = "paid"


def test_a_waiver_on_a_small_closed_set_is_refused() -> None:
    # The waiver reaches the set's spec, so ENUM_SIZE can see it is not needed.
    tier: Any = Field(None, description="Tier.")
    tier.metadata.append(CardinalityWaiver("reviewed"))
    assert broken(tier=(Tier | None, tier)) == [
        ("ENUM_SIZE", "tier", "the set has at most 64 members: remove the waiver")
    ]


def test_the_lock_records_the_waiver_of_a_wide_closed_set() -> None:
    names = [f"m{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(65)]
    wide_set = StrEnum("WideSet", {n: n for n in names})  # type: ignore[misc]
    big: Any = Field(None, description="Big.")
    big.metadata.append(CardinalityWaiver("reviewed: every bucket"))
    namespace: dict[str, Any] = {
        "__annotations__": {
            "event_name": ClassVar[str],
            "schema_version": ClassVar[int],
            "big": wide_set | None,
        },
        "event_name": "probe_event",
        "schema_version": 1,
        "__doc__": "A probe.",
        "big": big,
    }
    model: Any = type("Probe", (TelemetryEvent,), namespace)  # the rules accept it
    locked = lock_json(build_lock([model.__event_spec__]))
    field = locked["events"]["probe_event"]["1"]["fields"][0]
    assert (field["name"], field["cardinality_waiver"]) == ("big", "reviewed: every bucket")
