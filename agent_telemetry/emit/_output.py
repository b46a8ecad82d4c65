"""The wrapped logger at the end of the chain: one line, one ``write``, under one lock.

It writes to the configured stream, or to ``sys.stdout`` as it is at the moment of the
write (so pytest's capsys and a service's own redirection keep working). While a
``capture()`` is active, records go to the capture lists instead of the stream.

A write that fails (closed stream, broken pipe, full disk, a stream that is not a
stream) is counted and swallowed: telemetry never takes the service down.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from typing import IO, Any

from agent_telemetry.emit._counters import Counters
from agent_telemetry.emit._processors import REJECTED_EVENT, Record


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


def _write_all(stream: io.RawIOBase, line: bytes) -> None:
    # Unbuffered binary streams may write part of a buffer; a line must land whole.
    view = memoryview(line)
    while view:
        written = stream.write(view)
        if not written:
            raise OSError("stream accepted no bytes")
        view = view[written:]


class LineWriter:
    """The structlog "logger": its ``info`` takes a rendered line and its record."""

    def __init__(self, shared: Shared, stream: IO[Any] | None) -> None:
        self._shared = shared
        self._stream = stream
        self._binary = _is_binary(stream) if stream is not None else False
        self._last_stdout: object = None

    def _stdout(self) -> Any:
        stream = sys.stdout
        if stream is not self._last_stdout:
            self._binary = _is_binary(stream)
            self._last_stdout = stream
        return stream

    def info(self, line: bytes, record: Record) -> Record | None:
        """Write ``line`` with one ``write`` (then ``flush``); count it; return ``record``.

        Returns None, having counted the failure, when the stream refused the line.
        """
        shared = self._shared
        counters = shared.counters
        event = record["event"]
        with shared.lock:
            if shared.sinks:
                for sink in shared.sinks:
                    sink.append(record)
            else:
                try:
                    stream = self._stream
                    if stream is None:
                        stream = self._stdout()
                    if not self._binary:
                        stream.write(line.decode())
                    elif isinstance(stream, io.RawIOBase):
                        _write_all(stream, line)
                    else:
                        stream.write(line)
                    stream.flush()
                except Exception:
                    counters.write_failed[event] += 1
                    return None
            counters.emitted[event] += 1
            if "invalid_fields" in record or "unknown_fields" in record or event == REJECTED_EVENT:
                counters.note_extras(record)
        return record

    msg = info
