"""Lenient mode (production): never raises, drops what is invalid, leaks nothing."""

from __future__ import annotations

import dataclasses
import io
import logging
import sys
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agent_telemetry.emit import RejectReason, counters, emit
from agent_telemetry.schema import EVENTS, PipelineRun, event_spec
from tests.emit.adversarial import calls, leak_texts, rounded
from tests.emit.conftest import emitting, lines

ENVELOPE = ("event", "schema_version", "severity", "time")


def expected_line(name: str, fields: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The fields the line must carry, and the names invalid_fields must list."""
    kept: dict[str, Any] = {}
    invalid: list[str] = []
    for spec in event_spec(EVENTS[name]).fields:
        if spec.name not in fields:
            if spec.required:
                invalid.append(spec.name)
            continue
        value = fields[spec.name]
        if value is None and not spec.required:
            continue
        # The emitter takes a measurement anywhere in its bounds and rounds it onto the
        # grid; ``allows`` judges a value read back from a line, where off-grid is foreign.
        if dataclasses.replace(spec, precision=None).allows(value):
            kept[spec.name] = rounded(spec, value)
        else:
            invalid.append(spec.name)
    return kept, invalid


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
@example(("pipeline_render", {"slot_wait_ms": 1001, "render_ms": 120_001}, {}))  # off the grid
def test_adversarial_values_are_dropped_named_and_never_leak(
    call: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    name, fields, unknown = call
    with emitting() as buffer:
        record = emit(name, **fields, **unknown)  # must not raise
        output = buffer.getvalue()
    (line,) = lines(buffer)
    kept, invalid = expected_line(name, fields)

    rejected = [fields[n] for n in invalid if n in fields] + list(unknown) + list(unknown.values())
    for value in rejected:
        for text in leak_texts(value):
            assert text not in output
            assert orjson.dumps(text).decode()[1:-1] not in output  # as escaped on the line

    assert record == line
    assert list(line)[:4] == list(ENVELOPE)
    assert line["event"] == name
    field_keys = [
        k for k in line if k not in ENVELOPE and k not in ("invalid_fields", "unknown_fields")
    ]
    assert field_keys == list(kept)  # model order, nothing else
    assert {k: line[k] for k in field_keys} == kept
    assert line.get("invalid_fields", []) == invalid
    assert line.get("unknown_fields", 0) == (1 if unknown else 0)  # a flag, not a count


class Hostile:
    """An object every dunder of which raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    def __bool__(self) -> bool:
        raise RuntimeError("bool")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("class")


class HostileStr(str):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __str__(self) -> str:
        raise RuntimeError("str")


class HostileInt(int):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    def __index__(self) -> int:
        raise RuntimeError("index")

    def __le__(self, other: object) -> bool:
        raise RuntimeError("le")

    def __ge__(self, other: object) -> bool:
        raise RuntimeError("ge")


def recursive_list() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def deep_dict(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


# Factories, so pytest never inspects the hostile objects while collecting.
WEIRD: dict[str, Callable[[], object]] = {
    "hostile": Hostile,
    "hostile_str": lambda: HostileStr("zzz"),
    "hostile_str_member": lambda: HostileStr("public"),
    "hostile_int": lambda: HostileInt(5),
    "recursive_list": recursive_list,
    "deep_dict": lambda: deep_dict(sys.getrecursionlimit() + 100),
    "nan": lambda: float("nan"),
    "int_4000_digits": lambda: 10**4000,
    "int_past_str_limit": lambda: 10**5000,  # str() of it raises ValueError
    "lone_surrogate": lambda: "\ud800public",
    "bytes": lambda: b"\xff\xfe",
    "object": object,
    "function": lambda: print,
    "type": lambda: type,
    "ellipsis": lambda: ...,
}


@pytest.mark.parametrize("make", list(WEIRD.values()), ids=list(WEIRD))
@pytest.mark.parametrize("field", ["lane", "queue_wait_ms"])
def test_hostile_objects_never_raise(
    lenient: io.StringIO, field: str, make: Callable[[], object]
) -> None:
    value = make()
    fields: dict[str, object] = {"lane": "public", "status": "ok", field: value}
    record = emit("pipeline_run", **fields)
    (line,) = lines(lenient)
    assert record == line
    assert line["status"] == "ok"
    # A str subclass spelling a member exactly is that member, an int subclass in range
    # is its int; anything else is dropped.
    if line.get("invalid_fields") != [field]:
        assert (field, line[field]) in (("lane", "public"), ("queue_wait_ms", 5))
        assert type(line[field]) in (str, int)


def test_key_with_hostile_eq_is_treated_as_its_text(lenient: io.StringIO) -> None:
    class OddKey(str):
        __slots__ = ()

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

        __hash__ = str.__hash__

    emit("pipeline_run", **{OddKey("lane"): "admin", "status": "ok"})
    (line,) = lines(lenient)
    assert line["lane"] == "admin"


EVENT_ARGS: dict[str, tuple[Callable[[], object], RejectReason | None]] = {
    "unknown_name": (lambda: "user_signed_up", RejectReason.UNKNOWN_EVENT),
    "upper_case_name": (lambda: "PIPELINE_RUN", RejectReason.UNKNOWN_EVENT),
    "email_as_name": (lambda: "jane.doe@example.com", RejectReason.UNKNOWN_EVENT),
    "lone_surrogate": (lambda: "\ud800", RejectReason.UNKNOWN_EVENT),
    "hostile_str_known": (lambda: HostileStr("pipeline_run"), None),
    "hostile_str_unknown": (lambda: HostileStr("nope"), RejectReason.UNKNOWN_EVENT),
    "none": (lambda: None, RejectReason.BAD_EVENT_TYPE),
    "int": (lambda: 42, RejectReason.BAD_EVENT_TYPE),
    "hostile": (Hostile, RejectReason.BAD_EVENT_TYPE),
    "other_class": (lambda: dict, RejectReason.BAD_EVENT_TYPE),
    "dict": (lambda: {"event": "pipeline_run"}, RejectReason.BAD_EVENT_TYPE),
}


@pytest.mark.parametrize(("make", "reason"), list(EVENT_ARGS.values()), ids=list(EVENT_ARGS))
def test_unknown_events_write_a_rejected_line_without_the_name(
    lenient: io.StringIO, make: Callable[[], object], reason: RejectReason | None
) -> None:
    emit(make(), lane="public", status="ok")
    (line,) = lines(lenient)
    if reason is None:  # a str subclass spelling a catalogue name is that event
        assert line["event"] == "pipeline_run"
        return
    assert line == {
        "event": "telemetry_rejected",
        "schema_version": 1,
        "severity": "INFO",
        "time": line["time"],
        "reason": reason.value,
    }
    assert "example" not in lenient.getvalue()


def test_a_subclass_that_skipped_the_rules_is_rejected(lenient: io.StringIO) -> None:
    # It inherits event_name, so it was never checked against the definition rules.
    class Sneaky(PipelineRun):
        user_email: str | None = None

    emit(Sneaky(lane="public", status="ok", user_email="jane.doe@example.com"))
    emit(Sneaky, lane="public", status="ok")
    assert [line["reason"] for line in lines(lenient)] == ["bad_event_type"] * 2
    assert "jane" not in lenient.getvalue()


def test_required_field_invalid_still_writes_the_rest(lenient: io.StringIO) -> None:
    emit("provider_status", provider="Anthropic", state="rate_limited", retry_after_s=30)
    (line,) = lines(lenient)
    assert "provider" not in line
    assert line["state"] == "rate_limited"
    assert line["retry_after_s"] == 30
    assert line["invalid_fields"] == ["provider", "probe"]  # probe: missing


@pytest.mark.parametrize(
    ("name", "fields", "kept", "invalid"),
    [
        # A required field missing, another (optional) value invalid: both named.
        ("pipeline_run", {"status": "ok", "attempts": 99}, {"status": "ok"}, ["lane", "attempts"]),
        ("pipeline_run", {"status": "ok", "attempts": "2"}, {"status": "ok"}, ["lane", "attempts"]),
        (
            "pipeline_run",
            {"lane": "public", "model_calls": -1},
            {"lane": "public"},
            ["status", "model_calls"],
        ),
        # Both required fields missing beside an invalid value, and a valid one kept.
        (
            "pipeline_run",
            {"attempts": 1, "queue_wait_ms": -5},
            {"attempts": 1},
            ["lane", "status", "queue_wait_ms"],
        ),
        # The other required field invalid too.
        ("chat_turn", {"kind": "bogus", "model_calls": 10**9}, {}, ["tier", "kind", "model_calls"]),
        (
            "chat_turn",
            {"tier": "admin", "duration_ms": True},
            {"tier": "admin"},
            ["kind", "duration_ms"],
        ),
    ],
)
def test_a_missing_required_field_stays_named_beside_an_invalid_value(
    lenient: io.StringIO,
    name: str,
    fields: dict[str, Any],
    kept: dict[str, Any],
    invalid: list[str],
) -> None:
    record = emit(name, **fields)
    (line,) = lines(lenient)
    assert record == line
    assert {k: v for k, v in line.items() if k in fields} == kept
    assert line["invalid_fields"] == invalid


def test_a_missing_required_field_stays_named_beside_a_value_that_raises(
    lenient: io.StringIO,
) -> None:
    # Validating a Hostile enum value raises (no ValidationError naming fields): the
    # careful path fills the missing lane with a stand-in to validate the rest. The
    # stand-in must never reach the line, and lane must still be named.
    record = emit("pipeline_run", status="ok", reason=Hostile(), model_calls=3)
    (line,) = lines(lenient)
    assert record == line
    assert "lane" not in line
    assert (line["status"], line["model_calls"]) == ("ok", 3)
    assert line["invalid_fields"] == ["lane", "reason"]


def test_unknown_keys_are_flagged_not_named_nor_counted(lenient: io.StringIO) -> None:
    emit("chat_turn", tier="public", kind="text", **{"jane.doe@example.com": 1, "user_id": "u-1"})
    (line,) = lines(lenient)
    assert line["unknown_fields"] == 1
    assert "jane" not in lenient.getvalue()
    assert "user_id" not in lenient.getvalue()
    assert counters().unknown == {"chat_turn": 1}


def test_nothing_goes_to_the_logging_module(
    lenient: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    emit("pipeline_run", lane="jane.doe@example.com", status="ok")
    emit("jane.doe@example.com")
    emit("pipeline_run", lane=Hostile(), status="ok")
    assert caplog.records == []
    assert len(lines(lenient)) == 3


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(EVENTS)), st.lists(st.text(min_size=1), max_size=3))
def test_strings_as_event_names_never_raise(name: str, noise: list[str]) -> None:
    with emitting() as buffer:
        for text in [*noise, name]:
            emit(text)
        parsed = lines(buffer)
    assert len(parsed) == len(noise) + 1
    for text, line in zip(noise, parsed, strict=False):
        assert line["event"] in (*EVENTS, "telemetry_rejected")
        if text not in EVENTS:
            assert line["reason"] == "unknown_event"
