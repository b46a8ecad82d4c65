"""The careful path's edges that mutation testing found unchecked.

The model path (``check``) beyond the hot path: placeholders that stand in for a missing
required field of each kind, a plain (non-str) Enum model's valid line, model-level
failures (a ``ValueError`` or any other exception from a model validator) that name no
field, values that make pydantic itself raise, keywords passed beside an instance, keys
that are a ``str`` subclass or no str at all, a subclass of an event model that never
went through the rules, and the order of strict mode's problems.

Plans are cached per model and per name, and mutation testing forks from a process
whose plans are already built; so every test here starts from empty caches (restored
afterwards) and builds the plans it uses, as ``test_fast_record_fresh`` does.
"""

from __future__ import annotations

import enum
import io
from collections.abc import Iterator
from typing import Any, ClassVar, cast

import pytest
from pydantic import Field, ValidationError, model_validator

from agent_telemetry.emit import TelemetryValidationError, _validate, counters, emit
from agent_telemetry.emit._processors import stamp
from agent_telemetry.schema import (
    EVENTS,
    ChatTier,
    ChatTurn,
    PipelineRun,
    TelemetryEvent,
    TurnKind,
    count,
)
from tests.emit.conftest import admit, admitted, lines
from tests.emit.test_lenient import Hostile
from tests.schema.copies import copy_model, rules_off

SECRET = "someone@example.com"
ENVELOPE = ("event", "schema_version", "severity", "time")


@pytest.fixture(autouse=True)
def fresh_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty plan caches for the test; monkeypatch puts the old plans back afterwards."""
    monkeypatch.setattr(
        _validate.STATE, "active", _validate.Active(_validate.STATE.active.catalogue)
    )


def fields_of(line: dict[str, Any]) -> dict[str, Any]:
    """The line without its envelope (``time`` differs on every line)."""
    return {k: v for k, v in line.items() if k not in ENVELOPE}


class Colour(enum.Enum):
    RED = "red"


class Key(str):
    """A plain str subclass: a keyword key the emitter must treat by its exact str only."""

    __slots__ = ()


class EqFalse(str):
    """A key equal to nothing, not even its own text: the model's lookup misses it."""

    __slots__ = ()
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        return False


class EqRaises(str):
    """A key whose __eq__ raises when the model looks a field up."""

    __slots__ = ()
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


with rules_off():  # each of these breaks a definition rule; the emitter must still cope

    class Painted(TelemetryEvent):
        """A plain (non-str) Enum field with a single member, and one count."""

        event_name: ClassVar[str] = "painted"
        schema_version: ClassVar[int] = 1

        colour: Colour = Field(description="A plain (non-str) enum.")
        size: int | None = count(0, 9, "Size.")

    class Checked(TelemetryEvent):
        """Required int and bool fields, and a model validator over both."""

        event_name: ClassVar[str] = "checked"
        schema_version: ClassVar[int] = 1

        passed: bool = Field(strict=True, description="Whether the check passed.")
        attempt: int = Field(ge=1, le=2, strict=True, description="Which attempt (1 or 2).")

        @model_validator(mode="after")
        def first_attempt_only(self) -> Checked:
            if self.passed and self.attempt == 2:
                raise ValueError("a check passes on its first attempt")
            return self

    class Guarded(TelemetryEvent):
        """A model validator that fails the whole model on certain combinations."""

        event_name: ClassVar[str] = "guarded"
        schema_version: ClassVar[int] = 1

        tier: ChatTier = Field(description="Tier.")
        attempts: int | None = count(0, 2, "Attempts.")

        @model_validator(mode="after")
        def no_admin_retries(self) -> Guarded:
            if self.tier == "admin" and self.attempts == 2:
                raise ValueError("admin runs are not retried twice")
            if self.tier == "admin" and self.attempts == 1:
                raise RuntimeError("not a validation error")
            return self

    class Reorders(TelemetryEvent):
        """A model validator that rewrites both fields, the first one moved last."""

        event_name: ClassVar[str] = "reorders"
        schema_version: ClassVar[int] = 1

        tier: ChatTier = Field(description="Tier.")
        kind: TurnKind = Field(description="Kind.")

        @model_validator(mode="after")
        def leak(self) -> Reorders:
            values = self.__dict__
            del values["tier"]
            values["tier"] = SECRET
            values["kind"] = SECRET
            return self

    class Blames(TelemetryEvent):
        """A wrap validator that adds a model-level error to the field errors."""

        event_name: ClassVar[str] = "blames"
        schema_version: ClassVar[int] = 1

        tier: ChatTier = Field(description="Tier.")
        kind: TurnKind | None = Field(None, description="Kind.")

        @model_validator(mode="wrap")
        @classmethod
        def blame_the_call(cls, data: Any, handler: Any) -> Blames:
            try:
                return handler(data)  # type: ignore[no-any-return]
            except ValidationError as exc:
                model_level = {"type": "value_error", "loc": (), "input": data}
                model_level["ctx"] = {"error": ValueError("the call as a whole")}
                errors: list[Any] = [*exc.errors(), model_level]
                raise ValidationError.from_exception_data(exc.title, errors) from None

    class Aliased(TelemetryEvent):
        """A required field read under another name (an alias)."""

        event_name: ClassVar[str] = "aliased"
        schema_version: ClassVar[int] = 1

        attempts: int = Field(
            validation_alias="tries", ge=0, le=2, strict=True, description="Attempts."
        )


class Extended(PipelineRun):
    """Inherits ``pipeline_run``'s name (the rules never ran on it), its own version."""

    schema_version: ClassVar[int] = 2

    extra: int | None = count(0, 9, "Extra.")


class Impostor:
    """No event model, whatever its attributes say."""

    event_name = "pipeline_run"
    schema_version = 0


@pytest.fixture(autouse=True)
def _catalogued() -> Iterator[None]:
    """This file's models are the catalogue's (the emitter writes no other class)."""
    with admitted(Painted, Checked, Guarded, Reorders, Blames, Aliased):
        yield


# --- catalogue events, plans built in the test ---------------------------------------


def test_a_fresh_plan_by_name_writes_the_valid_line(lenient: io.StringIO) -> None:
    record = emit("chat_turn", tier="public", kind="text")
    (line,) = lines(lenient)
    assert line == record
    assert line["event"] == "chat_turn"
    assert fields_of(line) == {"tier": "public", "kind": "text"}


@pytest.mark.parametrize("name", list(EVENTS))
def test_every_catalogue_event_gets_a_hot_path_when_its_plan_is_built(name: str) -> None:
    plan = _validate.plan_by_name(name)
    assert plan is not None
    assert plan.fast is not None
    assert plan.fast is _validate.plan_for(EVENTS[name]).fast


def test_a_missing_required_enum_field_still_lets_the_rest_land(lenient: io.StringIO) -> None:
    emit("chat_turn", kind="text", duration_ms=5)
    (line,) = lines(lenient)
    assert fields_of(line) == {"kind": "text", "duration_ms": 5, "invalid_fields": ["tier"]}


# --- a plain (non-str) Enum model: the first attempt's line --------------------------


@pytest.mark.parametrize("mode", ["lenient", "strict"])
@pytest.mark.parametrize("colour", [Colour.RED, "red"])
def test_a_plain_enum_model_writes_the_members_value_as_a_str(
    mode: str, colour: object, request: pytest.FixtureRequest
) -> None:
    buffer: io.StringIO = request.getfixturevalue(mode)
    record = emit(Painted, colour=colour, size=None)
    (line,) = lines(buffer)
    assert record is not None
    assert list(record) == [*ENVELOPE, "colour"]
    assert record == {
        "event": "painted",
        "schema_version": 1,
        "severity": "INFO",
        "time": line["time"],
        "colour": "red",
    }
    assert type(record["colour"]) is str
    assert line == record
    assert counters().internal_errors == 0


def test_a_plain_enum_model_drops_a_value_pydantic_raises_on(lenient: io.StringIO) -> None:
    # Two fields, so three rounds at most: the value pydantic raises on is found field by
    # field, then the line is asked for once more without it.
    emit(Painted, colour=Hostile(), size=3)
    (line,) = lines(lenient)
    assert fields_of(line) == {"size": 3, "invalid_fields": ["colour"]}


# --- placeholders for missing required int and bool fields ---------------------------


def test_a_missing_required_bool_is_stood_in_for_by_false(lenient: io.StringIO) -> None:
    emit(Checked, attempt=2)
    (line,) = lines(lenient)
    assert fields_of(line) == {"attempt": 2, "invalid_fields": ["passed"]}


def test_a_missing_required_int_is_stood_in_for_by_its_lower_bound(
    lenient: io.StringIO,
) -> None:
    emit(Checked, passed=True)
    (line,) = lines(lenient)
    assert fields_of(line) == {"passed": True, "invalid_fields": ["attempt"]}


# --- failures of the whole model, which name no field --------------------------------


def test_lenient_a_model_level_failure_drops_every_field_given(lenient: io.StringIO) -> None:
    emit(Guarded, tier="admin", attempts=2)
    (line,) = lines(lenient)
    assert fields_of(line) == {"invalid_fields": ["tier", "attempts"]}
    assert counters().internal_errors == 0


def test_lenient_a_model_level_failure_names_a_missing_required_field_too(
    lenient: io.StringIO,
) -> None:
    # Guarded's placeholder for tier is its first member (public), which it accepts;
    # RuntimeError on admin + 1: no single field is to blame, so nothing is kept.
    emit(Guarded, tier="admin", attempts=1)
    (line,) = lines(lenient)
    assert fields_of(line) == {"invalid_fields": ["tier", "attempts"]}
    assert counters().internal_errors == 0


def test_strict_a_model_level_failure_is_one_problem_without_a_field(
    strict: io.StringIO,
) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit(Guarded, tier="admin", attempts=2)
    assert caught.value.event == "guarded"
    assert [(p.field, p.rule, p.count) for p in caught.value.problems] == [(None, "value_error", 1)]
    assert str(caught.value) == "guarded: value_error"
    assert strict.getvalue() == ""


def test_strict_an_exception_no_single_field_explains_is_unusable_value(
    strict: io.StringIO,
) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit(Guarded, tier="admin", attempts=1)
    assert [(p.field, p.rule, p.count) for p in caught.value.problems] == [
        (None, "unusable_value", 1)
    ]
    assert str(caught.value) == "guarded: unusable_value"
    assert strict.getvalue() == ""


def test_lenient_a_model_level_error_beside_field_errors_drops_every_field(
    lenient: io.StringIO,
) -> None:
    emit(Blames, tier=SECRET, kind="text")
    (line,) = lines(lenient)
    assert fields_of(line) == {"invalid_fields": ["tier", "kind"]}
    assert SECRET not in lenient.getvalue()


# --- values pydantic raises on, found field by field ---------------------------------


def test_strict_names_the_unusable_field_past_fields_not_given(strict: io.StringIO) -> None:
    # refusal (between kind and error) is not given.
    with pytest.raises(TelemetryValidationError) as caught:
        emit("chat_turn", tier="public", kind="text", error=Hostile())
    assert [(p.field, p.rule) for p in caught.value.problems] == [("error", "unusable_value")]
    assert str(caught.value) == "chat_turn: error: unusable_value"


def test_lenient_drops_the_unusable_field_past_fields_not_given(lenient: io.StringIO) -> None:
    emit("chat_turn", tier="public", kind="text", error=Hostile(), duration_ms=5)
    (line,) = lines(lenient)
    assert fields_of(line) == {
        "tier": "public",
        "kind": "text",
        "duration_ms": 5,
        "invalid_fields": ["error"],
    }


# --- keywords beside an instance -----------------------------------------------------


def test_strict_keywords_beside_an_instance_are_one_problem(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit(ChatTurn(tier="public", kind="text"), refusal=None)
    assert [(p.field, p.rule, p.count) for p in caught.value.problems] == [
        (None, "fields_with_instance", 1)
    ]
    assert str(caught.value) == "chat_turn: fields_with_instance"
    assert strict.getvalue() == ""


def test_lenient_counts_keywords_beside_an_invalid_instance(lenient: io.StringIO) -> None:
    instance = ChatTurn.model_construct(tier=ChatTier.PUBLIC, kind=cast(TurnKind, SECRET))
    emit(instance, refusal=None, error=None)
    (line,) = lines(lenient)
    assert fields_of(line) == {"tier": "public", "invalid_fields": ["kind"], "unknown_fields": 1}
    assert SECRET not in lenient.getvalue()


# --- keys ----------------------------------------------------------------------------


def test_strict_a_str_subclass_key_spelling_an_envelope_key_is_an_unknown_field(
    strict: io.StringIO,
) -> None:
    # Only an exact str is named (``reserved_key``): a subclass's __eq__ is never asked.
    with pytest.raises(TelemetryValidationError) as caught:
        emit("chat_turn", tier="public", kind="text", **{Key("time"): "x"})
    assert [(p.field, p.rule, p.count) for p in caught.value.problems] == [
        (None, "unknown_field", 1)
    ]
    assert str(caught.value) == "chat_turn: unknown_field"


def test_a_key_that_is_no_str_in_an_instance_is_counted(lenient: io.StringIO) -> None:
    instance = ChatTurn(tier="public", kind="text")
    object.__getattribute__(instance, "__dict__")[1] = SECRET
    emit(instance)
    (line,) = lines(lenient)
    assert fields_of(line) == {"tier": "public", "kind": "text", "unknown_fields": 1}
    assert counters().internal_errors == 0


@pytest.mark.parametrize("mode", ["lenient", "strict"])
def test_a_key_the_models_lookup_misses_leaves_its_field_missing(
    mode: str, request: pytest.FixtureRequest
) -> None:
    # The model's verdict on the call as given stands: it did not find tier.
    buffer: io.StringIO = request.getfixturevalue(mode)
    call = {EqFalse("tier"): "public", "kind": "text"}
    if mode == "strict":
        with pytest.raises(TelemetryValidationError) as caught:
            emit("chat_turn", **call)
        assert str(caught.value) == "chat_turn: tier: missing; tier: extra_forbidden"
        assert buffer.getvalue() == ""
        return
    emit("chat_turn", **call)
    (line,) = lines(buffer)
    assert fields_of(line) == {"kind": "text", "invalid_fields": ["tier"]}


def test_strict_a_key_that_makes_the_model_raise_is_unusable(strict: io.StringIO) -> None:
    # The model raised on the call as given; strict refuses it rather than guess.
    with pytest.raises(TelemetryValidationError) as caught:
        emit("chat_turn", **{EqRaises("tier"): "public", "kind": "text"})
    assert [(p.field, p.rule) for p in caught.value.problems] == [(None, "unusable_value")]
    assert strict.getvalue() == ""


# --- which classes are event models --------------------------------------------------


def test_classes_that_did_not_define_an_event_are_bad_event_types(lenient: io.StringIO) -> None:
    emit(Extended, lane="public", status="ok", extra=1)
    emit(Extended(lane="public", status="ok", extra=1))
    emit(Impostor, lane="public", status="ok")  # type: ignore[arg-type]
    emit(Impostor())  # type: ignore[arg-type]
    assert [(line["event"], fields_of(line)) for line in lines(lenient)] == [
        ("telemetry_rejected", {"reason": "bad_event_type"})
    ] * 4


# --- the order of strict mode's problems ---------------------------------------------


def test_strict_problems_without_a_field_come_before_the_first_field(
    strict: io.StringIO,
) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit("chat_turn", kind="text", **{SECRET: 1})
    assert [(p.field, p.rule) for p in caught.value.problems] == [
        (None, "unknown_field"),
        ("tier", "missing"),
    ]
    assert str(caught.value) == "chat_turn: unknown_field; tier: missing"


def test_strict_a_problem_naming_no_field_of_the_model_keeps_its_place(
    strict: io.StringIO,
) -> None:
    # pydantic names the missing field by its alias, which is no field name: it stays
    # after the event's own problems, where it was found.
    with pytest.raises(TelemetryValidationError) as caught:
        emit(Aliased, **{SECRET: 1})
    assert [(p.field, p.rule) for p in caught.value.problems] == [
        (None, "unknown_field"),
        ("tries", "missing"),
    ]


def test_strict_outside_domain_problems_are_in_model_order(strict: io.StringIO) -> None:
    # The model returns kind before tier; the error still names them in model order.
    with pytest.raises(TelemetryValidationError) as caught:
        emit(Reorders, tier="public", kind="text")
    assert caught.value.event == "reorders"
    assert [(p.field, p.rule) for p in caught.value.problems] == [
        ("tier", "outside_domain"),
        ("kind", "outside_domain"),
    ]
    assert str(caught.value) == "reorders: tier: outside_domain; kind: outside_domain"
    assert SECRET not in str(caught.value)
    assert strict.getvalue() == ""


# --- strict mode's hints for a rejected event ---------------------------------------


def test_strict_names_the_known_events_for_an_unknown_one(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit("no_such_event")
    assert caught.value.event is None
    assert str(caught.value) == (
        "telemetry event: unknown_event (known events: pipeline_run, chat_turn, "
        "pipeline_render, provider_status, painted, checked, guarded, reorders, blames, "
        "aliased; an event model must be the configured catalogue's own "
        "(configure(catalogue=...)))"
    )
    assert list(EVENTS) == ["pipeline_run", "chat_turn", "pipeline_render", "provider_status"]


def test_strict_points_a_retired_version_to_the_current_model(strict: io.StringIO) -> None:
    admit(copy_model(PipelineRun, version=2), retired=(PipelineRun,))
    with pytest.raises(TelemetryValidationError) as caught:
        emit(PipelineRun, lane="public", status="ok")
    assert str(caught.value) == (
        "telemetry event: retired_version "
        "(a retired schema_version; emit the event's current model (EVENTS))"
    )


# --- the clock -----------------------------------------------------------------------


@pytest.mark.parametrize("clock", [lambda: 1.5, lambda: "1", lambda: True])
def test_a_clock_that_returns_no_int_is_a_type_error(clock: Any) -> None:
    with pytest.raises(TypeError) as caught:
        stamp(clock)
    assert str(caught.value) == "the configured clock must return integer nanoseconds"
