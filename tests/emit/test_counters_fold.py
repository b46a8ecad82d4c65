"""Every per-event counter folds the events of a catalogue configured earlier under one
``unknown`` key, summed: a metrics exporter gets the catalogue's names and nothing else.

Each counter is made to count one line of two events by the stream (or the call) that
really causes it; then the service configures a catalogue that holds neither.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import IO, Any

import pytest

from agent_telemetry.emit import configure, counters, emit
from agent_telemetry.schema import ChatTurn
from tests.emit.conftest import emitting
from tests.emit.test_output import Scripted
from tests.emit.test_stalled_stream import drain, full_pipe

# Two events of the package's catalogue, with valid fields.
VALID: dict[str, dict[str, Any]] = {
    "pipeline_run": {"lane": "public", "status": "ok"},
    "pipeline_render": {"theme": "dark", "render_lane": "run"},
}


class FlushFails(io.StringIO):
    def flush(self) -> None:
        raise OSError(errno.EIO, "I/O error")


def closed() -> io.StringIO:
    stream = io.StringIO()
    stream.close()
    return stream


@contextmanager
def nobody_reads() -> Iterator[IO[bytes]]:
    """A pipe already full, and no wait: each line is dropped whole (write_timeouts)."""
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=0)
    try:
        yield stream
    finally:
        configure(stream=io.StringIO())
        stream.close()
        drain(read)
        os.close(read)
        os.close(write)


def streamed(make: Callable[[], Any]) -> Callable[[], AbstractContextManager[object]]:
    def use() -> AbstractContextManager[object]:
        configure(stream=make())
        return nullcontext()

    return use


NO_EXTRA: dict[str, dict[str, Any]] = {name: {} for name in VALID}

# counter -> (what sends the lines there, the fields each event's call adds)
CAUSES: dict[
    str, tuple[Callable[[], AbstractContextManager[object]], dict[str, dict[str, Any]]]
] = {
    "emitted": (nullcontext, NO_EXTRA),
    "invalid": (nullcontext, {"pipeline_run": {"attempts": -1}, "pipeline_render": {"passed": 2}}),
    "unknown": (nullcontext, {name: {"not_a_field": 1} for name in VALID}),
    "write_failed": (streamed(closed), NO_EXTRA),
    # Each line: 7 bytes land (the second's first is the newline ending the first), then EIO.
    "partial_write": (streamed(lambda: Scripted(7, OSError(), 7, OSError())), NO_EXTRA),
    "flush_failed": (streamed(FlushFails), NO_EXTRA),
    "write_timeouts": (nobody_reads, NO_EXTRA),
}


@pytest.mark.parametrize("counter", list(CAUSES))
def test_events_of_an_earlier_catalogue_are_summed_under_unknown(counter: str) -> None:
    cause, extra = CAUSES[counter]
    with emitting():
        with cause():
            for name, fields in VALID.items():
                emit(name, **fields, **extra[name])
        assert dict(getattr(counters(), counter)) == dict.fromkeys(VALID, 1)
        configure(catalogue={"chat_turn": ChatTurn})
        assert dict(getattr(counters(), counter)) == {"unknown": 2}
