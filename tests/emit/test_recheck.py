"""Defence in depth: a model that slipped a pass-through validator past the definition
rules (built here with the rules switched off) still never writes a value outside its
field's closed set or bounds; such a value is dropped and named like any invalid one."""

from __future__ import annotations

import io
from collections.abc import Iterator
from enum import StrEnum
from typing import Annotated, Any, ClassVar

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, Field, PlainValidator, model_validator

from agent_telemetry.emit import TelemetryValidationError, emit
from agent_telemetry.emit._processors import render_line
from agent_telemetry.emit._validate import plan_for
from agent_telemetry.schema import ChatTier, TelemetryEvent, TurnKind, count, event_spec
from tests.emit.conftest import admitted, emitting, lines
from tests.schema.copies import rules_off

SECRET = "someone@example.com"


class Forgiving(StrEnum):
    """An enum whose _missing_ makes a member out of any input (ENUM_PLAIN refuses it)."""

    RED = "red"

    @classmethod
    def _missing_(cls, value: object) -> Any:
        member = str.__new__(cls, str(value))
        member._name_ = member._value_ = str(value)
        return member


with rules_off():

    class Leaky(TelemetryEvent):
        """Every way past the rules at once: what the emitter must still stop."""

        event_name: ClassVar[str] = "leaky_event"
        schema_version: ClassVar[int] = 1

        tier: Annotated[ChatTier, PlainValidator(lambda v: v)] = Field(description="Tier.")
        kind: TurnKind = Field(description="Kind.")
        n: Annotated[int, AfterValidator(lambda v: v * 10**9)] | None = count(0, 60, "N.")
        ok: Annotated[bool, PlainValidator(lambda v: v)] | None = Field(None, description="Ok.")
        colour: Forgiving | None = Field(None, description="Colour.")

    class SetsAField(TelemetryEvent):
        """A model validator that writes an identifier into a closed-set field."""

        event_name: ClassVar[str] = "sets_a_field"
        schema_version: ClassVar[int] = 1

        tier: ChatTier = Field(description="Tier.")

        @model_validator(mode="after")
        def leak(self) -> SetsAField:
            object.__setattr__(self, "tier", SECRET)
            return self


FIELDS = ("tier", "kind", "n", "ok", "colour")


@pytest.fixture(autouse=True)
def _catalogued() -> Iterator[None]:
    """This file's models are the catalogue's (the emitter writes no other class)."""
    with admitted(Leaky, SetsAField, Huge, *HALF_BOUNDED, TrueForAnInt):
        yield


def assert_closed(record: dict[str, Any], model: type[TelemetryEvent]) -> None:
    """Every field on the line is inside its set or bounds, as its exact type."""
    for spec in event_spec(model).fields:
        if spec.name not in record:
            continue
        value = record[spec.name]
        assert spec.allows(value), spec.name
        if spec.kind == "enum":
            assert type(value) is str, spec.name


def test_a_model_with_validators_gets_no_hot_path() -> None:
    assert plan_for(Leaky).fast is None
    assert plan_for(SetsAField).fast is None


def test_values_the_validators_let_through_are_dropped_and_named(lenient: io.StringIO) -> None:
    emit(Leaky, tier=SECRET, kind="text", n=5, ok="yes " + SECRET, colour=SECRET)
    (line,) = lines(lenient)
    assert SECRET not in lenient.getvalue()
    assert line["kind"] == "text"
    assert line["invalid_fields"] == ["tier", "n", "ok", "colour"]
    assert_closed(line, Leaky)


def test_a_missing_required_field_stays_named_beside_a_value_the_recheck_drops(
    lenient: io.StringIO,
) -> None:
    # kind (required) is missing: the model's own failure names it. Then the re-check
    # drops n and ok, which the model let through: the line must name all three.
    emit(Leaky, tier="admin", n=5, ok="yes " + SECRET)
    (line,) = lines(lenient)
    assert line["invalid_fields"] == ["kind", "n", "ok"]
    assert line["tier"] == "admin"
    assert SECRET not in lenient.getvalue()


def test_valid_values_still_pass_the_careful_path(lenient: io.StringIO) -> None:
    record = emit(Leaky, tier="admin", kind="action", colour="red", ok=True)
    assert record is not None
    assert {k: record[k] for k in ("tier", "kind", "colour", "ok")} == {
        "tier": "admin",
        "kind": "action",
        "colour": "red",
        "ok": True,
    }
    assert "invalid_fields" not in record
    assert_closed(record, Leaky)


def test_a_model_validator_that_sets_a_field_is_caught(lenient: io.StringIO) -> None:
    emit(SetsAField, tier="public")
    (line,) = lines(lenient)
    assert SECRET not in lenient.getvalue()
    assert line["invalid_fields"] == ["tier"]


def test_strict_mode_names_the_field_and_rule_never_the_value(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as caught:
        emit(Leaky, tier=SECRET, kind="text")
    assert [(p.field, p.rule) for p in caught.value.problems] == [("tier", "outside_domain")]
    assert SECRET not in str(caught.value)
    assert strict.getvalue() == ""


ANYTHING = st.one_of(
    st.text(),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.sampled_from(["public", "admin", "text", "red", 0, 60, 61, -1, 2**53, 2**64]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional=dict.fromkeys(FIELDS, ANYTHING)))
def test_no_input_ever_writes_a_value_outside_the_fields_domains(fields: dict[str, Any]) -> None:
    with emitting() as buffer:
        emit(Leaky, **fields)
    (line,) = lines(buffer)
    assert line["event"] == "leaky_event"
    assert_closed(line, Leaky)
    for name in FIELDS:
        given_value = fields.get(name)
        if name not in line and given_value is not None:
            assert name in line["invalid_fields"]


class LyingStr(str):
    """Compares and hashes as "public" whatever it holds; writes as what it holds."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("public")


@pytest.mark.parametrize("model", [Leaky, "chat_turn"])
def test_a_lying_str_is_written_as_the_members_own_string(lenient: io.StringIO, model: Any) -> None:
    record = emit(model, tier=LyingStr(SECRET), kind="text")
    assert record is not None
    assert SECRET not in lenient.getvalue()
    assert record.get("tier") in (None, "public")
    assert type(record.get("tier", "")) is str


def test_an_enum_patched_after_definition_still_writes_only_its_members(
    lenient: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The catalogue's own model, its enum given a _missing_ at run time: the hot path's
    # literal does not ask the enum, and the careful path's re-check refuses the result.
    monkeypatch.setattr(ChatTier, "_missing_", Forgiving.__dict__["_missing_"])
    emit("chat_turn", tier=SECRET, kind="text")
    (line,) = lines(lenient)
    assert SECRET not in lenient.getvalue()
    assert line["invalid_fields"] == ["tier"]


def test_catalogue_enum_values_are_written_as_exact_strings(lenient: io.StringIO) -> None:
    record = emit("chat_turn", tier=ChatTier.ADMIN, kind=TurnKind.TEXT)
    assert record is not None
    assert (type(record["tier"]), record["tier"]) == (str, "admin")


def test_a_value_orjson_cannot_write_costs_only_its_field() -> None:
    record = {
        "event": "pipeline_run",
        "schema_version": 1,
        "severity": "INFO",
        "time": "2026-01-01T00:00:00.000000Z",
        "lane": "public",
        "queue_wait_ms": 2**70,  # orjson refuses ints past 64 bits
        "invalid_fields": ["reason"],
        "unknown_fields": 2,
    }
    (line, written), _ = render_line(None, "info", record)
    assert orjson.loads(line) == {
        "event": "pipeline_run",
        "schema_version": 1,
        "severity": "INFO",
        "time": "2026-01-01T00:00:00.000000Z",
        "lane": "public",
        "invalid_fields": ["reason", "queue_wait_ms"],
        "unknown_fields": 2,
    }
    assert list(written)[-2:] == ["invalid_fields", "unknown_fields"]


with rules_off():

    class Huge(TelemetryEvent):
        """A bound past 64 bits (INT_SAFE_RANGE refuses it at definition)."""

        event_name: ClassVar[str] = "huge_event"
        schema_version: ClassVar[int] = 1

        kind: TurnKind = Field(description="Kind.")
        n: int | None = count(0, 10**20, "N.")


def test_an_int_orjson_cannot_write_drops_its_field_not_the_line(lenient: io.StringIO) -> None:
    # The issue: the whole line became telemetry_rejected/internal_error.
    emit(Huge, kind="text", n=10**20)
    (line,) = lines(lenient)
    assert line == {**line, "event": "huge_event", "kind": "text", "invalid_fields": ["n"]}
    assert "n" not in line


with rules_off():
    # Ints the spec reads with a bound missing (INT_BOUNDED refuses them at definition):
    # no value is inside such a field's domain. One model per way, each its only int.

    class NoBound(TelemetryEvent):
        """An int with neither bound."""

        event_name: ClassVar[str] = "no_bound"
        schema_version: ClassVar[int] = 1

        kind: TurnKind = Field(description="Kind.")
        n: int | None = Field(None, strict=True, description="No bound.")

    class OnlyLe(TelemetryEvent):
        """An int with only an upper bound."""

        event_name: ClassVar[str] = "only_le"
        schema_version: ClassVar[int] = 1

        kind: TurnKind = Field(description="Kind.")
        n: int | None = Field(None, le=5, strict=True, description="At most 5.")

    class OnlyGe(TelemetryEvent):
        """An int with only a lower bound."""

        event_name: ClassVar[str] = "only_ge"
        schema_version: ClassVar[int] = 1

        kind: TurnKind = Field(description="Kind.")
        n: int | None = Field(None, ge=0, strict=True, description="At least 0.")

    class TrueForAnInt(TelemetryEvent):
        """A validator that turns an unbounded int into True."""

        event_name: ClassVar[str] = "true_for_an_int"
        schema_version: ClassVar[int] = 1

        n: Annotated[int, AfterValidator(lambda v: True)] | None = Field(None, description="N.")


HALF_BOUNDED = (NoBound, OnlyLe, OnlyGe)


@pytest.mark.parametrize("model", HALF_BOUNDED, ids=[m.event_name for m in HALF_BOUNDED])
def test_an_int_without_both_bounds_is_never_written_on_any_path(
    lenient: io.StringIO, model: type[TelemetryEvent]
) -> None:
    name = model.event_name
    emit(name, kind="text", n=1)  # the first line by name builds the plan
    emit(name, kind="text", n=1)  # the next takes the fused path
    emit(model, kind="text", n=1)  # by class, through the chain
    emit(name, kind="text", n=1, other=1)  # an unknown key: the model decides
    written = lines(lenient)
    assert [line["event"] for line in written] == [name] * 4
    for line in written:
        assert line["kind"] == "text"
        assert line["invalid_fields"] == ["n"]
        assert "n" not in line


def test_an_unbounded_int_a_validator_made_true_is_dropped(lenient: io.StringIO) -> None:
    emit(TrueForAnInt, n=1)
    (line,) = lines(lenient)
    assert line["invalid_fields"] == ["n"]
    assert "n" not in line


def test_an_int_orjson_cannot_write_by_name_drops_its_field_on_the_fused_path(
    lenient: io.StringIO,
) -> None:
    # By name, once the plan is built, the line takes the fused path: its own fallback.
    for _ in range(2):
        emit("huge_event", kind="text", n=10**20)
    for line in lines(lenient):  # every line whole, newline included
        assert line == {**line, "event": "huge_event", "kind": "text", "invalid_fields": ["n"]}
        assert "n" not in line
