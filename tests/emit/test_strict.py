"""Strict mode: errors name the event, the field and the rule, never the value."""

from __future__ import annotations

import io
import pickle

import pytest

from agent_telemetry.emit import Problem, TelemetryValidationError, capture, counters, emit
from agent_telemetry.schema import PipelineRun
from tests.emit.conftest import lines

SECRET = "jane.doe@example.com"


def raised(event: object, /, **fields: object) -> TelemetryValidationError:
    with pytest.raises(TelemetryValidationError) as info:
        emit(event, **fields)
    return info.value


def test_error_names_event_field_and_rule_not_value(strict: io.StringIO) -> None:
    error = raised("pipeline_run", lane=SECRET, status="ok", queue_wait_ms=-1)
    assert str(error) == "pipeline_run: lane: enum; queue_wait_ms: greater_than_equal"
    assert error.event == "pipeline_run"
    assert error.problems == (
        Problem("lane", "enum"),
        Problem("queue_wait_ms", "greater_than_equal"),
    )
    assert SECRET not in repr(error)
    assert strict.getvalue() == ""


def test_error_carries_no_pydantic_error_as_cause_or_context(strict: io.StringIO) -> None:
    error = raised("pipeline_run", lane=SECRET, status="ok")
    assert error.__cause__ is None
    assert error.__context__ is None
    assert error.__suppress_context__ is False


def test_error_survives_pickling_without_the_value(strict: io.StringIO) -> None:
    error = raised("chat_turn", tier=SECRET, kind="text")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error) == "chat_turn: tier: enum"
    assert SECRET.encode() not in pickle.dumps(error)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": "ok"}, "lane: missing"),
        ({"lane": "PUBLIC", "status": "ok"}, "lane: enum"),
        ({"lane": " public", "status": "ok"}, "lane: enum"),
        ({"lane": "public", "status": "ok", "attempts": True}, "attempts: int_type"),
        ({"lane": "public", "status": "ok", "attempts": 2.0}, "attempts: int_type"),
        ({"lane": "public", "status": "ok", "attempts": "1"}, "attempts: int_type"),
        ({"lane": "public", "status": "ok", "attempts": 3}, "attempts: less_than_equal"),
        ({"lane": "public", "status": "ok", "model_calls": 10**40}, "model_calls: less_than_equal"),
        ({"lane": "public", "status": None}, "status: enum"),
    ],
)
def test_each_rule_is_named(strict: io.StringIO, fields: dict[str, object], expected: str) -> None:
    assert str(raised("pipeline_run", **fields)) == f"pipeline_run: {expected}"


def test_bool_field_rejects_ints(strict: io.StringIO) -> None:
    error = raised("pipeline_render", theme="dark", render_lane="run", passed=1)
    assert str(error) == "pipeline_render: passed: bool_type"


def test_unknown_key_is_not_named(strict: io.StringIO) -> None:
    error = raised("chat_turn", tier="public", kind="text", **{SECRET: 1})
    assert str(error) == "chat_turn: unknown_field"
    assert SECRET not in repr(error.problems)


def test_a_misspelt_key_gets_no_hint_that_reveals_it(strict: io.StringIO) -> None:
    error = raised("chat_turn", tier="public", kind="text", duration_m=5)
    assert str(error) == "chat_turn: unknown_field"
    assert error.problems == (Problem(None, "unknown_field"),)


def test_repeated_unknown_keys_collapse_into_one_problem_with_a_count(
    strict: io.StringIO,
) -> None:
    error = raised("chat_turn", tier="public", kind="nope", **{SECRET: 1, "a": 2, "b": 3})
    assert str(error) == "chat_turn: unknown_field x3; kind: enum"
    assert error.problems[0] == Problem(None, "unknown_field", count=3)


def test_two_unknown_keys_are_counted_too(strict: io.StringIO) -> None:
    error = raised("chat_turn", tier="public", kind="text", **{SECRET: 1, "a": 2})
    assert str(error) == "chat_turn: unknown_field x2"


@pytest.mark.parametrize(
    "key", ["event", "schema_version", "severity", "time", "invalid_fields", "unknown_fields"]
)
def test_an_envelope_key_passed_as_a_field_is_a_reserved_key(strict: io.StringIO, key: str) -> None:
    error = raised("chat_turn", tier="public", kind="text", **{key: "x"})
    assert str(error) == f"chat_turn: {key}: reserved_key"


def test_reserved_and_unknown_keys_are_reported_apart(strict: io.StringIO) -> None:
    error = raised("chat_turn", tier="public", kind="text", time=1, severity=2, **{SECRET: 3})
    assert str(error) == "chat_turn: severity: reserved_key; time: reserved_key; unknown_field"
    assert SECRET not in str(error)


def test_lenient_mode_drops_and_counts_an_envelope_key_as_unknown(
    lenient: io.StringIO,
) -> None:
    record = emit("chat_turn", tier="public", kind="text", time="1999-01-01T00:00:00Z")
    (line,) = lines(lenient)
    assert line == record
    assert line["time"] != "1999-01-01T00:00:00Z"
    assert {k: v for k, v in line.items() if k != "time"} == {
        "event": "chat_turn",
        "schema_version": 1,
        "severity": "INFO",
        "tier": "public",
        "kind": "text",
        "unknown_fields": 1,
    }


def test_unknown_event_is_not_named(strict: io.StringIO) -> None:
    error = raised(SECRET)
    assert error.event is None
    assert error.problems[0].rule == "unknown_event"
    assert "pipeline_run" in str(error)  # the hint lists the catalogue
    assert SECRET not in str(error)


def test_not_an_event_at_all(strict: io.StringIO) -> None:
    assert raised(42).problems[0].rule == "bad_event_type"


def test_strict_raises_write_nothing_and_count_nothing(strict: io.StringIO) -> None:
    raised("pipeline_run", lane="nope", status="ok")
    assert strict.getvalue() == ""
    assert counters().emitted == {}


def test_a_valid_event_is_written_in_strict_mode(strict: io.StringIO) -> None:
    record = emit(PipelineRun, lane="public", status="ok")
    (line,) = lines(strict)
    assert line == record
    assert {k: v for k, v in line.items() if k != "time"} == {
        "event": "pipeline_run",
        "schema_version": 1,
        "severity": "INFO",
        "lane": "public",
        "status": "ok",
    }


def test_capture_can_turn_strict_on_for_a_block(lenient: io.StringIO) -> None:
    with capture(strict=True), pytest.raises(TelemetryValidationError):
        emit("pipeline_run", lane="nope", status="ok")
    # Lenient again after the block: the bad field is dropped and named, not raised.
    record = emit("pipeline_run", lane="nope", status="ok")
    (line,) = lines(lenient)
    assert line == record
    assert (line["status"], line["invalid_fields"]) == ("ok", ["lane"])
    assert "lane" not in line
