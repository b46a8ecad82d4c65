"""``TelemetryLogger.emit`` fuses the chain for a catalogue name with valid fields: the
line it writes is, byte for byte, the one the processor chain writes, on every input,
and the hot path is asked once per line, never twice."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.emit import configure, counters, emit
from agent_telemetry.emit._config import CURRENT
from agent_telemetry.emit._validate import STATE, plan_by_name
from agent_telemetry.schema import PipelineRun
from tests.emit.conftest import emitting

NOON = 1_780_000_000_123_456_789  # a fixed clock: both lines get the same time


def _values() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-5, max_value=4_000_000),
        st.sampled_from(["public", "failed", "deadline", "timeout", "2_5", "50_75", "ok"]),
        st.text(max_size=4),
        st.floats(allow_nan=False, allow_infinity=False),
    )


FIELD_NAMES = [*PipelineRun.model_fields, "not_a_field", "event", "time"]
CALLS = st.dictionaries(st.sampled_from(FIELD_NAMES), _values(), max_size=12)


@pytest.fixture
def fixed_clock() -> Iterator[io.StringIO]:
    with emitting() as buffer:
        configure(clock=lambda: NOON)
        yield buffer


@settings(max_examples=300, deadline=None)
@given(fields=CALLS, event=st.sampled_from(["pipeline_run", "chat_turn", "nope", PipelineRun]))
def test_the_fused_line_is_the_chains_line(fields: dict[str, Any], event: Any) -> None:
    with emitting() as buffer:
        configure(clock=lambda: NOON)
        logger = CURRENT.logger
        fused = emit(event, **fields)
        written = buffer.getvalue()
        (chain_line, chain_record), _ = logger._process_event(
            "info", event, {"fields": dict(fields)}
        )
    assert written == chain_line.decode()
    assert fused == chain_record
    assert list(fused or ()) == list(chain_record)


def test_a_line_the_hot_path_refuses_asks_it_once(
    fixed_clock: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_by_name("pipeline_run")
    assert plan is not None
    assert plan.fast is not None
    fast, asked = plan.fast, []

    def counting(given: dict[str, Any]) -> dict[str, Any]:
        asked.append(1)
        return fast(given)

    monkeypatch.setitem(
        STATE.active.by_name, "pipeline_run", dataclasses.replace(plan, fast=counting)
    )
    emit("pipeline_run", lane="public", status="ok", queue_wait_ms=-1)
    assert len(asked) == 1
    emit("pipeline_run", lane="public", status="ok", queue_wait_ms=1234)
    assert len(asked) == 2
    assert counters().invalid == {"pipeline_run": 1}
    assert counters().emitted == {"pipeline_run": 2}


def test_an_unwritable_value_from_the_hot_path_costs_only_its_field(
    fixed_clock: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_by_name("pipeline_run")
    assert plan is not None
    assert plan.fast is not None
    fast = plan.fast

    def lying(given: dict[str, Any]) -> dict[str, Any]:
        record = fast(given)
        record["attempts"] = object()  # should the hot path ever let one through
        return record

    monkeypatch.setitem(STATE.active.by_name, "pipeline_run", dataclasses.replace(plan, fast=lying))
    record = emit("pipeline_run", lane="public", status="ok", attempts=1)
    assert record is not None
    assert "attempts" not in record
    assert record["invalid_fields"] == ["attempts"]
    assert '"invalid_fields":["attempts"]' in fixed_clock.getvalue()


def test_a_clock_that_fails_on_the_fused_path_is_an_internal_error(
    fixed_clock: io.StringIO,
) -> None:
    configure(clock=lambda: 1.5)  # type: ignore[arg-type, return-value]
    record = emit("pipeline_run", lane="public", status="ok")
    assert record is not None
    assert (record["event"], record["reason"]) == ("telemetry_rejected", "internal_error")
    assert counters().internal_errors == 1
