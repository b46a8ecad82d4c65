"""What ``schema.spec`` tells authors and tools about a field, pinned exactly.

- a type outside the closed set is refused by FIELD_TYPE with a detail naming what it
  is (a union, an enum or Literal of non-strings, float, a container, a type variable),
  word for word: it is the author's only hint;
- a reviewed field name reaches the spec and the lock whatever the field's kind;
- a field of a defined event allows exactly its members, its bounds (both inclusive)
  or the booleans, for the values ``check-logs`` reads back from a line.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, TypeVar

import pytest
from pydantic import Field

from agent_telemetry.schema import EventSpec, count, flag
from agent_telemetry.schema.lock import lock_json
from tests.schema.copies import field, lock_of
from tests.schema.test_rules import Color, define, desc
from tests.schema.test_rules_edges import refusal

ALLOWED = (
    "allowed: a closed set of strings (Literal/StrEnum), int with ge and le, bool, "
    "or Optional of one of those"
)

T = TypeVar("T")


class Level(enum.Enum):
    LOW = 1
    HIGH = "high"


@pytest.mark.parametrize(
    ("annotation", "what"),
    [
        (int | str | None, "a union of several types"),
        (Level | None, "an enum whose values are not all strings"),
        (Literal[1, 2] | None, "a Literal whose values are not all strings"),
        (Literal[Color.RED] | None, "a Literal whose values are not all strings"),
        (float | None, "float"),
        (dict[str, int] | None, "dict (containers are not allowed)"),
        (list[str] | None, "list (containers are not allowed)"),
        (T | None, "~T"),
        (
            Annotated[int | None, Field(ge=0, le=5)] | None,
            "a union inside Annotated (write Optional[Annotated[...]])",
        ),
    ],
    ids=[
        "union",
        "int_enum",
        "int_literal",
        "enum_literal",
        "float",
        "dict",
        "list",
        "typevar",
        "optional_inside_annotated",
    ],
)
def test_a_type_outside_the_closed_set_is_refused_saying_what_it_is(
    annotation: Any, what: str
) -> None:
    error = refusal(f=(annotation, desc()))
    detail = f"type is {what}; {ALLOWED}"
    assert (error.rule, error.field, error.detail) == ("FIELD_TYPE", "f", detail)
    assert str(error) == f"Probe.f: FIELD_TYPE: {detail}"


REASON = "the key of a colour map, not a credential"


@pytest.mark.parametrize(
    "declared",
    [
        (bool | None, flag("Whether the key was pressed.")),
        (int | None, count(0, 9, "Which key.")),
        (Color | None, desc()),
    ],
    ids=["bool", "int", "enum"],
)
def test_a_reviewed_name_reaches_the_spec_and_the_lock_for_every_kind(
    declared: tuple[Any, Any],
) -> None:
    model = define(owner_key=declared, reviewed_names={"owner_key": REASON})
    assert model.spec().field("owner_key").name_review == REASON
    locked = field(lock_json(lock_of({"probe_event": model})), "probe_event", "owner_key")
    assert locked["name_review"] == REASON


def _probe_fields() -> EventSpec:
    spec: EventSpec = define(
        lane=(Literal["fast", "slow"] | None, desc()),
        ok=(bool | None, flag("Ok.")),
        n=(int | None, count(-5, 5, "N.")),
    ).spec()
    return spec


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("lane", "fast", True),
        ("lane", "slow", True),
        ("lane", "medium", False),
        ("lane", "", False),
        ("ok", True, True),
        ("ok", False, True),
        ("n", 0, True),
        ("n", -5, True),  # ge is inclusive
        ("n", 5, True),  # le is inclusive
        ("n", -6, False),
        ("n", 6, False),
    ],
)
def test_a_field_allows_exactly_its_members_bounds_or_booleans(
    name: str, value: object, allowed: bool
) -> None:
    # The values check-logs reads back: a str for a closed set, a bool for a flag and an
    # exact int for a count (anything else is a "type" violation before allows is asked).
    assert _probe_fields().field(name).allows(value) is allowed
