"""A stream that stalls and then drains, a stream whose flush fails before a long line, a
system without a non-blocking write, and a writer nobody configured: what the service's
reader sees and what the counters say.

Each writer here is a ``LineWriter`` on its own ``Shared``, as ``emit`` builds one, given
the rendered line directly (tests/emit/test_stall.py does the same for an 8 KiB line).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from agent_telemetry.emit._long_line import PAGE, PIPE_BUF
from agent_telemetry.emit._output import WRITE_TIMEOUT_SECONDS, LineWriter, Shared
from tests.emit.test_stall import pipe_with_sparse_pages
from tests.emit.test_stalled_stream import SLACK, drain, full_pipe, within

SHORT_LINE = b'{"event":"short_line","n":1}\n'
LONG_LINE = b'{"event":"long_line","pad":"' + b"p" * (8 * 1024) + b'"}\n'


@contextlib.contextmanager
def _writer_over(shared: Shared, read: int, write: int) -> Iterator[LineWriter]:
    """A LineWriter on the pipe's write end as an unbuffered stream; the stream and both
    ends are closed after the test's writes."""
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    try:
        yield LineWriter(shared, stream)
    finally:
        stream.close()
        os.close(read)
        os.close(write)


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
    with _writer_over(shared, read, write) as writer:
        written, took = within(
            WRITE_TIMEOUT_SECONDS + SLACK, lambda: writer.info(SHORT_LINE, {"event": "short"})
        )
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


def _pipe_with_full_pages_free(free: int) -> tuple[int, int]:
    """A blocking pipe nobody reads, every used page full (one 4,096-byte write each), and
    ``free`` pages free; the writer's estimate keeps one of them for a part-read page."""
    read, write = os.pipe()
    import fcntl

    pages = int(fcntl.fcntl(write, 1032)) // PAGE  # F_GETPIPE_SZ
    for _ in range(pages - free):
        os.write(write, b"f" * (PAGE - 1) + b"\n")
    return read, write


def test_a_long_line_exactly_as_long_as_the_room_the_pipe_promises_goes_out_whole() -> None:
    """Three pages free, of which the writer counts two as surely its own: a line of
    exactly two pages fits and is written at once, not dropped at the bound."""
    line = b'{"event":"long_line","pad":"' + b"p" * (2 * PAGE - 31) + b'"}\n'
    assert len(line) == 2 * PAGE
    shared = Shared()
    shared.write_timeout = 0.2
    read, write = _pipe_with_full_pages_free(3)
    with _writer_over(shared, read, write) as writer:
        written, _ = within(0.2 + SLACK, lambda: writer.info(line, {"event": "long"}))
        seen = drain(read)
    assert written is not None
    assert not shared.counters.write_timeouts
    assert seen.endswith(b"\n" + line)


def test_a_long_line_on_a_socket_with_room_goes_out_whole() -> None:
    """stdout as a socket (systemd's journal) whose reader keeps up: its room is not known,
    so the line is written at once."""
    ours, theirs = socket.socketpair()
    stream = os.fdopen(ours.fileno(), "wb", buffering=0, closefd=False)
    shared = Shared()
    shared.write_timeout = 0.2
    writer = LineWriter(shared, stream)
    try:
        written, _ = within(0.2 + SLACK, lambda: writer.info(LONG_LINE, {"event": "long"}))
        theirs.setblocking(False)
        seen = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := theirs.recv(65536):
                seen += chunk
    finally:
        stream.close()
        ours.close()
        theirs.close()
    assert written is not None
    assert not shared.counters.write_timeouts
    assert seen == LONG_LINE


def test_a_long_line_whose_reader_goes_away_halfway_is_counted_as_a_fragment() -> None:
    """The pipe took part of the line, then its reader closed it: a fragment is on the
    stream (``partial_write``), not a line dropped whole (``write_timeouts``)."""
    read, write = pipe_with_sparse_pages(1)  # room by bytes, one page by the kernel's count
    shared = Shared()
    shared.write_timeout = 5.0
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)
    closer = threading.Timer(0.2, os.close, (read,))
    closer.start()
    try:
        written, _ = within(5.0 + SLACK, lambda: writer.info(LONG_LINE, {"event": "long"}))
        closer.join(5)
    finally:
        stream.close()
        os.close(write)
    assert written is None
    assert dict(shared.counters.partial_write) == {"long": 1}
    assert not shared.counters.write_timeouts


def test_a_line_of_exactly_pipe_buf_bytes_takes_the_pipes_last_free_page() -> None:
    """One page free and nobody reading: the pipe takes a ``PIPE_BUF`` write whole, at once
    (the long-line path, which keeps a page for the reader's part-read one, would wait)."""
    line = b'{"event":"short_line","pad":"' + b"p" * (PIPE_BUF - 32) + b'"}\n'
    assert len(line) == PIPE_BUF
    shared = Shared()
    shared.write_timeout = 0.2
    read, write = _pipe_with_full_pages_free(1)
    with _writer_over(shared, read, write) as writer:
        written, _ = within(0.2 + SLACK, lambda: writer.info(line, {"event": "short"}))
        seen = drain(read)
    assert written is not None
    assert not shared.counters.write_timeouts
    assert seen.endswith(b"\n" + line)


def test_where_the_kernel_refuses_a_non_blocking_pipe_write_a_long_line_goes_out_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linux before 5.x has ``RWF_NOWAIT`` but refuses it on a pipe (``EOPNOTSUPP``): the
    line is written as a blocking write, whole, rather than dropped."""
    pwritev = os.pwritev

    def refusing(fd: int, buffers: list[memoryview], offset: int, flags: int = 0) -> int:
        if flags:
            raise OSError(errno.EOPNOTSUPP, "not supported")
        return pwritev(fd, buffers, offset, flags)

    monkeypatch.setattr(os, "pwritev", refusing)
    shared = Shared()
    shared.write_timeout = 0.2
    read, write = os.pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    try:
        writer = LineWriter(shared, stream)
        written, _ = within(0.2 + SLACK, lambda: writer.info(LONG_LINE, {"event": "long"}))
        seen = drain(read)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert written is not None
    assert seen == LONG_LINE
    assert not shared.counters.write_timeouts


def test_after_a_fragment_a_long_line_ends_it_and_the_next_line_follows_with_no_blank_line() -> (
    None
):
    """The long line after a cut starts with the newline that ends the fragment; once it is
    out whole, lines go out as before: no empty line, none lost."""
    read, write = pipe_with_sparse_pages(1)
    shared = Shared()
    shared.write_timeout = 0.1
    with _writer_over(shared, read, write) as writer:
        assert writer.info(LONG_LINE, {"event": "cut"}) is None  # begun, not finished
        assert dict(shared.counters.partial_write) == {"cut": 1}
        seen = drain(read)
        assert writer.info(LONG_LINE, {"event": "long"}) is not None
        assert writer.info(SHORT_LINE, {"event": "short"}) is not None
        seen += drain(read)
    assert seen.endswith(b"\n" + LONG_LINE + SHORT_LINE)
    assert dict(shared.counters.emitted) == {"long": 1, "short": 1}


def test_a_line_that_waited_for_the_lock_still_waits_the_rest_of_the_bound_for_the_pipe() -> None:
    """Another thread held the write lock for a moment, then the pipe was full and its
    reader caught up: the line had bound left for both waits, and goes out."""
    shared = Shared()
    shared.write_timeout = 5.0
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)
    seen: list[bytes] = []
    holding = threading.Event()

    def other_writer() -> None:  # mid-line for a moment
        with shared.lock:
            holding.set()
            time.sleep(0.1)

    releaser = threading.Thread(target=other_writer)

    def late_reader() -> None:
        time.sleep(0.4)
        seen.append(drain(read))

    reader = threading.Thread(target=late_reader)
    releaser.start()
    holding.wait(5)
    reader.start()
    try:
        written, _ = within(5.0 + SLACK, lambda: writer.info(SHORT_LINE, {"event": "short"}))
        reader.join(5)
        seen.append(drain(read))
    finally:
        releaser.join(5)
        stream.close()
        os.close(read)
        os.close(write)
    assert written is not None
    assert not shared.counters.write_timeouts
    assert b"".join(seen).endswith(SHORT_LINE)


def test_a_zero_timeout_never_waits_for_a_writer_stuck_holding_the_lock() -> None:
    shared = Shared()
    shared.write_timeout = 0.0
    writer = LineWriter(shared, io.BytesIO())
    holding, done = threading.Event(), threading.Event()

    def stuck_writer() -> None:
        with shared.lock:
            holding.set()
            done.wait(10)

    holder = threading.Thread(target=stuck_writer)
    holder.start()
    holding.wait(5)
    try:
        written, took = within(SLACK, lambda: writer.info(SHORT_LINE, {"event": "short"}))
    finally:
        done.set()
        holder.join(5)
    assert written is None
    assert took < 0.5  # the bound is 0: a millisecond's look at the lock, not a second
    assert dict(shared.counters.write_timeouts) == {"short": 1}


def test_a_zero_timeout_never_waits_for_a_long_line_on_a_full_pipe() -> None:
    shared = Shared()
    shared.write_timeout = 0.0
    read, write = full_pipe()
    with _writer_over(shared, read, write) as writer:
        written, took = within(SLACK, lambda: writer.info(LONG_LINE, {"event": "long"}))
    assert written is None
    assert took < 0.5  # the bound is 0: no wait for room, not a second's
    assert dict(shared.counters.write_timeouts) == {"long": 1}


@pytest.mark.parametrize("line", [SHORT_LINE, LONG_LINE], ids=["short", "long"])
def test_the_wait_for_the_lock_and_the_wait_for_a_full_pipe_share_one_bound(line: bytes) -> None:
    """Another writer held the lock for most of the bound, then the pipe stayed full: the
    line is dropped when the bound runs out, not a whole bound after the lock came free."""
    bound, held = 2.0, 1.8
    shared = Shared()
    shared.write_timeout = bound
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)
    holding = threading.Event()

    def other_writer() -> None:
        with shared.lock:
            holding.set()
            time.sleep(held)

    holder = threading.Thread(target=other_writer)
    holder.start()
    holding.wait(5)
    try:
        written, took = within(2 * bound + SLACK, lambda: writer.info(line, {"event": "e"}))
    finally:
        holder.join(5)
        stream.close()
        os.close(read)
        os.close(write)
    assert written is None
    assert took < bound + (bound - held) + 0.7  # not held + a whole bound (3.8 s)
    assert dict(shared.counters.write_timeouts) == {"e": 1}


def test_a_writer_reset_as_in_a_forked_child_still_counts_a_stalled_line() -> None:
    """What the child's at-fork hook leaves (new locks, zeroed counters) still writes and
    counts. Run in this process: a forked child's calls are invisible to mutation testing's
    record of which tests reach the hook (tests/emit/test_fork.py forks for real)."""
    shared = Shared()
    shared.write_timeout = 0.0
    shared._after_fork_in_child()  # what os.register_at_fork runs in the child
    read, write = full_pipe()
    with _writer_over(shared, read, write) as writer:
        assert writer.info(SHORT_LINE, {"event": "short"}) is None
    assert dict(shared.counters.write_timeouts) == {"short": 1}


def test_waiting_for_room_for_a_long_line_sleeps_rather_than_spins() -> None:
    """A service thread waiting out the bound on a full pipe leaves the CPU to the service:
    it looks for room at most every 10 ms, not in a loop."""
    shared = Shared()
    shared.write_timeout = 0.5
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)

    def timed() -> tuple[object, float]:
        started = time.thread_time()
        written = writer.info(LONG_LINE, {"event": "long"})
        return written, time.thread_time() - started

    try:
        (written, cpu), took = within(0.5 + SLACK, timed)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert written is None
    assert took >= 0.45
    assert cpu < 0.05, cpu  # sleeping: about 50 looks of a few microseconds each
    assert dict(shared.counters.write_timeouts) == {"long": 1}


def test_waiting_to_finish_a_begun_long_line_sleeps_in_poll_rather_than_spins() -> None:
    """The pipe took part of the line and its reader stalled: the rest waits in ``poll``
    for what is left of the bound, not in a loop of short looks."""
    read, write = pipe_with_sparse_pages(1)
    shared = Shared()
    shared.write_timeout = 1.0
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    writer = LineWriter(shared, stream)

    def timed() -> tuple[object, float]:
        started = time.thread_time()
        written = writer.info(LONG_LINE, {"event": "long"})
        return written, time.thread_time() - started

    try:
        (written, cpu), _ = within(1.0 + SLACK, timed)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert written is None
    assert dict(shared.counters.partial_write) == {"long": 1}
    assert cpu < 0.01, cpu  # one poll (under 1 ms measured), not one a millisecond (15-25 ms)
