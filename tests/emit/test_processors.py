"""Each processor of the chain alone: plain callables over plain dicts."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from agent_telemetry.emit import (
    RejectReason,
    TelemetryValidationError,
    counters,
    emit,
    reset_counters,
)
from agent_telemetry.emit._config import CURRENT, SHARED
from agent_telemetry.emit._logger import make_logger
from agent_telemetry.emit._processors import (
    render_line,
    resolve_event,
    validated_record,
)
from agent_telemetry.emit._validate import plan_for
from agent_telemetry.schema import ChatTurn
from tests.emit.conftest import emitting, lines


def test_resolve_event_finds_the_plan() -> None:
    event_dict = resolve_event(None, "info", {"event": "chat_turn", "fields": {}, "strict": False})
    assert event_dict["plan"] is plan_for(ChatTurn)


def test_resolve_event_rejects_with_a_closed_reason() -> None:
    event_dict = resolve_event(None, "info", {"event": "x", "fields": {}, "strict": False})
    assert event_dict["reason"] is RejectReason.UNKNOWN_EVENT
    assert event_dict["plan"] is None


def test_resolve_event_raises_in_strict_mode() -> None:
    with pytest.raises(TelemetryValidationError):
        resolve_event(None, "info", {"event": "x", "fields": {}, "strict": True})


def test_validated_record_keeps_valid_values_names_invalid_counts_unknown() -> None:
    event_dict: dict[str, Any] = {
        "plan": plan_for(ChatTurn),
        "fields": {"tier": "public", "kind": "nope", "other": 1, "duration_ms": None},
        "strict": False,
    }
    record = validated_record(None, "info", event_dict)
    assert {k: v for k, v in record.items() if k != "time"} == {
        "event": "chat_turn",
        "schema_version": 1,
        "severity": "INFO",
        "tier": "public",
        "invalid_fields": ["kind"],
        "unknown_fields": 1,
    }


def test_validated_record_orders_the_envelope_first_then_the_model() -> None:
    event_dict = {
        "plan": plan_for(ChatTurn),
        "fields": {"duration_ms": 5, "refusal": None, "tier": "admin", "kind": "x", "y": 2},
        "strict": False,
    }
    record = validated_record(None, "info", event_dict)
    assert list(record) == [
        "event",
        "schema_version",
        "severity",
        "time",
        "tier",
        "duration_ms",
        "invalid_fields",
        "unknown_fields",
    ]


def test_validated_record_raises_in_strict_mode() -> None:
    event_dict = {"plan": plan_for(ChatTurn), "fields": {"tier": "admin"}, "strict": True}
    with pytest.raises(TelemetryValidationError, match="kind: missing"):
        validated_record(None, "info", event_dict)


def test_validated_record_without_a_plan_is_the_rejected_line() -> None:
    event_dict = {"plan": None, "reason": RejectReason.UNKNOWN_EVENT, "strict": False}
    record = validated_record(None, "info", event_dict)
    assert record["event"] == "telemetry_rejected"
    assert record["reason"] == "unknown_event"


def test_render_line_is_one_json_line_and_the_record() -> None:
    record = {"event": "chat_turn", "tier": "admin"}
    (line, same), kwargs = render_line(None, "info", record)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert json.loads(line) == record
    assert same is record
    assert kwargs == {}


def explode(_logger: object, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    if "reason" not in event_dict:  # fails every event, lets the rejected line through
        raise RuntimeError("a bug in the emitter")
    return event_dict


@contextmanager
def broken_chain(*, strict: bool) -> Iterator[io.StringIO]:
    """The live chain with a failing processor in front, as a bug in it would be.

    A line of the event goes out first, as in a service that has been running: the
    emitter then knows the event's plan, so the fused path would be there to take.
    """
    with emitting(strict=strict) as buffer:
        emit("chat_turn", tier="public", kind="text")
        buffer.seek(0)
        buffer.truncate()
        reset_counters()
        logger = make_logger(SHARED, buffer, strict)
        logger._processors = [explode, *logger._processors]
        original, CURRENT.logger = CURRENT.logger, logger
        try:
            yield buffer
        finally:
            CURRENT.logger = original


def test_an_internal_failure_writes_a_rejected_line_and_never_raises() -> None:
    with broken_chain(strict=False) as buffer:
        assert emit("chat_turn", tier="public", kind="text") is not None
        assert counters().internal_errors == 1
    (line,) = lines(buffer)
    assert (line["event"], line["reason"]) == ("telemetry_rejected", "internal_error")


def test_each_internal_failure_is_counted() -> None:
    with broken_chain(strict=False) as buffer:
        for _ in range(3):
            emit("chat_turn", tier="public", kind="text")
        assert counters().internal_errors == 3
    assert [line["reason"] for line in lines(buffer)] == ["internal_error"] * 3


def test_an_internal_failure_in_strict_mode_raises_without_the_cause() -> None:
    with broken_chain(strict=True), pytest.raises(TelemetryValidationError) as info:
        emit("chat_turn", tier="public", kind="text")
    assert info.value.problems[0].rule == "internal_error"
    assert info.value.__context__ is None


def test_the_chain_is_a_structlog_chain() -> None:
    # TelemetryLogger.emit runs the processors itself (it is cheaper); structlog's own
    # _process_event runs the same chain to the same line.
    with emitting() as buffer:
        logger = CURRENT.logger
        fields = {"tier": "public", "kind": "nope", "refusal": None, "x": 1}
        (line, record), kwargs = logger._process_event("info", "chat_turn", {"fields": fields})
        assert kwargs == {}
        assert json.loads(line) == record
        emitted = emit("chat_turn", **fields)
        (written,) = lines(buffer)
    assert emitted == written
    assert {**record, "time": None} == {**written, "time": None}
    assert list(record) == list(written)
