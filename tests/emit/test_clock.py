"""configure(clock=...): the line's time from a caller's clock, on every path."""

from __future__ import annotations

import inspect
import itertools
import re

import pytest

from agent_telemetry.emit import (
    TelemetryValidationError,
    capture,
    configure,
    emit,
    reset_defaults,
    settings,
)
from tests.emit.conftest import emitting, lines

T0 = 1_778_312_125_123_456_789  # 2026-05-09T07:35:25.123456789Z
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def test_a_configured_clock_stamps_exact_times_on_the_fast_path() -> None:
    ticks = itertools.count(T0, 1_000_000_000)
    with emitting() as buffer:
        configure(clock=lambda: next(ticks))
        emit("chat_turn", tier="public", kind="text")
        emit("chat_turn", tier="admin", kind="text")
    assert [line["time"] for line in lines(buffer)] == [
        "2026-05-09T07:35:25.123456Z",
        "2026-05-09T07:35:26.123456Z",
    ]


def test_a_configured_clock_stamps_model_path_and_rejected_lines() -> None:
    with emitting() as buffer:
        configure(clock=lambda: T0)
        emit("chat_turn", tier="public", kind="text", not_a_field=1)  # the model path
        emit("chat_turn", tier="nope", kind="text")  # an invalid field
        emit("no_such_event")  # telemetry_rejected
    found = lines(buffer)
    assert [line.get("unknown_fields") for line in found] == [1, None, None]
    assert found[1]["invalid_fields"] == ["tier"]
    assert found[2]["event"] == "telemetry_rejected"
    assert {line["time"] for line in found} == {"2026-05-09T07:35:25.123456Z"}


def test_reset_defaults_restores_the_real_clock() -> None:
    with emitting() as buffer:
        configure(clock=lambda: 0)
        reset_defaults()
        assert settings().clock is None
        configure(stream=buffer)
        emit("chat_turn", tier="public", kind="text")
    (line,) = lines(buffer)
    assert RFC3339.fullmatch(line["time"])
    assert not line["time"].startswith("1970")


def test_clock_none_restores_the_real_clock_and_leaving_it_out_keeps_it() -> None:
    def clock() -> int:
        return 0

    with emitting():
        configure(clock=clock)
        configure(strict=False)
        assert settings().clock is clock
        configure(clock=None)
        assert settings().clock is None


def test_capture_records_carry_the_configured_time() -> None:
    with emitting() as buffer:
        configure(clock=lambda: T0)
        with capture(strict=True) as records:
            emit("provider_status", provider="vertex", state="live", probe="preflight")
        assert settings().clock is not None  # capture restores the mode, not the clock
    assert [r["time"] for r in records] == ["2026-05-09T07:35:25.123456Z"]
    assert buffer.getvalue() == ""


def test_a_failing_clock_rejects_the_line_at_the_real_time() -> None:
    def broken() -> int:
        raise RuntimeError("clock failed")

    with emitting() as buffer:
        configure(clock=broken)
        assert emit("chat_turn", tier="public", kind="text") is not None
    (line,) = lines(buffer)
    assert (line["event"], line["reason"]) == ("telemetry_rejected", "internal_error")
    assert RFC3339.fullmatch(line["time"])


def test_a_clock_returning_a_float_is_an_error_in_strict_mode() -> None:
    with emitting(strict=True):
        configure(clock=lambda: 1.5e18)  # type: ignore[arg-type, return-value]
        with pytest.raises(TelemetryValidationError, match="internal_error"):
            emit("chat_turn", tier="public", kind="text")


def test_help_shows_that_leaving_the_clock_out_keeps_it() -> None:
    # help(configure) shows the default: "None" would read as "the real clock", which is
    # what clock=None means, not what leaving it out does.
    clock = inspect.signature(configure).parameters["clock"]
    assert str(clock).endswith(" = <keep>")
