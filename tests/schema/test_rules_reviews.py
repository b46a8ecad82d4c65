"""DATA_REVIEW and EVENT_CAPACITY as an author meets them: a sound review is accepted and
recorded, each malformed one is refused with its own message, and the capacity rule
counts every field an event carries (a fixed value, a rounded duration)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import BaseModel, Field, create_model

from agent_telemetry.schema import SchemaRuleError, TelemetryEvent, count, flag
from agent_telemetry.schema.capacity import MAX_MEMBERS
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import CardinalityWaiver, DataReview
from tests.schema.copies import rules_off


def define(reviews: Any = None, **fields: Any) -> Any:
    """A probe event with the given data_reviews and (annotation, default) fields."""
    namespace: dict[str, Any] = {
        "__annotations__": {"event_name": ClassVar[str], "schema_version": ClassVar[int]},
        "event_name": "probe_event",
        "schema_version": 1,
        "__doc__": "A probe.",
    }
    if reviews is not None:
        namespace["__annotations__"]["data_reviews"] = ClassVar[tuple[Any, ...]]
        namespace["data_reviews"] = reviews
    for name, (annotation, default) in fields.items():
        namespace["__annotations__"][name] = annotation
        namespace[name] = default
    return type("Probe", (TelemetryEvent,), namespace)


def refusal(**kwargs: Any) -> SchemaRuleError:
    with pytest.raises(SchemaRuleError) as caught:
        define(**kwargs)
    return caught.value


OK = {"done": (bool | None, flag("Done."))}


@pytest.mark.parametrize("bits", [0.1, 0.5, 3, 12.3, 64.0])
def test_a_sound_review_is_accepted_and_recorded(bits: float) -> None:
    review = DataReview("issue 7", "needs the tier", bits, "probe_event", 1)
    model = define(reviews=(review,), **OK)
    assert model.data_reviews == (review,)


REVIEW_FORM = "DataReview(reference=..., reason=..., bits=..., event=..., schema_version=...)"
RANGE = "a data review approves from 0.1 to 64 bits, to one decimal, as check prints capacities"


@pytest.mark.parametrize(
    ("reviews", "detail"),
    [
        ([], f"data_reviews is a tuple of {REVIEW_FORM}"),
        (("approved",), f"data_reviews holds only {REVIEW_FORM}"),
        ((DataReview(" ", "why", 1.0, "probe_event", 1),), "a data review needs its reference"),
        ((DataReview("r", "", 1.0, "probe_event", 1),), "a data review needs its reason"),
        ((DataReview("r", "why", 1.0, None, 1),), "a data review needs its event"),  # type: ignore[arg-type]
        (
            (DataReview("r", "why", 1.0, "probe_event", True),),
            "a data review names the schema_version it approves",
        ),
        (
            (DataReview("r", "why", 1.0, "probe_event", "1"),),  # type: ignore[arg-type]
            "a data review names the schema_version it approves",
        ),
        (
            (DataReview("r", "why", True, "probe_event", 1),),
            "a data review's bits is a number of bits, to one decimal",
        ),
        (
            (DataReview("r", "why", "2.0", "probe_event", 1),),  # type: ignore[arg-type]
            "a data review's bits is a number of bits, to one decimal",
        ),
        ((DataReview("r", "why", 0, "probe_event", 1),), RANGE),
        ((DataReview("r", "why", 64.1, "probe_event", 1),), RANGE),
        ((DataReview("r", "why", 1.05, "probe_event", 1),), RANGE),
        # A sliver of a bit is no review: 1e-7 sits within the float tolerance of 0.
        ((DataReview("r", "why", 1e-7, "probe_event", 1),), RANGE),
        ((DataReview("r", "why", 1e-9, "probe_event", 1),), RANGE),
    ],
)
def test_a_malformed_review_is_refused_with_its_own_message(reviews: Any, detail: str) -> None:
    error = refusal(reviews=reviews, **OK)
    assert (error.rule, error.field) == ("DATA_REVIEW", None)
    assert error.detail == detail


FLAGS_64 = {f"f{i:02d}": (bool | None, flag(f"Bit {i}.")) for i in range(64)}


def test_a_rounded_duration_is_counted_at_its_precision() -> None:
    # 3,600,001 raw values, 3,601 once rounded to 3 significant digits (about 11.8 bits).
    model = define(ms=(int | None, count(0, 3_600_000, "Ms.", precision=3)))
    spec = model.spec().field("ms")
    assert (spec.precision, spec.ge, spec.le) == (3, 0, 3_600_000)
    assert define(n=(int | None, count(0, 9, "N."))).spec().field("n").precision is None


def test_the_capacity_rule_counts_fixed_and_rounded_fields_over_the_budget() -> None:
    # 64 optional flags (3 values each) are over the budget alone. A field fixed to one
    # value (ge == le) adds nothing but is no reason to skip the count.
    error = refusal(
        fixed=(int | None, count(5, 5, "Always five.")),
        ms=(int | None, count(0, 3_600_000, "Ms.", precision=3)),
        **FLAGS_64,
    )
    assert (error.rule, error.field) == ("EVENT_CAPACITY", None)
    assert error.detail.startswith("probe_event can say ")
    assert "over the budget of 64; the fields that carry the most: ms (" in error.detail


def test_every_rule_an_unchecked_model_breaks_is_listed_without_a_crash() -> None:
    # violations() lists every rule broken; an int field with a missing or inverted bound
    # is the field rules' to name, and the capacity count must not trip on it.
    with rules_off():
        model = define(
            low=(int | None, Field(None, ge=0, strict=True, description="Low.")),
            high=(int | None, Field(None, le=9, strict=True, description="High.")),
            **FLAGS_64,
        )
    found = [(rule, field) for rule, field, _ in violations(model, TelemetryEvent)]
    assert ("INT_BOUNDED", "low") in found
    assert ("INT_BOUNDED", "high") in found
    assert all(rule != "EVENT_CAPACITY" for rule, _ in found)


def members(n: int) -> Any:
    return StrEnum("Bucket", {f"B{i}": f"b{i}" for i in range(n)})


def test_an_enum_of_exactly_64_members_is_accepted_and_a_waiver_on_it_refused() -> None:
    bucket = members(MAX_MEMBERS)
    assert MAX_MEMBERS == 64
    model = define(bucket=(bucket | None, Field(None, description="B.")))
    assert len(model.spec().field("bucket").members) == 64
    waived: Any = Annotated[bucket, CardinalityWaiver("reviewed")] | None
    error = refusal(bucket=(waived, Field(None, description="B.")))
    assert (error.rule, error.field) == ("ENUM_SIZE", "bucket")
    assert error.detail == "the set has at most 64 members: remove the waiver"


def test_an_enum_of_65_members_is_refused_with_the_way_out() -> None:
    error = refusal(bucket=(members(65) | None, Field(None, description="B.")))
    assert (error.rule, error.field) == ("ENUM_SIZE", "bucket")
    assert error.detail == (
        "65 members: a closed set of more than 64 can name users one by one; bucket it, "
        'or add a reviewed Annotated[..., CardinalityWaiver("why")]'
    )


def test_violations_lists_a_plain_model_without_a_crash() -> None:
    # violations() takes any pydantic model: one with none of TelemetryEvent's class
    # attributes has no data review to fault, and the member rules read only enum fields
    # (a field no spec describes is FIELD_TYPE's).
    class Plain(BaseModel):
        """A plain model."""

        bag: dict[str, str] | None = Field(None, description="Bag.")

    found = [(rule, field) for rule, field, _ in violations(Plain, TelemetryEvent)]
    assert ("FIELD_TYPE", "bag") in found
    assert all(rule != "DATA_REVIEW" for rule, _ in found)


def test_a_plain_model_over_the_budget_is_counted_under_no_event_name() -> None:
    plain = create_model(  # type: ignore[call-overload]
        "Plain", __doc__="A plain model.", f64=(bool | None, flag("Bit 64.")), **FLAGS_64
    )
    details = [d for rule, _, d in violations(plain, TelemetryEvent) if rule == "EVENT_CAPACITY"]
    assert len(details) == 1
    assert details[0].startswith(" can say 131.0 bits per line")
