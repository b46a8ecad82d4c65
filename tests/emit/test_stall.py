"""The write timeout holds for a line of any size (tests/emit/test_stalled_stream.py holds
it for lines the pipe takes in one atomic write).

A pipe takes a write of at most ``PIPE_BUF`` bytes (4,096 on Linux) whole or not at all;
a longer one blocks until the reader makes room. A line longer than that, from an event
that passes every rule, on a pipe nobody reads with less room than the line, blocked the
service forever. Each test runs the emit in its own thread and joins it with a deadline.

The longest line an event that passes every rule writes is about 6.5 KB (``WIDE``, below):
the capacity budget counts the whole line, 64 bits, and every field has a rejected state
(a one-member required enum still says 1 bit) and ``unknown_fields`` is a flag (1 bit), so
an event has at most 63 fields; with 64-character names and 32-character values that is
6,598 bytes. The writer takes a line of any length, so an 8 KiB one is held to the same
bound there (``LineWriter`` given the bytes directly).
"""

from __future__ import annotations

import enum
import json
import os
import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from pydantic import Field

from agent_telemetry.emit import configure, counters, emit, reset_counters, reset_defaults
from agent_telemetry.emit._output import LineWriter, Shared
from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.capacity import EVENT_BUDGET_BITS
from tests.emit.test_stalled_stream import SLACK, drain, within

BOUND = 0.1
# One bit each (one member, or rejected), and one for the unknown_fields flag: the budget
# holds no more fields.
FIELDS = EVENT_BUDGET_BITS - 1
# One member, required: a field that says as little as a field can (1 bit), and takes a
# 32-character value (the longest a member may be) into the line.
Member = enum.StrEnum("Member", {"LONG": "steady_" + "z" * 25})  # type: ignore[misc]
NAME = "wide_probe_" + "w" * 53  # an event name as long as the rules allow (64)


def _wide_event(fields: int = FIELDS) -> type[TelemetryEvent]:
    """63 required enum fields with 64-character names: the longest line any event that
    passes every rule writes."""
    names = [f"measure_{chr(97 + i // 26)}{chr(97 + i % 26)}_{'q' * 53}" for i in range(fields)]
    namespace: dict[str, object] = {
        "__doc__": "A wide event: one line longer than an atomic pipe write.",
        "__module__": __name__,
        "__qualname__": "WIDE",  # importable as module.qualname, as the emitter requires
        "__annotations__": dict.fromkeys(names, Member),
        "event_name": NAME,
        "schema_version": 999,
    }
    for name in names:
        namespace[name] = Field(description="A wide event's field.")
    return type(TelemetryEvent)("WideProbe", (TelemetryEvent,), namespace)  # type: ignore[no-any-return]


WIDE = _wide_event()
# An unknown key too: the flag's bytes are on the line.
WIDE_VALUES: dict[str, object] = {**dict.fromkeys(WIDE.model_fields, Member.LONG), "extra": 1}
WIDE_LINE = 6_598  # bytes, with its newline


@pytest.fixture
def wide() -> Iterator[None]:
    reset_counters()
    configure(catalogue={NAME: WIDE})
    try:
        yield
    finally:
        reset_defaults()
        reset_counters()


def pipe_with_room(room: int) -> tuple[int, int]:
    """A blocking pipe nobody reads holding whole junk lines, with about ``room`` bytes
    of its buffer free (by bytes: the kernel counts pages)."""
    read, write = os.pipe()
    size = _pipe_size(write)
    junk = b'{"junk":"' + b"j" * 88 + b'"}\n'  # 100 bytes, 40 to a page
    os.set_blocking(write, False)
    for _ in range((size - room) // len(junk)):
        os.write(write, junk)
    os.set_blocking(write, True)
    return read, write


def _pipe_size(fd: int) -> int:
    import fcntl

    return int(fcntl.fcntl(fd, 1032))  # F_GETPIPE_SZ


def _emit_wide() -> object:
    return emit(NAME, **WIDE_VALUES)


def test_no_event_that_passes_the_rules_has_one_more_field() -> None:
    with pytest.raises(SchemaRuleError, match="EVENT_CAPACITY"):
        _wide_event(FIELDS + 1)


def test_the_wide_line_is_longer_than_an_atomic_pipe_write(wide: None) -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, catalogue={NAME: WIDE})
    try:
        assert _emit_wide() is not None
        line = drain(read)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert len(line) == WIDE_LINE, len(line)
    assert len(line) > select.PIPE_BUF
    assert json.loads(line)["event"] == NAME


@pytest.mark.parametrize("room", [4 * 1024, 6 * 1024, WIDE_LINE - 100])
@pytest.mark.parametrize("mode", ["wb", "w"], ids=["binary", "text"])
def test_the_widest_line_on_a_stalled_pipe_returns_within_the_bound_and_is_dropped_whole(
    wide: None, room: int, mode: str
) -> None:
    read, write = pipe_with_room(room)
    stream = os.fdopen(write, mode, buffering=0 if mode == "wb" else -1, closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={NAME: WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().write_timeouts) == {NAME: 1}
        assert not counters().partial_write
        seen = drain(read)
        # Room again: the next line goes out whole.
        assert within(BOUND + SLACK, _emit_wide)[0] is not None
        seen += drain(read)
        emitted = dict(counters().emitted)  # read under the catalogue that names it
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    lines = seen.decode().splitlines()
    parsed = [json.loads(line) for line in lines]  # no partial line: every one is JSON
    assert [p["event"] for p in parsed if "event" in p] == [NAME]
    assert emitted == {NAME: 1}


def test_the_widest_line_goes_out_whole_when_the_pipe_has_room(wide: None) -> None:
    read, write = pipe_with_room(24 * 1024)
    stream = os.fdopen(write, "w", closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={NAME: WIDE})
    try:
        assert within(BOUND + SLACK, _emit_wide)[0] is not None
        seen = drain(read)
        emitted = dict(counters().emitted)
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    assert json.loads(seen.decode().splitlines()[-1])["event"] == NAME
    assert emitted == {NAME: 1}


def pipe_with_sparse_pages(free_pages: int) -> tuple[int, int]:
    """A blocking pipe nobody reads, ``free_pages`` pages free, whose used pages are half
    empty (200 and 4,080 byte writes alternate, and the kernel starts a page for each
    write that does not fit the last one): the byte count promises more room than there
    is, so a long line is begun and cannot finish."""
    read, write = os.pipe()
    pages = _pipe_size(write) // 4096
    os.set_blocking(write, False)
    for page in range(pages - free_pages):  # the last page written is a full one
        short = (pages - free_pages - page) % 2 == 0
        os.write(write, b"s" * 199 + b"\n" if short else b"f" * 4079 + b"\n")
    os.set_blocking(write, True)
    return read, write


def test_a_begun_line_the_reader_stops_taking_is_cut_within_the_bound_and_counted(
    wide: None,
) -> None:
    """The trade-off: the bound wins. The fragment is counted, and the next line starts
    on a new line, so a reader sees one truncated line, never two glued together."""
    read, write = pipe_with_sparse_pages(1)
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={NAME: WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().partial_write) == {NAME: 1}
        seen = drain(read)
        assert within(BOUND + SLACK, _emit_wide)[0] is not None
        seen += drain(read)
        emitted = dict(counters().emitted)
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    lines = [line for line in seen.decode().splitlines() if line and line[0] not in "sf"]
    assert len(lines) == 2
    with pytest.raises(json.JSONDecodeError):
        json.loads(lines[0])  # the fragment, alone on its line
    assert json.loads(lines[1])["event"] == NAME
    assert emitted == {NAME: 1}


def test_a_begun_line_is_finished_while_the_reader_drains_within_the_bound(wide: None) -> None:
    read, write = pipe_with_sparse_pages(1)
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=1.0, catalogue={NAME: WIDE})
    seen: list[bytes] = []

    def slow_reader() -> None:
        time.sleep(0.05)
        seen.append(os.read(read, 16 * 1024))

    reader = threading.Thread(target=slow_reader)
    reader.start()
    try:
        written, _ = within(1.0 + SLACK, _emit_wide)
        reader.join(5)
        seen.append(drain(read))
        assert written is not None
        assert not counters().partial_write
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    lines = b"".join(seen).decode().splitlines()
    assert json.loads(lines[-1])["event"] == NAME


def test_a_long_line_on_a_socket_nobody_reads_returns_within_the_bound(wide: None) -> None:
    """stdout as a socket (systemd's journal): the long line's write cannot block either."""
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    try:
        while True:
            ours.send(b"j" * 4095 + b"\n")
    except BlockingIOError:
        pass
    ours.setblocking(True)
    stream = os.fdopen(ours.fileno(), "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={NAME: WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().write_timeouts) == {NAME: 1}
    finally:
        reset_defaults()
        stream.close()
        ours.close()
        theirs.close()


# Longer than any event's line (WIDE_LINE): the writer's bound does not rest on the rules.
EIGHT_K_LINE = b'{"event":"long_line","pad":"' + b"p" * (8 * 1024 + 32) + b'"}\n'


@pytest.mark.parametrize("room", [4 * 1024, 6 * 1024, len(EIGHT_K_LINE) - 100])
@pytest.mark.parametrize("mode", ["wb", "w"], ids=["binary", "text"])
def test_an_8k_line_on_a_stalled_pipe_returns_within_the_bound_and_is_dropped_whole(
    room: int, mode: str
) -> None:
    assert len(EIGHT_K_LINE) > 8 * 1024
    shared = Shared()
    shared.write_timeout = BOUND
    read, write = pipe_with_room(room)
    stream = os.fdopen(write, mode, buffering=0 if mode == "wb" else -1, closefd=False)
    writer = LineWriter(shared, stream)

    def write_it() -> object:
        return writer.info(EIGHT_K_LINE, {"event": "long_line"})

    try:
        written, took = within(BOUND + SLACK, write_it)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(shared.counters.write_timeouts) == {"long_line": 1}
        assert not shared.counters.partial_write
        seen = drain(read)
        # Room again: the next line goes out whole.
        assert within(BOUND + SLACK, write_it)[0] is not None
        seen += drain(read)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert dict(shared.counters.emitted) == {"long_line": 1}
    lines = seen.splitlines(keepends=True)
    assert [json.loads(line) for line in lines]  # no partial line: every one is JSON
    assert [line for line in lines if not line.startswith(b'{"junk"')] == [EIGHT_K_LINE]
