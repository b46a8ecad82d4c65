"""The wrapped logger at the end of the chain: one line, one ``write``, under one lock.

It writes to the configured stream, or to ``sys.stdout`` as it is at the moment of the
write (so pytest's capsys and a service's own redirection keep working). While a
``capture()`` is active, records go to the capture lists instead of the stream.

A write that fails (closed stream, broken pipe, full disk, a stream that is not a
stream) is counted and swallowed: telemetry never takes the service down.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from agent_telemetry.emit._counters import Counters, bump
from agent_telemetry.emit._processors import Record
from agent_telemetry.schema.envelope import REJECTED_EVENT

Write = Callable[[bytes], object]


class Shared:
    """Process-wide state every writer shares, whatever ``configure`` does to the logger."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counters = Counters()
        self.sinks: list[list[Record]] = []
        if hasattr(os, "register_at_fork"):
            # A pre-forking server (gunicorn --preload) may fork while another thread
            # holds the lock; the child would then block on its first line forever.
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self) -> None:
        self.lock = threading.Lock()


def _is_binary(stream: object) -> bool:
    if isinstance(stream, io.TextIOBase):
        return False
    if isinstance(stream, io.RawIOBase | io.BufferedIOBase):
        return True
    return "b" in str(getattr(stream, "mode", ""))


def _write_rest(stream: io.RawIOBase, line: bytes, written: int | None) -> None:
    # An unbuffered stream may take part of a line; a line must still land whole.
    view = memoryview(line)[written or 0 :]
    while view:
        written = stream.write(view)
        if not written:
            raise OSError("stream accepted no bytes")
        view = view[written:]


def _binary_write(stream: Any) -> Write:
    """One ``write`` of the line's bytes, then ``flush``."""
    write, flush = stream.write, stream.flush
    if isinstance(stream, io.RawIOBase):

        def write_raw(line: bytes) -> None:
            written = write(line)
            if written != len(line):
                _write_rest(stream, line, written)
            flush()

        return write_raw

    def write_buffered(line: bytes) -> None:
        write(line)
        flush()

    return write_buffered


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
            write_text(line.decode())
            flush_text()

        return decode_and_write

    # In both strategies below, flush_text() first: text the service printed earlier,
    # still held by the text layer, goes out before the line, in call order.
    write, flush = buffer.write, buffer.flush
    if type(buffer) is io.FileIO:  # unbuffered stdout (python -u, PYTHONUNBUFFERED)

        def write_under_unbuffered_text(line: bytes) -> None:
            flush_text()
            written = write(line)
            if written != len(line):
                _write_rest(buffer, line, written)

        return write_under_unbuffered_text

    def write_under_text(line: bytes) -> None:
        flush_text()
        write(line)
        flush()

    return write_under_text


def _unwritable(line: bytes) -> None:
    raise OSError("not a stream")


def writer_for(stream: Any) -> Write:
    """How to write one line to ``stream``, chosen once per stream rather than per line.

    The returned callable writes the line with one ``write`` and flushes (structlog's
    PrintLogger flushes too: Cloud Run must get whole lines promptly). It raises what
    the stream raises; the caller counts that.
    """
    try:
        return _binary_write(stream) if _is_binary(stream) else _text_write(stream)
    except Exception:  # an object whose attributes raise: its writes will fail, counted
        return _unwritable


class LineWriter:
    """The structlog "logger": its ``info`` takes a rendered line and its record."""

    def __init__(self, shared: Shared, stream: IO[Any] | None) -> None:
        self._shared = shared
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

    def info(self, line: bytes, record: Record) -> Record | None:
        """Write ``line`` with one ``write`` (then ``flush``); count it; return ``record``.

        Returns None, having counted the failure, when the stream refused the line.
        """
        shared = self._shared
        event = record["event"]
        lock = shared.lock
        # acquire/try/finally rather than ``with``: the same guarantee, and ``with`` costs
        # two more calls on a path that runs for every line.
        lock.acquire()
        try:
            counters = shared.counters
            if shared.sinks:
                for sink in shared.sinks:
                    sink.append(record)
            else:
                try:
                    self._write(line)
                except Exception:
                    bump(counters.write_failed, event)
                    return None
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
