"""A line that the raw stream takes in parts still lands whole, once.

Under unbuffered text stdout (``python -u``, ``PYTHONUNBUFFERED``: a UTF-8
``TextIOWrapper`` over a real ``io.FileIO``) the kernel may take part of a line, or none
of it without an error (a full non-blocking pipe: ``FileIO.write`` returns None). The
emitter writes the rest, and tries a write that took nothing once more, so the line
lands whole, exactly once, and counts as written: no ``partial_write``, no
``write_failed``. Both are made to happen for real, each step caused by the one before
it: no thread, no timing. CPython runs a Python signal handler at its next check
between bytecodes, so a signal the kernel queues during one ``write`` is handled before
the emitter's next ``write`` (at the latest on entering the function that writes the
rest).

- Part of the line: the file is 10 bytes below its RLIMIT_FSIZE, so the first ``write``
  takes 10 bytes and returns 10 (no error, no SIGXFSZ). It changes a file in a directory
  watched with dnotify, so the kernel queues SIGIO; the handler lifts the limit, and the
  rest of the line is taken. In a forked child, because the limit is per process; the
  stream is configured before the fork, so the write strategy is chosen in this process,
  where tools that record which tests run which code (mutmut) see it.
- None of it: the pipe is full and its read end asks for SIGIO (``O_ASYNC``). Linux
  sends it after every write to a pipe, even one it refuses (``pipe_write`` ends in
  ``kill_fasync`` whatever it took; skipped where that is not so); the handler empties
  the pipe, and the second try takes the line.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from agent_telemetry.emit import configure, counters, emit, reset_counters, reset_defaults
from tests.emit.test_output_edges import (
    clock,
    expected_lines,
    fork_and_report,
    needs_fork,
    read_all,
    restore,  # noqa: F401 - autouse: counters and defaults reset around each test
    unbuffered_text,
)

PREFIX = b"x" * 1000  # already in the file
ROOM = 10  # bytes of the line that fit under the limit


@needs_fork
def test_a_line_the_raw_stream_takes_in_parts_lands_whole_once(tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    resource = pytest.importorskip("resource")
    if not hasattr(fcntl, "F_NOTIFY") or not hasattr(signal, "SIGIO"):
        pytest.skip("needs dnotify (Linux)")
    first, _, _ = expected_lines()
    assert len(first) > ROOM
    watched = tmp_path / "out"
    watched.mkdir()
    path = watched / "out.jsonl"
    path.write_bytes(PREFIX)

    # Configured before the fork: see the module docstring.
    stream = unbuffered_text(os.open(path, os.O_WRONLY | os.O_APPEND))
    assert type(stream.buffer) is io.FileIO  # the python -u strategy
    configure(stream=stream, clock=clock)

    def child() -> dict[str, Any]:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        lifted_at: list[int] = []  # the file's size when the handler ran

        def lift(signum: int, frame: FrameType | None) -> None:
            lifted_at.append(path.stat().st_size)
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

        signal.signal(signal.SIGIO, lift)
        reset_counters()
        directory = os.open(watched, os.O_RDONLY)
        fcntl.fcntl(directory, fcntl.F_NOTIFY, fcntl.DN_MODIFY)  # one shot: SIGIO
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(PREFIX) + ROOM, hard))
        try:
            written = emit("chat_turn", tier="public", kind="text", duration_ms=0)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        return {
            "written": written is not None,
            "lifted_at": lifted_at,
            "counters": counters().as_dict(),
        }

    try:
        result = fork_and_report(child, tmp_path / "child.json")
    finally:
        reset_defaults()
        stream.close()
    # The kernel took part of the line, and only then was the limit lifted.
    assert result["lifted_at"] == [len(PREFIX) + ROOM]
    assert path.read_bytes() == PREFIX + first  # the rest followed: whole, once
    assert result["written"] is True
    assert result["counters"]["emitted"] == {"chat_turn": 1}
    assert result["counters"]["partial_write"] == {}
    assert result["counters"]["write_failed"] == {}


def full_pipe() -> tuple[int, int, int]:
    """A pipe whose non-blocking write end takes nothing more: read end, write end, and
    how many bytes are in it."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            filled += os.write(write_end, b"x" * 4096)
    return read_end, write_end, filled


@contextlib.contextmanager
def emptied_on_next_write(read_end: int) -> Iterator[list[bytes]]:
    """Within the block, the next write to the pipe, even one it refuses, makes the kernel
    send SIGIO; its handler empties the pipe (once) and records what it read."""
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(os, "O_ASYNC") or not hasattr(signal, "SIGIO"):
        pytest.skip("needs O_ASYNC and SIGIO")
    emptied: list[bytes] = []

    def signalled(on: bool) -> None:
        flags = fcntl.fcntl(read_end, fcntl.F_GETFL)
        fcntl.fcntl(read_end, fcntl.F_SETFL, flags | os.O_ASYNC if on else flags & ~os.O_ASYNC)

    def empty(signum: int, frame: FrameType | None) -> None:
        signalled(False)
        emptied.append(read_all(read_end))

    previous = signal.signal(signal.SIGIO, empty)
    fcntl.fcntl(read_end, fcntl.F_SETOWN, os.getpid())
    signalled(True)
    try:
        yield emptied
    finally:
        signalled(False)
        signal.signal(signal.SIGIO, previous)


def refused_pipe_writes_are_signalled() -> bool:
    read_end, write_end, _ = full_pipe()
    try:
        with emptied_on_next_write(read_end) as emptied, contextlib.suppress(BlockingIOError):
            os.write(write_end, b"y")
    finally:
        os.close(read_end)
        os.close(write_end)
    return bool(emptied)


def test_a_raw_write_that_took_nothing_is_tried_once_more() -> None:
    if not refused_pipe_writes_are_signalled():
        pytest.skip("this kernel sends no SIGIO for a pipe write it refuses")
    first, _, _ = expected_lines()
    read_end, write_end, filled = full_pipe()
    stream = unbuffered_text(write_end)
    assert type(stream.buffer) is io.FileIO  # the python -u strategy
    try:
        configure(stream=stream, clock=clock)
        with emptied_on_next_write(read_end) as emptied:
            written = emit("chat_turn", tier="public", kind="text", duration_ms=0)
        landed = read_all(read_end)
    finally:
        reset_defaults()
        stream.close()
        os.close(read_end)
    assert emptied == [b"x" * filled]  # the first try took nothing: the pipe was full
    assert landed == first  # the second took the line: whole, once
    assert written is not None
    snapshot = counters()
    assert snapshot.emitted == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.partial_write == {}
