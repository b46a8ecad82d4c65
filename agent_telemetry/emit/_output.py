"""The wrapped logger at the end of the chain: one line, one ``write``, under one lock.

It writes to the configured stream, or to ``sys.stdout`` as it is at the moment of the
write (so pytest's capsys and a service's own redirection keep working). While a
``capture()`` is active, records go to the capture lists instead of the stream.

A write that fails (closed stream, broken pipe, full disk, a stream that is not a
stream) is counted and swallowed: telemetry never takes the service down. What the
stream took decides the counter: nothing (``write_failed``), part of the line
(``partial_write``: the next line then starts with a newline, so it is not glued onto
the fragment), or all of it before ``flush`` raised (``flush_failed``, and the line
counts as written).

A stream that stops draining (a full pipe nobody reads) never holds a service thread for
longer than the write timeout (``configure(write_timeout=...)``, 1 s by default): a
thread waits for the write lock while other lines go out, but at most that long with
none going out, and before writing to a pipe, socket or terminal it waits at most that
long for the stream to take a line; then the line is dropped whole and counted in
``write_timeouts``. A line longer than a pipe's atomic write (``PIPE_BUF``) is written
within the same bound, whole or not at all (``_long_line``). Counters live under their own lock,
never held during a write, so ``counters()`` does not wait behind a stuck writer.
"""

from __future__ import annotations

import codecs
import io
import os
import select
import stat
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Final, NoReturn

from agent_telemetry.emit._counters import Counters, bump
from agent_telemetry.emit._long_line import PIPE_BUF, LongLines, Unfinished, long_lines
from agent_telemetry.emit._processors import Record
from agent_telemetry.schema.envelope import REJECTED_EVENT

Write = Callable[[bytes], object]

# How long a fork waits for a line being written by another thread to be finished.
FORK_WAIT_SECONDS: Final = 1.0
# How long, by default, an emit waits for the write lock and then for the stream to drain.
# At 0.1 s a busy service lost lines to it with nothing stalled: eight threads in a process
# starved of CPU (bench/emit_contention.py) dropped 285 lines of 20,000 at 0.1 s, 110 at
# 0.25 s and 7 at 1 s, waiting for a lock holder that was merely off the CPU.
WRITE_TIMEOUT_SECONDS: Final = 1.0


class Cut(Exception):
    """The stream took ``landed`` bytes of the line (0: none) and then failed."""

    def __init__(self, landed: int) -> None:
        super().__init__("the stream took part of a line")  # never the line itself
        self.landed = landed


class FlushFailed(Exception):
    """The stream took the whole line; the ``flush`` after it raised."""


class Stalled(Exception):
    """The stream would not take a line now; nothing of the line was written.

    ``ready(milliseconds)`` waits that long at most for the stream to drain.
    """

    def __init__(self, ready: Callable[[int], list[tuple[int, int]]]) -> None:
        super().__init__("the stream is not draining")
        self.ready = ready


class NeedsTime(Exception):
    """A line longer than ``PIPE_BUF`` for a pollable stream: nothing of it is written yet;
    ``LineWriter.info`` writes it with ``long.write`` within what is left of the bound."""

    def __init__(self, long: LongLines, line: bytes) -> None:
        super().__init__("a long line waits for the bound")
        self.long = long
        self.line = line
        self.whole: Callable[[], None] = _nothing  # after the line is out whole


def _nothing() -> None:
    pass


class Shared:
    """Process-wide state every writer shares, whatever ``configure`` does to the logger.

    Every lock is re-entrant: ``counters()``, ``capture()`` or ``configure()`` called from
    a signal handler (or a stream's ``write``) on a thread that already holds one must not
    wait for itself. ``emit`` itself never re-enters a write: it drops a nested call first
    (``_emit``).

    The write lock covers lines, sinks and the per-line counters, which only its holder
    updates. ``count_lock`` covers what a thread without the write lock counts (timeouts,
    internal errors, dropped nested calls), snapshots and resets; nobody waits for a stream
    while holding it, so ``counters()`` never waits behind a writer.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()  # the write lock: lines, per-line counters, sinks
        self.count_lock = threading.RLock()
        self.configure_lock = threading.RLock()
        self.write_timeout = WRITE_TIMEOUT_SECONDS
        self.lines_out = 0  # lines written so far: a waiter tells a stall from a queue
        self.counters = Counters()
        self.sinks: list[list[Record]] = []
        self._held_for_fork = False
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=self._before_fork,
                after_in_parent=self._after_fork_in_parent,
                after_in_child=self._after_fork_in_child,
            )

    def _before_fork(self) -> None:
        # A line another thread is halfway through would be in the child's copy of the
        # stream's buffer, and the stream's own lock held by a thread the child does not
        # have: wait for it. Bounded, so a stream stuck on a full pipe does not stop forks.
        self._held_for_fork = self.lock.acquire(timeout=FORK_WAIT_SECONDS)

    def _after_fork_in_parent(self) -> None:
        if self._held_for_fork:
            self._held_for_fork = False
            self.lock.release()

    def _after_fork_in_child(self) -> None:
        # The child's only thread is the one that forked: a lock held by any other thread
        # would never be released. Its counters start at zero (the parent's lines are not
        # its own), and captures belong to the process that opened them.
        self._held_for_fork = False
        self.lock = threading.RLock()
        self.count_lock = threading.RLock()
        self.configure_lock = threading.RLock()
        self.counters = Counters()
        self.sinks = []


def _is_binary(stream: object) -> bool:
    if isinstance(stream, io.TextIOBase):
        return False
    if isinstance(stream, io.RawIOBase | io.BufferedIOBase):
        return True
    return "b" in str(getattr(stream, "mode", ""))


def _write_rest(write: Callable[[memoryview], int | None], line: bytes, landed: int) -> None:
    # An unbuffered stream may take part of a line; a line must still land whole. A raw
    # write reports what it took, so a failure here knows how much of the line landed.
    view = memoryview(line)
    size = len(line)
    while landed < size:
        try:
            written = write(view[landed:])
        except Exception:
            raise Cut(landed) from None
        if not written:  # 0, or None: it would block
            raise Cut(landed)
        landed += written


def _binary_write(stream: Any) -> Write:
    """One ``write`` of the line's bytes, then ``flush``."""
    write, flush = stream.write, stream.flush
    if isinstance(stream, io.RawIOBase):

        def write_raw(line: bytes) -> None:
            try:
                written = write(line)
            except Exception:  # a raw write that raises took nothing
                raise Cut(0) from None
            if written != len(line):
                _write_rest(write, line, written or 0)
            try:
                flush()
            except Exception:
                raise FlushFailed from None

        return write_raw

    def write_buffered(line: bytes) -> None:
        try:
            write(line)
        except BlockingIOError as error:  # non-blocking: it says what it took
            _cut_by(error)
        try:
            flush()
        except Exception:
            raise FlushFailed from None

    return write_buffered


def _cut_by(error: BlockingIOError) -> NoReturn:
    """Raise ``Cut`` with what a buffered write took before it blocked, or ``error`` itself
    when it does not say."""
    landed = getattr(error, "characters_written", None)
    if type(landed) is not int:
        raise error
    raise Cut(landed) from None


def _utf8_buffer(stream: Any) -> Any:
    """The binary buffer under a UTF-8 ``TextIOWrapper`` (``sys.stdout``), else None.

    Through it the line goes out as orjson made it, with no decode and re-encode. Only
    for UTF-8 and ``\\n`` line ends, where the bytes are exactly those the text layer
    would write. One difference is not detectable: a stream opened
    with an explicit ``newline="\\r\\n"`` gets ``\\n``, a JSON line's own end.
    """
    # Exact types: a subclass may override ``write`` (a tee, a filter) and must see it.
    if type(stream) is not io.TextIOWrapper or os.linesep != "\n":
        return None
    buffer = stream.buffer
    if type(buffer) not in (io.BufferedWriter, io.FileIO):
        return None
    if codecs.lookup(stream.encoding).name != "utf-8":
        return None
    return buffer


def _text_write(stream: Any) -> Write:
    # Each strategy is one flat function: a nested call per line is measurable here.
    flush_text = stream.flush
    buffer = _utf8_buffer(stream)
    if buffer is None:
        write_text = stream.write

        def decode_and_write(line: bytes) -> None:
            write_text(line.decode())  # raises: how much it took is not known
            try:
                flush_text()
            except Exception:
                raise FlushFailed from None

        return decode_and_write

    # In both strategies below, flush_text() first: text the service printed earlier,
    # still held by the text layer, goes out before the line, in call order. When that
    # fails, none of the line was written.
    write, flush = buffer.write, buffer.flush
    if type(buffer) is io.FileIO:  # unbuffered stdout (python -u, PYTHONUNBUFFERED)

        def write_under_unbuffered_text(line: bytes) -> None:
            try:
                flush_text()
                written = write(line)
            except Exception:
                raise Cut(0) from None
            if written != len(line):
                _write_rest(write, line, written or 0)

        return write_under_unbuffered_text

    def write_under_text(line: bytes) -> None:
        try:
            flush_text()
        except Exception:
            raise Cut(0) from None
        try:
            write(line)
        except BlockingIOError as error:
            _cut_by(error)
        try:
            flush()
        except Exception:
            raise FlushFailed from None

    return write_under_text


def _unwritable(line: bytes) -> None:
    raise Cut(0)


def writer_for(stream: Any) -> Write:
    """How to write one line to ``stream``, chosen once per stream rather than per line.

    The returned callable writes the line with one ``write`` and flushes (structlog's
    PrintLogger flushes too: Cloud Run must get whole lines promptly). It raises ``Cut``
    when it knows how much of the line the stream took before failing, ``FlushFailed``
    when only the flush failed, and otherwise what the stream raised; the caller counts it.
    """
    try:
        binary = _is_binary(stream)
        write = _binary_write(stream) if binary else _text_write(stream)
        # Bytes that go to the descriptor as the stream would write them: a long line
        # may then bypass the stream (after its flush) and be written without blocking.
        direct = binary or _utf8_buffer(stream) is not None
        flush = stream.flush
    except Exception:  # an object whose attributes raise: its writes will fail, counted
        return _unwritable
    polled = _drain_poll(stream)
    if polled is None:
        return write
    fd, ready = polled
    long = long_lines(fd, ready) if direct else None
    return _when_ready(write, fd, ready, flush, long)


def _drain_poll(stream: Any) -> tuple[int, Callable[[int], list[tuple[int, int]]]] | None:
    """``poll`` for "the stream's descriptor can take a line now", when it can stall.

    Only pipes, sockets and terminals stop draining; a regular file or ``/dev/null``
    never does, and skips the system call. On a pipe, ready means room for at least
    ``PIPE_BUF`` bytes, so a line up to that size is then written whole without waiting.
    Returns the descriptor and its ``poll``.
    """
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
            return None
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
    except Exception:  # no descriptor (StringIO, capsys, a tee): nothing to poll
        return None
    return fd, poller.poll


def _when_ready(
    write: Write,
    fd: int,
    ready: Callable[[int], list[tuple[int, int]]],
    flush: Callable[[], object],
    long: LongLines | None,
) -> Write:
    def write_when_ready(line: bytes) -> None:
        if long is not None and len(line) > PIPE_BUF:
            # Too long for one atomic write: the stream's own buffers first (the service's
            # earlier output keeps its place), then the line, within the bound (``info``).
            try:
                flush()
            except Exception:
                raise Cut(0) from None
            raise NeedsTime(long, line)
        # A full pipe: say so before any byte is written. A non-blocking descriptor never
        # holds the thread; its write refuses at once, and says what it took (``Cut``).
        if not ready(0) and os.get_blocking(fd):
            raise Stalled(ready)
        write(line)

    return write_when_ready


def _wait_for_lock(shared: Shared) -> float | None:
    """Take the write lock, waiting while other threads' lines go out; None (not taken)
    once the write timeout passes with no line written: the holder is stuck on its stream.

    Returns what is left of the bound for this line's own wait on the stream. Many
    threads taking turns on a stream that drains are not a stall and wait their turn.
    """
    lock, timeout = shared.lock, shared.write_timeout
    while True:
        started = time.monotonic()
        seen = shared.lines_out
        if lock.acquire(True, max(timeout, 0.001)):  # 0: no busy loop on a busy lock
            return timeout - (time.monotonic() - started)
        if shared.lines_out == seen:
            return None


def _write_long(needs: NeedsTime, seconds: float) -> None:
    """Write a long line within ``seconds``: raises ``Stalled`` when none of it went out
    (counted as a timeout), ``Cut`` when only part did (a fragment, counted)."""
    try:
        needs.long.write(needs.line, max(0.0, seconds))
    except Unfinished as unfinished:
        if not unfinished.landed:
            raise Stalled(_never_ready) from None
        raise Cut(unfinished.landed) from None
    needs.whole()


def _never_ready(milliseconds: int) -> list[tuple[int, int]]:
    return []


def _count_timeout(shared: Shared, event: str) -> None:
    with shared.count_lock:
        bump(shared.counters.write_timeouts, event)


class _OnNewLine:
    """Stands in for a write strategy after a line was cut: the next line goes out after a
    newline, which ends the fragment, and then the strategy itself is back."""

    __slots__ = ("_owner", "write")

    def __init__(self, owner: LineWriter, write: Write) -> None:
        self._owner = owner
        self.write = write

    def __call__(self, line: bytes) -> None:
        try:
            self.write(b"\n" + line)
        except NeedsTime as needs:  # written by ``info``: back to the strategy once whole
            needs.whole = lambda: self._owner.use(self.write)
            raise
        except Cut as cut:
            if not cut.landed:  # not even the newline: the next line still needs it
                raise
            self._owner.use(self.write)
            raise Cut(cut.landed - 1) from None  # of the line itself, after the newline
        except FlushFailed:
            self._owner.use(self.write)
            raise
        self._owner.use(self.write)


class LineWriter:
    """The structlog "logger": its ``info`` takes a rendered line and its record."""

    def __init__(self, shared: Shared, stream: IO[Any] | None) -> None:
        self._shared = shared
        self._follows_stdout = stream is None
        self._last_stdout: object = None
        self._to_stdout: Write = _unwritable
        self._write: Write = self._write_stdout if stream is None else writer_for(stream)

    def _write_stdout(self, line: bytes) -> None:
        # Callers hold the lock. sys.stdout is looked up at each write, its strategy only
        # when it changed (pytest's capsys, a service's redirect_stdout).
        stream = sys.stdout
        if stream is not self._last_stdout:
            self._to_stdout = writer_for(stream)
            self._last_stdout = stream
        self._to_stdout(line)

    def use(self, write: Write) -> None:
        """Write to the current stream with ``write`` from now on."""
        if self._follows_stdout:
            self._to_stdout = write
        else:
            self._write = write

    def _start_on_new_line(self) -> None:
        # A fragment may be on the stream. Per stream: a new sys.stdout gets a new strategy.
        current = self._to_stdout if self._follows_stdout else self._write
        if not isinstance(current, _OnNewLine):
            self.use(_OnNewLine(self, current))

    def info(self, line: bytes, record: Record) -> Record | None:
        """Write ``line`` with one ``write`` (then ``flush``); count it; return ``record``.

        Returns None, having counted the failure, when the stream did not take the whole
        line. A line taken whole whose flush failed is counted as written too.
        """
        shared = self._shared
        event = record["event"]
        lock = shared.lock
        # acquire/try/finally rather than ``with``: the same guarantee, and ``with`` costs
        # two more calls on a path that runs for every line.
        left = None  # of the write timeout; None: all of it (read only when needed)
        if not lock.acquire(False):  # another thread is writing
            left = _wait_for_lock(shared)
            if left is None:
                _count_timeout(shared, event)
                return None
        try:
            counters = shared.counters
            if shared.sinks:
                for sink in shared.sinks:
                    sink.append(record)
            else:
                try:
                    try:
                        self._write(line)
                    except Stalled as stalled:
                        # Nothing of the line is out: wait what is left of the bound, once.
                        if left is None:
                            left = shared.write_timeout
                        if not stalled.ready(max(0, int(left * 1000))):
                            raise
                        self._write(line)
                    except NeedsTime as needs:
                        _write_long(needs, shared.write_timeout if left is None else left)
                except Stalled:
                    _count_timeout(shared, event)
                    return None
                except FlushFailed:  # the stream has the line: counted as written below
                    bump(counters.flush_failed, event)
                except Cut as cut:
                    if cut.landed:
                        bump(counters.partial_write, event)
                        self._start_on_new_line()
                    else:
                        bump(counters.write_failed, event)
                    return None
                except Exception:  # it did not say how much it took: maybe a fragment
                    bump(counters.write_failed, event)
                    self._start_on_new_line()
                    return None
            shared.lines_out += 1  # progress, for threads waiting on the lock
            try:  # an exact dict's += is cheaper than .get(): this runs for every line
                counters.emitted[event] += 1
            except KeyError:
                counters.emitted[event] = 1
            if "invalid_fields" in record or "unknown_fields" in record or event == REJECTED_EVENT:
                counters.note_extras(record)
        finally:
            lock.release()
        return record

    msg = info
