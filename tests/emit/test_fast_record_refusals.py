"""The hot path's validator, built afresh, where mutation testing found it unpinned.

It never writes a value the model refuses: an int outside the field's bounds, a ``True``,
``"1"`` or ``1.0`` for a strict int, a ``1``, ``0`` or ``"true"`` for a strict bool is
left to the model, which names it invalid. An unknown key is never accepted, not even
with the value None. And a model whose core schema the hot path cannot read, or whose
schema is not its spec, gets no hot path: the model alone decides its lines.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Annotated, Any, ClassVar

import pytest
from annotated_types import Interval
from pydantic import Field, model_validator

from agent_telemetry.emit import TelemetryValidationError, emit
from agent_telemetry.emit._fast_record import record_validator
from agent_telemetry.schema import EVENTS, TelemetryEvent
from tests.emit.conftest import admit, lines
from tests.emit.test_fast_record import by_model
from tests.emit.test_fast_record_fresh import by_fresh_path, fresh
from tests.emit.test_unknown_and_unusable import SECRET, VALID
from tests.schema.copies import rules_off

RUN = {"lane": "public", "status": "ok"}
RENDER = {"theme": "dark", "render_lane": "run"}

# (event, fields): one value the model refuses among valid ones.
REFUSED: dict[str, tuple[str, dict[str, Any]]] = {
    "int_below_ge": ("pipeline_run", {**RUN, "attempts": -1}),
    "int_above_le": ("pipeline_run", {**RUN, "attempts": 3}),
    "int_far_above_le": ("pipeline_run", {**RUN, "queue_wait_ms": 3_600_001}),
    "true_for_int": ("pipeline_run", {**RUN, "attempts": True}),
    "str_for_int": ("pipeline_run", {**RUN, "attempts": "1"}),
    "float_for_int": ("pipeline_run", {**RUN, "attempts": 1.0}),
    "one_for_bool": ("pipeline_render", {**RENDER, "passed": 1}),
    "zero_for_bool": ("pipeline_render", {**RENDER, "passed": 0}),
    "str_for_bool": ("pipeline_render", {**RENDER, "passed": "true"}),
}

# (event, fields): values at a field's bounds, and both bools, are written as given.
AT_THE_EDGES: dict[str, tuple[str, dict[str, Any]]] = {
    "int_at_ge": ("pipeline_run", {**RUN, "attempts": 0}),
    "int_at_le": ("pipeline_run", {**RUN, "attempts": 2, "queue_wait_ms": 3_600_000}),
    "true": ("pipeline_render", {**RENDER, "passed": True}),
    "false": ("pipeline_render", {**RENDER, "passed": False}),
}


@pytest.mark.parametrize("call", list(REFUSED.values()), ids=list(REFUSED))
def test_a_value_outside_the_bounds_or_of_a_lax_type_is_left_to_the_model(
    call: tuple[str, dict[str, Any]],
) -> None:
    name, fields = call
    assert by_model(EVENTS[name], fields) is None  # the model names it invalid
    assert by_fresh_path(EVENTS[name], fields) is None  # so the hot path writes nothing


@pytest.mark.parametrize("call", list(AT_THE_EDGES.values()), ids=list(AT_THE_EDGES))
def test_a_value_at_the_edge_of_its_domain_takes_the_hot_path_as_given(
    call: tuple[str, dict[str, Any]],
) -> None:
    name, fields = call
    got = by_fresh_path(EVENTS[name], fields)
    assert got is not None
    assert list(got.items()) == list((by_model(EVENTS[name], fields) or {}).items())
    assert [(got[k], type(got[k])) for k in fields] == [(v, type(v)) for v in fields.values()]


@pytest.mark.parametrize("extra", [{SECRET: None}, {SECRET: None, "other": None}])
def test_a_freshly_built_hot_path_never_accepts_an_unknown_key_whose_value_is_none(
    extra: dict[str, None],
) -> None:
    validator = fresh(EVENTS["chat_turn"])
    assert "refusal" not in validator({**VALID, "refusal": None})  # a known field: left out
    with pytest.raises(Exception):  # noqa: B017, PT011 - any exception: the model decides
        validator({**VALID, **extra})


def unreadable_schema() -> type[TelemetryEvent]:
    """A model validator the rules would refuse, behind a core schema replaced after
    definition: the hot path cannot see the validator, so it must not guess."""
    with rules_off():

        class Unreadable(TelemetryEvent):
            """A test event whose core schema cannot be read."""

            event_name: ClassVar[str] = "test_unreadable_schema"
            schema_version: ClassVar[int] = 1

            attempts: int | None = Field(None, ge=0, le=2, strict=True, description="Attempts.")

            @model_validator(mode="after")
            def never_two(self) -> Unreadable:
                if self.attempts == 2:
                    raise ValueError("two")
                return self

    Unreadable.__pydantic_core_schema__ = None  # type: ignore[assignment]
    return Unreadable


def misread_bounds() -> type[TelemetryEvent]:
    """Bounds the spec does not read (an ``Interval``): pydantic runs 0..2, the spec
    says unbounded."""
    with rules_off():

        class Misread(TelemetryEvent):
            """A test event whose schema is not its spec."""

            event_name: ClassVar[str] = "test_misread_bounds"
            schema_version: ClassVar[int] = 1

            attempts: Annotated[int, Interval(ge=0, le=2)] | None = Field(
                None, strict=True, description="Attempts."
            )

    return Misread


# Built inside each test (plan_for caches a plan, which would hide a change): the model,
# a value it refuses, and strict mode's message for it.
UNTRUSTED: dict[str, tuple[Callable[[], type[TelemetryEvent]], int, str]] = {
    "unreadable_schema": (unreadable_schema, 2, "test_unreadable_schema: value_error"),
    "misread_bounds": (misread_bounds, 5, "test_misread_bounds: attempts: less_than_equal"),
}


@pytest.mark.parametrize("case", list(UNTRUSTED.values()), ids=list(UNTRUSTED))
def test_a_model_the_hot_path_cannot_reproduce_gets_none_and_its_refusals_are_named(
    lenient: io.StringIO, case: tuple[Callable[[], type[TelemetryEvent]], int, str]
) -> None:
    make, refused, _ = case
    model = make()
    envelope = {"event": model.event_name, "schema_version": 1, "severity": "INFO", "time": ""}
    assert record_validator(model, envelope) is None
    admit(model)
    emit(model, attempts=refused)
    (line,) = lines(lenient)
    assert line["invalid_fields"] == ["attempts"]
    assert "attempts" not in line


@pytest.mark.parametrize("case", list(UNTRUSTED.values()), ids=list(UNTRUSTED))
def test_a_model_the_hot_path_cannot_reproduce_raises_the_models_error_in_strict_mode(
    strict: io.StringIO, case: tuple[Callable[[], type[TelemetryEvent]], int, str]
) -> None:
    make, refused, message = case
    model = make()
    admit(model)
    with pytest.raises(TelemetryValidationError) as info:
        emit(model, attempts=refused)
    assert str(info.value) == message
    assert strict.getvalue() == ""
