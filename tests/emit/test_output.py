"""Where lines go, and what happens when the stream refuses them: counted, never raised."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_telemetry.emit import configure, counters, emit, reset_counters, reset_defaults


@pytest.fixture(autouse=True)
def restore() -> Iterator[None]:
    reset_counters()
    yield
    reset_defaults()
    reset_counters()


def test_default_stream_is_sys_stdout_at_write_time(capsys: pytest.CaptureFixture[str]) -> None:
    reset_defaults()
    emit("chat_turn", tier="public", kind="text")
    out = capsys.readouterr().out
    assert json.loads(out)["event"] == "chat_turn"


def test_binary_streams_get_bytes(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    with path.open("wb") as stream:
        configure(stream=stream)
        emit("chat_turn", tier="public", kind="text")
    assert json.loads(path.read_bytes())["tier"] == "public"


def test_unbuffered_binary_streams_get_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    with path.open("wb", buffering=0) as stream:
        configure(stream=stream)
        for _ in range(3):
            emit("chat_turn", tier="public", kind="text")
    assert len(path.read_bytes().splitlines()) == 3


def test_closed_stream_is_counted_not_raised() -> None:
    stream = io.StringIO()
    stream.close()
    configure(stream=stream)
    assert emit("chat_turn", tier="public", kind="text") is None
    assert counters().write_failed == {"chat_turn": 1}
    assert counters().emitted == {}


def test_broken_pipe_is_counted_not_raised() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "w")
    try:
        configure(stream=stream)
        assert emit("chat_turn", tier="public", kind="text") is None
        assert emit("chat_turn", tier="public", kind="text") is None
    finally:
        reset_defaults()
        with contextlib.suppress(BrokenPipeError):  # the unwritten line is still buffered
            stream.close()
    assert counters().write_failed == {"chat_turn": 2}


class FullDisk(io.TextIOBase):
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_os_errors_are_counted_not_raised() -> None:
    configure(stream=FullDisk())
    emit("pipeline_run", lane="public", status="ok")
    emit("nope")
    assert counters().write_failed == {"pipeline_run": 1, "telemetry_rejected": 1}


def test_no_stdout_at_all_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_defaults()
    monkeypatch.setattr(sys, "stdout", None)
    assert emit("chat_turn", tier="public", kind="text") is None
    assert counters().write_failed == {"chat_turn": 1}


def test_write_failures_raise_nothing_in_strict_mode_either() -> None:
    stream = io.StringIO()
    stream.close()
    configure(stream=stream, strict=True)
    assert emit("chat_turn", tier="public", kind="text") is None
    assert counters().write_failed == {"chat_turn": 1}


def test_configure_keeps_what_it_is_not_given() -> None:
    first = io.StringIO()
    configure(stream=first, strict=True)
    configure(strict=False)
    emit("chat_turn", tier="public", kind="bad")
    assert json.loads(first.getvalue())["invalid_fields"] == ["kind"]
