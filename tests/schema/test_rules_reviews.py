"""DATA_REVIEW and EVENT_CAPACITY as an author meets them: a sound review is accepted and
recorded, each malformed one is refused with its own message, and the capacity rule
counts every field an event carries (a fixed value, a rounded duration)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from agent_telemetry.schema import SchemaRuleError, TelemetryEvent, count, flag
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import DataReview


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
