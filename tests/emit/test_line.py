"""The line: envelope first, fields in model order, None omitted, one JSON object."""

from __future__ import annotations

import io
import re

import pytest

from agent_telemetry.emit import counters, emit
from agent_telemetry.schema import (
    EVENTS,
    Lane,
    PipelineRender,
    PipelineRun,
    RunStatus,
    event_spec,
    runs_today_bucket,
    tokens_today_bucket,
)
from tests.emit.conftest import lines

RFC3339_MICRO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def test_line_has_envelope_then_fields_in_model_order(lenient: io.StringIO) -> None:
    # Keywords in an order unlike the model's: the line follows the model.
    record = emit(
        "pipeline_run",
        model_calls=3,
        status="ok",
        user_tokens_today=tokens_today_bucket(40, 100),
        lane=Lane.PREMIUM,
        user_runs_today=runs_today_bucket(7),
    )
    (line,) = lines(lenient)
    assert list(line) == [
        "event",
        "schema_version",
        "severity",
        "time",
        "lane",
        "status",
        "user_runs_today",
        "user_tokens_today",
        "model_calls",
    ]
    assert line == record
    assert line["event"] == "pipeline_run"
    assert line["schema_version"] == 1
    assert line["severity"] == "INFO"
    assert line["user_runs_today"] == "6_10"
    assert line["user_tokens_today"] == "25_50"
    assert RFC3339_MICRO_Z.fullmatch(line["time"])


def test_none_fields_are_omitted_and_nothing_extra_is_written(lenient: io.StringIO) -> None:
    emit("chat_turn", tier="public", kind="text", refusal=None, duration_ms=0)
    (line,) = lines(lenient)
    assert "refusal" not in line
    assert "invalid_fields" not in line
    assert "unknown_fields" not in line
    assert line["duration_ms"] == 0


def test_one_call_writes_one_whole_line(lenient: io.StringIO) -> None:
    emit("pipeline_render", theme="dark", render_lane="toggle", passed=True, attempt=1)
    text = lenient.getvalue()
    assert text.count("\n") == 1
    assert text.endswith("\n")


def test_a_model_class_works_like_its_name(lenient: io.StringIO) -> None:
    by_name = emit("pipeline_render", theme="light", render_lane="run")
    by_class = emit(PipelineRender, theme="light", render_lane="run")
    assert lines(lenient) == [by_name, by_class]
    expected = {
        "event": "pipeline_render",
        "schema_version": 1,
        "severity": "INFO",
        "theme": "light",
        "render_lane": "run",
    }
    for record in (by_name, by_class):
        assert record is not None
        assert {k: v for k, v in record.items() if k != "time"} == expected


def test_an_instance_is_written_as_is(lenient: io.StringIO) -> None:
    emit(PipelineRun(lane=Lane.ADMIN, status=RunStatus.NOT_READY, reason="no_dataset"))
    (line,) = lines(lenient)
    assert (line["lane"], line["status"], line["reason"]) == ("admin", "not_ready", "no_dataset")


def test_an_unchecked_instance_is_validated_again(lenient: io.StringIO) -> None:
    # model_construct skips validation; the emitter does not trust it.
    forged = PipelineRun.model_construct(lane="public", status="ok", queue_wait_ms=-5)
    emit(forged)
    (line,) = lines(lenient)
    assert line["invalid_fields"] == ["queue_wait_ms"]
    assert "queue_wait_ms" not in line


def test_keywords_beside_an_instance_are_counted_not_used(lenient: io.StringIO) -> None:
    emit(PipelineRun(lane="admin", status="ok"), lane="public")
    (line,) = lines(lenient)
    assert line["lane"] == "admin"
    assert line["unknown_fields"] == 1


@pytest.mark.parametrize("queue_wait_ms", [5, -5], ids=["valid", "invalid"])
def test_an_instance_carrying_an_unknown_key_beside_one_keyword_still_flags_both(
    lenient: io.StringIO, queue_wait_ms: int
) -> None:
    """One unknown key inside a forged instance and one keyword beside it: two unknowns,
    never cancelling out, whether the rest of the instance is valid or not."""
    forged = PipelineRun.model_construct(lane="admin", status="ok", queue_wait_ms=queue_wait_ms)
    forged.__dict__["smuggled"] = "x"
    emit(forged, lane="public")
    (line,) = lines(lenient)
    assert line["lane"] == "admin"
    assert "smuggled" not in line
    assert line["unknown_fields"] == 1


def test_every_catalogue_event_writes_its_required_fields(lenient: io.StringIO) -> None:
    for name, model in EVENTS.items():
        fields = {f.name: f.members[0] for f in event_spec(model).fields if f.required}
        record = emit(name, **fields)
        assert record is not None
        assert {k: v for k, v in record.items() if k != "time"} == {
            "event": name,
            "schema_version": event_spec(model).schema_version,
            "severity": "INFO",
            **fields,
        }
    written = lines(lenient)
    assert [line["event"] for line in written] == list(EVENTS)
    assert all("invalid_fields" not in line and "unknown_fields" not in line for line in written)


def test_counters_count_lines_per_event(lenient: io.StringIO) -> None:
    emit("chat_turn", tier="admin", kind="action")
    emit("chat_turn", tier="admin", kind="action", duration_ms=-1)
    emit("chat_turn", tier="admin", kind="action", surprise=1)
    emit("no_such_event")
    snapshot = counters()
    assert snapshot.emitted == {"chat_turn": 3, "telemetry_rejected": 1}
    assert snapshot.invalid == {"chat_turn": 1}
    assert snapshot.unknown == {"chat_turn": 1}
    assert snapshot.rejected == {"unknown_event": 1}
    assert snapshot.write_failed == {}
    assert snapshot.partial_write == {}
    assert snapshot.flush_failed == {}
    assert snapshot.internal_errors == 0
    assert snapshot.reentrant_dropped == 0
    assert snapshot.as_dict() == {
        "emitted": {"chat_turn": 3, "telemetry_rejected": 1},
        "invalid": {"chat_turn": 1},
        "unknown": {"chat_turn": 1},
        "rejected": {"unknown_event": 1},
        "write_failed": {},
        "partial_write": {},
        "flush_failed": {},
        "write_timeouts": {},
        "internal_errors": 0,
        "reentrant_dropped": 0,
    }
