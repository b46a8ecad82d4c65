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
from typing import Any

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
        # The stream's buffer takes the first line whole; only its flush fails.
        assert emit("chat_turn", tier="public", kind="text") is not None
        # The next is refused: the stream cannot flush what it already holds.
        assert emit("chat_turn", tier="public", kind="text") is None
    finally:
        reset_defaults()
        with contextlib.suppress(BrokenPipeError):  # the unwritten line is still buffered
            stream.close()
    snapshot = counters()
    assert snapshot.flush_failed == {"chat_turn": 1}
    assert snapshot.emitted == {"chat_turn": 1}
    assert snapshot.write_failed == {"chat_turn": 1}
    assert snapshot.partial_write == {}


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


def test_text_printed_earlier_goes_out_before_the_line(tmp_path: Path) -> None:
    # A UTF-8 text file: the line goes to its binary buffer, after the text layer's own.
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as stream:
        configure(stream=stream)
        stream.write("service says hello\n")  # still held by the text layer
        emit("chat_turn", tier="public", kind="text")
        stream.write("service says bye\n")
    first, line, last = path.read_text().splitlines()
    assert (first, last) == ("service says hello", "service says bye")
    assert json.loads(line)["event"] == "chat_turn"


def test_each_line_is_flushed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        configure(stream=stream)
        emit("chat_turn", tier="public", kind="text")
        assert json.loads(path.read_bytes())["tier"] == "public"  # before any close


def test_unbuffered_text_stdout_gets_whole_lines(tmp_path: Path) -> None:
    # What sys.stdout is under python -u or PYTHONUNBUFFERED: text over a raw FileIO.
    path = tmp_path / "out.jsonl"
    raw = io.FileIO(path, "w")
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    configure(stream=stream)
    stream.write("before\n")
    for _ in range(3):
        emit("chat_turn", tier="public", kind="text")
    stream.close()
    first, *rest = path.read_text().splitlines()
    assert first == "before"
    assert [json.loads(line)["kind"] for line in rest] == ["text"] * 3


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_other_encodings_get_text_the_text_layer_encodes(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "out.txt"
    with path.open("w", encoding=encoding) as stream:
        configure(stream=stream)
        emit("chat_turn", tier="public", kind="text")
    assert json.loads(path.read_text(encoding=encoding))["kind"] == "text"


class Tee(io.TextIOWrapper):
    """A TextIOWrapper subclass that sees every write: the emitter must not bypass it."""

    seen: list[str]

    def write(self, text: str) -> int:
        self.seen.append(text)
        return super().write(text)


def test_a_text_stream_subclass_gets_its_own_write_called(tmp_path: Path) -> None:
    # Over a real file, as sys.stdout is: the binary buffer is there, but not for this.
    stream = Tee((tmp_path / "out.jsonl").open("wb"), encoding="utf-8")
    stream.seen = []
    configure(stream=stream)
    emit("chat_turn", tier="public", kind="text")
    stream.close()
    assert len(stream.seen) == 1
    assert json.loads(stream.seen[0])["tier"] == "public"


class Trickle(io.RawIOBase):
    """An unbuffered stream that takes at most 7 bytes per write (a slow pipe)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0

    def writable(self) -> bool:
        return True

    def write(self, chunk: object) -> int:
        taken = bytes(memoryview(chunk))[:7]  # type: ignore[arg-type]
        self.data += taken
        self.writes += 1
        return len(taken)


def test_a_partial_write_is_finished_so_the_line_lands_whole() -> None:
    stream = Trickle()
    configure(stream=stream)
    emit("chat_turn", tier="public", kind="text")
    assert stream.writes > 1
    assert json.loads(stream.data)["kind"] == "text"


class Refusing(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, chunk: object) -> int:
        return 0


def test_a_stream_that_takes_nothing_is_counted() -> None:
    configure(stream=Refusing())
    assert emit("chat_turn", tier="public", kind="text") is None
    assert counters().write_failed == {"chat_turn": 1}


def test_a_detached_text_stream_is_counted_not_raised() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stream.detach()
    configure(stream=stream)
    assert emit("chat_turn", tier="public", kind="text") is None
    assert counters().write_failed == {"chat_turn": 1}


def test_the_default_follows_every_change_of_sys_stdout() -> None:
    reset_defaults()
    first, second = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(first):
        emit("chat_turn", tier="public", kind="text")
    with contextlib.redirect_stdout(second):
        emit("chat_turn", tier="admin", kind="text")
    with contextlib.redirect_stdout(first):
        emit("chat_turn", tier="public", kind="action")
    assert [json.loads(x)["kind"] for x in first.getvalue().splitlines()] == ["text", "action"]
    assert json.loads(second.getvalue())["tier"] == "admin"


class Scripted(io.RawIOBase):
    """An unbuffered stream whose writes follow a script: take n bytes, or raise; then all."""

    def __init__(self, *script: int | Exception) -> None:
        self.data = bytearray()
        self.script = list(script)

    def writable(self) -> bool:
        return True

    def write(self, chunk: object) -> int:
        given = bytes(memoryview(chunk))  # type: ignore[arg-type]
        step = self.script.pop(0) if self.script else len(given)
        if isinstance(step, Exception):
            raise step
        self.data += given[:step]
        return min(step, len(given))


def emit_three(stream: object) -> list[dict[str, Any] | None]:
    configure(stream=stream)  # type: ignore[arg-type]
    return [emit("chat_turn", tier="public", kind="text", duration_ms=n) for n in range(3)]


def test_a_cut_line_is_counted_and_the_next_line_starts_on_a_new_line() -> None:
    stream = Scripted(7, OSError(errno.EIO, "I/O error"))  # 7 bytes land, then it fails
    first, second, third = emit_three(stream)
    assert first is None
    assert second is not None
    assert third is not None
    fragment, *rest, end = bytes(stream.data).split(b"\n")
    assert fragment == b'{"event'
    assert [json.loads(x)["duration_ms"] for x in rest] == [1, 2]  # no blank line either
    assert end == b""
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 2}


def test_a_write_that_took_nothing_adds_no_blank_line() -> None:
    stream = Scripted(OSError(errno.EIO, "I/O error"))
    assert emit_three(stream)[0] is None
    assert [json.loads(x)["duration_ms"] for x in bytes(stream.data).splitlines()] == [1, 2]
    assert counters().write_failed == {"chat_turn": 1}
    assert counters().partial_write == {}


def test_a_cut_that_then_takes_only_the_newline_ends_the_fragment() -> None:
    # Line 0: 7 bytes, cut. Line 1: its leading newline lands, then the stream fails, so
    # the fragment is ended and nothing of line 1 is there. Line 2: no second newline.
    stream = Scripted(7, OSError(), 1, OSError())
    assert emit_three(stream)[:2] == [None, None]
    fragment, last, end = bytes(stream.data).split(b"\n")
    assert len(fragment) == 7
    assert json.loads(last)["duration_ms"] == 2
    assert end == b""
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.write_failed == {"chat_turn": 1}
    assert snapshot.emitted == {"chat_turn": 1}


def test_a_cut_stays_pending_until_a_newline_lands() -> None:
    stream = Scripted(7, OSError(), OSError())  # line 1 takes nothing, not even the newline
    emit_three(stream)
    fragment, last, end = bytes(stream.data).split(b"\n")
    assert (len(fragment), json.loads(last)["duration_ms"], end) == (7, 2, b"")
    assert counters().partial_write == {"chat_turn": 1}
    assert counters().write_failed == {"chat_turn": 1}


class HalfThenRaise(io.TextIOBase):
    """A text stream that lands half of its first write and then raises, saying nothing."""

    def __init__(self) -> None:
        self.text = ""
        self.failed = False

    def write(self, text: str) -> int:
        if not self.failed:
            self.failed = True
            self.text += text[: len(text) // 2]
            raise OSError(errno.EIO, "I/O error")
        self.text += text
        return len(text)


def test_a_write_that_raises_without_saying_what_it_took_is_followed_by_a_new_line() -> None:
    stream = HalfThenRaise()
    assert emit_three(stream)[0] is None
    fragment, *rest, end = stream.text.split("\n")
    assert fragment.startswith('{"event":"chat_turn"')
    assert [json.loads(x)["duration_ms"] for x in rest] == [1, 2]
    assert end == ""
    snapshot = counters()
    assert snapshot.write_failed == {"chat_turn": 1}  # what landed is not known
    assert snapshot.partial_write == {}
    assert snapshot.emitted == {"chat_turn": 2}


class FlushFailsOnce(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes == 1:
            raise OSError(errno.EIO, "I/O error")


def test_a_flush_that_fails_after_a_whole_write_counts_the_line_as_written() -> None:
    stream = FlushFailsOnce()
    assert None not in emit_three(stream)  # the first too: the stream has the line
    assert [json.loads(x)["duration_ms"] for x in stream.getvalue().splitlines()] == [0, 1, 2]
    snapshot = counters()
    assert snapshot.flush_failed == {"chat_turn": 1}
    assert snapshot.emitted == {"chat_turn": 3}
    assert snapshot.write_failed == {}
    assert snapshot.partial_write == {}


class NonBlocking(io.BufferedIOBase):
    """A non-blocking buffered stream: its first write takes ``took`` bytes and blocks."""

    def __init__(self, took: int) -> None:
        self.data = bytearray()
        self.took: int | None = took

    def writable(self) -> bool:
        return True

    def write(self, chunk: object) -> int:
        given = bytes(memoryview(chunk))  # type: ignore[arg-type]
        if self.took is not None:
            took, self.took = self.took, None
            self.data += given[:took]
            raise BlockingIOError(errno.EAGAIN, "would block", took)
        self.data += given
        return len(given)


@pytest.mark.parametrize(("took", "counter"), [(10, "partial_write"), (0, "write_failed")])
def test_a_blocked_buffered_write_says_what_it_took(took: int, counter: str) -> None:
    stream = NonBlocking(took)
    assert emit_three(stream)[0] is None
    *kept, end = bytes(stream.data).split(b"\n")
    assert end == b""
    assert [len(x) for x in kept[:-2]] == ([10] if took else [])
    assert [json.loads(x)["duration_ms"] for x in kept[-2:]] == [1, 2]
    assert counters().as_dict()[counter] == {"chat_turn": 1}


def test_a_cut_on_one_stdout_does_not_touch_the_next_stdout() -> None:
    reset_defaults()
    cut, fresh = Scripted(7, OSError()), io.StringIO()
    with contextlib.redirect_stdout(cut):  # type: ignore[type-var]
        emit("chat_turn", tier="public", kind="text")
    with contextlib.redirect_stdout(fresh):
        emit("chat_turn", tier="public", kind="text")
    assert json.loads(fresh.getvalue())["kind"] == "text"  # no leading newline
    assert counters().partial_write == {"chat_turn": 1}


def test_text_the_service_leaves_without_a_newline_is_glued_to_the_line(tmp_path: Path) -> None:
    # What docs/emitting.md says: the emitter cannot know what the service left on the
    # stream, so the sink gets one line that is not JSON.
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as stream:
        configure(stream=stream)
        stream.write("progress 50%")
        emit("chat_turn", tier="public", kind="text")
    (only,) = path.read_text().splitlines()
    assert only.startswith('progress 50%{"event":"chat_turn"')
