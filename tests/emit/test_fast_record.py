"""The hot path's record validator never disagrees with the model: it returns exactly the
record the model's validator leads to, or raises so that the model decides."""

from __future__ import annotations

import enum
import io
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from agent_telemetry.emit import counters, emit
from agent_telemetry.emit._fast_record import record_validator
from agent_telemetry.emit._validate import plan_for
from agent_telemetry.schema import EVENTS, TelemetryEvent, event_spec
from tests.emit.adversarial import adversarial, calls, rounded, valid
from tests.emit.test_lenient import WEIRD
from tests.schema.copies import rules_off

ENVELOPE = {"event": "e", "schema_version": 1, "severity": "INFO", "time": ""}


def by_model(model: type[TelemetryEvent], fields: dict[str, Any]) -> dict[str, Any] | None:
    """The record the model's own validator leads to (time left empty), or None."""
    try:
        instance = model.__pydantic_validator__.validate_python(fields)
    except Exception:
        return None
    spec = event_spec(model)
    head = {"event": spec.name, "schema_version": spec.schema_version}
    values = {k: rounded(spec.field(k), v) for k, v in instance.__dict__.items() if v is not None}
    return {**head, "severity": "INFO", "time": "", **values}


def by_fast_path(model: type[TelemetryEvent], fields: dict[str, Any]) -> dict[str, Any] | None:
    fast = plan_for(model).fast
    assert fast is not None
    try:
        return fast(fields)
    except Exception:
        return None


def assert_agrees(model: type[TelemetryEvent], fields: dict[str, Any]) -> None:
    fast = by_fast_path(model, fields)
    if fast is None:
        return  # the model decides: always correct
    expected = by_model(model, fields)
    assert expected is not None, "the fast path accepted what the model rejects"
    assert list(fast.items()) == list(expected.items())  # same keys, order and values
    # Same types, except that the hot path writes an enum member as its own exact str.
    plain = [str if isinstance(v, enum.Enum) else type(v) for v in expected.values()]
    assert [type(v) for v in fast.values()] == plain


def test_every_catalogue_event_has_a_fast_path() -> None:
    # Not correctness (the model always decides otherwise) but the emitter's speed.
    assert all(plan_for(model).fast is not None for model in EVENTS.values())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_adversarial_calls_agree_with_the_model(
    call: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    name, fields, unknown = call
    assert_agrees(EVENTS[name], {**fields, **unknown})


@st.composite
def valid_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """Only valid values or None, in any key order: the path every healthy service takes."""
    name = draw(st.sampled_from(list(EVENTS)))
    fields: dict[str, Any] = {}
    for spec in event_spec(EVENTS[name]).fields:
        optional = st.none() if not spec.required else st.nothing()
        if spec.required or draw(st.booleans()):
            fields[spec.name] = draw(st.one_of(valid(spec), optional))
    keys = draw(st.permutations(list(fields)))
    return name, {key: fields[key] for key in keys}


@settings(max_examples=300, deadline=None)
@given(valid_calls())
def test_valid_calls_take_the_fast_path_and_match_the_model(
    call: tuple[str, dict[str, Any]],
) -> None:
    name, fields = call
    model = EVENTS[name]
    assert by_fast_path(model, fields) is not None
    assert_agrees(model, fields)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_one_bad_field_among_valid_ones_is_never_accepted(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(list(EVENTS)))
    specs = event_spec(EVENTS[name]).fields
    fields = {s.name: data.draw(valid(s)) for s in specs}
    bad = data.draw(st.sampled_from(specs))
    fields[bad.name] = data.draw(adversarial(bad).filter(lambda v: v is not None))
    assert_agrees(EVENTS[name], fields)


@pytest.mark.parametrize("make", list(WEIRD.values()), ids=list(WEIRD))
@pytest.mark.parametrize("field", ["lane", "reason", "queue_wait_ms"])
def test_hostile_values_agree_with_the_model(field: str, make: Callable[[], object]) -> None:
    assert_agrees(EVENTS["pipeline_run"], {"lane": "public", "status": "ok", field: make()})


@pytest.mark.parametrize("key", ["event", "schema_version", "severity", "time"])
def test_an_envelope_key_given_as_a_field_is_left_to_the_model(key: str) -> None:
    fields = {"tier": "public", "kind": "text", key: ENVELOPE[key]}
    assert by_fast_path(EVENTS["chat_turn"], fields) is None


class Liar(str):
    """A key that hashes and compares as a field's name, whatever its text."""

    def __hash__(self) -> int:
        return hash("reason")

    def __eq__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize(
    "unknown",
    [{"x": None}, {"reason_": None}, {Liar("zzz"): None}, {"x": None, "reason": None}],
    ids=["unknown", "near-name", "lying-str-key", "beside-a-none-field"],
)
def test_an_unknown_key_given_none_is_left_to_the_model(unknown: dict[str, Any]) -> None:
    # The validator drops unknown keys (cheaper than refusing them); dropping one must
    # never pass for "a field given None, left out".
    fields = {"lane": "public", "status": "ok", **unknown}
    assert by_fast_path(EVENTS["pipeline_run"], fields) is None


def test_emit_counts_an_unknown_key_given_none(lenient: io.StringIO) -> None:
    record = emit("pipeline_run", lane="public", status="ok", nickname=None)
    assert record is not None
    assert record["unknown_fields"] == 1
    assert counters().unknown == {"pipeline_run": 1}


def test_none_is_left_out_but_an_invalid_optional_value_is_not_accepted() -> None:
    model = EVENTS["chat_turn"]
    record = by_fast_path(model, {"tier": "public", "kind": "text", "refusal": None})
    assert record is not None
    assert "refusal" not in record
    assert by_fast_path(model, {"tier": "public", "kind": "text", "refusal": "nope"}) is None


class Colour(enum.Enum):
    RED = "red"


with rules_off():  # ENUM_PLAIN refuses it; the emitter must still handle it correctly

    class WithPlainEnum(TelemetryEvent):
        """A test event with a plain (non-str) enum field."""

        event_name: ClassVar[str] = "test_plain_enum"
        schema_version: ClassVar[int] = 1

        colour: Colour = Field(description="A plain (non-str) enum.")


class WithDefault(BaseModel):
    # Not an event (the definition rules forbid a default other than None); the fast
    # path must still refuse to reproduce such a schema rather than get it wrong.
    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(0, ge=0, le=2, strict=True)


class Aliased(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attempts: int | None = Field(None, validation_alias="tries")


def test_plain_enum_fields_get_no_fast_path() -> None:
    assert plan_for(WithPlainEnum).fast is None


@pytest.mark.parametrize("model", [WithDefault, Aliased])
def test_schemas_it_cannot_reproduce_exactly_get_no_fast_path(model: type[BaseModel]) -> None:
    assert record_validator(model, ENVELOPE) is None  # type: ignore[arg-type]


def test_a_model_validator_around_the_model_means_no_fast_path() -> None:
    from pydantic import model_validator

    with rules_off():  # MODEL_VALIDATOR refuses it at definition

        class Checked(TelemetryEvent):
            """A test event with a model validator."""

            event_name: ClassVar[str] = "test_model_validator"
            schema_version: ClassVar[int] = 1

            attempts: int | None = Field(None, ge=0, le=2, strict=True, description="Attempts.")

            @model_validator(mode="after")
            def never_two(self) -> Checked:
                if self.attempts == 2:
                    raise ValueError("two")
                return self

    assert record_validator(Checked, ENVELOPE) is None
