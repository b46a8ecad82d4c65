"""A stream that stalls and then drains, a stream whose flush fails before a long line, a
system without a non-blocking write, and a writer nobody configured: what the service's
reader sees and what the counters say.

Each writer here is a ``LineWriter`` on its own ``Shared``, as ``emit`` builds one, given
the rendered line directly (tests/emit/test_stall.py does the same for an 8 KiB line).
"""

from __future__ import annotations

import io
import json
import os
import threading
import time

import pytest

from agent_telemetry.emit._output import WRITE_TIMEOUT_SECONDS, LineWriter, Shared
from tests.emit.test_stalled_stream import SLACK, drain, full_pipe, within

SHORT_LINE = b'{"event":"short_line","n":1}\n'
LONG_LINE = b'{"event":"long_line","pad":"' + b"p" * (8 * 1024) + b'"}\n'


def test_a_line_waits_for_a_stalled_pipe_that_drains_within_the_bound_and_goes_out() -> None:
    """The reader catches up a moment after the pipe filled: the line is not lost."""
    shared = Shared()
    shared.write_timeout = 5.0
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)
    seen: list[bytes] = []

    def late_reader() -> None:
        time.sleep(0.2)
        seen.append(drain(read))

    reader = threading.Thread(target=late_reader)
    reader.start()
    try:
        written, _ = within(5.0 + SLACK, lambda: writer.info(SHORT_LINE, {"event": "short"}))
        reader.join(5)
        seen.append(drain(read))
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert written is not None
    assert not shared.counters.write_timeouts
    assert not shared.counters.write_failed
    assert dict(shared.counters.emitted) == {"short": 1}
    assert b"".join(seen).endswith(SHORT_LINE)


def test_a_writer_nobody_configured_drops_a_line_on_a_stalled_pipe_after_the_default_bound() -> (
    None
):
    shared = Shared()  # no configure(write_timeout=...): the documented default
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)
    try:
        written, took = within(
            WRITE_TIMEOUT_SECONDS + SLACK, lambda: writer.info(SHORT_LINE, {"event": "short"})
        )
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert written is None
    assert took >= WRITE_TIMEOUT_SECONDS * 0.9
    assert dict(shared.counters.write_timeouts) == {"short": 1}
    assert not shared.counters.write_failed


class _FlushFails(io.RawIOBase):
    """A binary stream on a pipe whose ``flush`` raises: nothing of a long line is written."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: object) -> int:
        return os.write(self._fd, data)  # type: ignore[arg-type]

    def flush(self) -> None:
        raise OSError("flush failed")


def test_a_long_line_whose_stream_cannot_flush_first_is_counted_as_not_written() -> None:
    """No byte of it reached the pipe: a write failure, not a fragment, and the next line
    does not start with a newline that would end a fragment nobody wrote."""
    shared = Shared()
    read, write = os.pipe()
    stream = _FlushFails(write)
    writer = LineWriter(shared, stream)  # type: ignore[arg-type]  # a stream, not an IO
    try:
        assert writer.info(LONG_LINE, {"event": "long"}) is None
        seen = drain(read)
    finally:
        os.close(read)
        os.close(write)
    assert seen == b""
    assert dict(shared.counters.write_failed) == {"long": 1}
    assert not shared.counters.partial_write


def test_without_a_non_blocking_write_a_long_line_still_goes_out_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linux before 4.14 and other systems have no ``RWF_NOWAIT``: the line is written as
    a blocking write, whole."""
    monkeypatch.delattr(os, "RWF_NOWAIT")
    shared = Shared()
    read, write = os.pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    try:
        writer = LineWriter(shared, stream)
        assert writer.info(LONG_LINE, {"event": "long"}) is not None
        seen = drain(read)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert seen == LONG_LINE
    assert json.loads(seen)["event"] == "long_line"
    assert dict(shared.counters.emitted) == {"long": 1}
