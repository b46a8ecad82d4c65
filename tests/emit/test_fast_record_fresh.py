"""The hot path's validator, built afresh rather than taken from the emitter's cached plans.

``plan_for`` caches each model's plan, so a test that only reads ``plan_for(model).fast``
checks whichever validator was built first; mutation testing (which forks from a process
whose plans are already built) showed that every change to ``record_validator`` went
unnoticed that way. These tests build the validator themselves.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from agent_telemetry.emit._fast_record import RecordValidator, record_validator
from agent_telemetry.schema import EVENTS, TelemetryEvent, event_spec
from tests.emit.adversarial import calls
from tests.emit.test_fast_record import by_model, valid_calls


def fresh(model: type[TelemetryEvent]) -> RecordValidator:
    spec = event_spec(model)
    envelope = {
        "event": spec.name,
        "schema_version": spec.schema_version,
        "severity": "INFO",
        "time": "",
    }
    validator = record_validator(model, envelope)
    assert validator is not None, f"{spec.name}: no fast path"
    return validator


def by_fresh_path(model: type[TelemetryEvent], fields: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return fresh(model)(fields)
    except AssertionError:
        raise
    except Exception:
        return None


@pytest.mark.parametrize("model", list(EVENTS.values()), ids=list(EVENTS))
def test_every_catalogue_event_gets_a_freshly_built_fast_path(
    model: type[TelemetryEvent],
) -> None:
    fresh(model)


@settings(max_examples=150, deadline=None)
@given(valid_calls())
def test_valid_calls_give_the_models_record_exactly(call: tuple[str, dict[str, Any]]) -> None:
    name, fields = call
    model = EVENTS[name]
    got = by_fresh_path(model, fields)
    assert got is not None
    expected = by_model(model, fields)
    assert expected is not None
    assert list(got.items()) == list(expected.items())
    # The hot path writes an enum value as the member's exact str (never a subclass).
    plain = [str if isinstance(v, enum.Enum) else type(v) for v in expected.values()]
    assert [type(v) for v in got.values()] == plain


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_adversarial_calls_are_never_accepted_unless_the_model_accepts_them(
    call: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    name, fields, unknown = call
    model = EVENTS[name]
    got = by_fresh_path(model, {**fields, **unknown})
    if got is not None:
        assert list(got.items()) == list((by_model(model, {**fields, **unknown}) or {}).items())


@pytest.mark.parametrize("key", ["event", "schema_version", "severity", "time"])
def test_an_envelope_key_given_as_a_field_is_never_accepted(key: str) -> None:
    # The envelope's own values always win: the hot path leaves such a call to the model.
    validator = fresh(EVENTS["chat_turn"])
    assert validator({"tier": "public", "kind": "text"})["severity"] == "INFO"
    with pytest.raises(Exception):  # noqa: B017, PT011 - any exception: the model decides
        validator({"tier": "public", "kind": "text", key: "DEBUG"})
