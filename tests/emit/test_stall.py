"""The write timeout holds for a line of any size (tests/emit/test_stalled_stream.py holds
it for lines the pipe takes in one atomic write).

A pipe takes a write of at most ``PIPE_BUF`` bytes (4,096 on Linux) whole or not at all;
a longer one blocks until the reader makes room. An 8 KiB line, from an event that passes
every rule, on a pipe nobody reads with 4-8 KiB free, blocked the service forever. Each
test runs the emit in its own thread and joins it with a deadline.
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
from agent_telemetry.schema import TelemetryEvent
from tests.emit.test_stalled_stream import SLACK, drain, within

BOUND = 0.1
FIELDS = 80
# One member, required: a field that carries no information (0 bits), so 80 of them stay
# within the capacity budget, and each takes a 32-character value into the line.
Member = enum.StrEnum("Member", {"LONG": "steady_" + "z" * 25})  # type: ignore[misc]


def _wide_event() -> type[TelemetryEvent]:
    """80 required enum fields with 64-character names: a line of about 8 KiB, within every
    rule."""
    names = [f"measure_{chr(97 + i // 26)}{chr(97 + i % 26)}_{'q' * 53}" for i in range(FIELDS)]
    namespace: dict[str, object] = {
        "__doc__": "A wide event: one line longer than an atomic pipe write.",
        "__module__": __name__,
        "__annotations__": dict.fromkeys(names, Member),
        "event_name": "wide_probe",
        "schema_version": 1,
    }
    for name in names:
        namespace[name] = Field(description="A wide event's field.")
    return type(TelemetryEvent)("WideProbe", (TelemetryEvent,), namespace)  # type: ignore[no-any-return]


WIDE = _wide_event()
WIDE_VALUES = dict.fromkeys(WIDE.model_fields, Member.LONG)


@pytest.fixture
def wide() -> Iterator[None]:
    reset_counters()
    configure(catalogue={"wide_probe": WIDE})
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
    return emit("wide_probe", **WIDE_VALUES)


def test_the_wide_line_is_longer_than_an_atomic_pipe_write(wide: None) -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, catalogue={"wide_probe": WIDE})
    try:
        assert _emit_wide() is not None
        line = drain(read)
    finally:
        stream.close()
        os.close(read)
        os.close(write)
    assert 8 * 1024 - 400 <= len(line) <= 8 * 1024 + 400, len(line)
    assert len(line) > select.PIPE_BUF
    assert json.loads(line)["event"] == "wide_probe"


@pytest.mark.parametrize("room", [4 * 1024, 6 * 1024, 8 * 1024 - 100])
@pytest.mark.parametrize("mode", ["wb", "w"], ids=["binary", "text"])
def test_an_8k_line_on_a_stalled_pipe_returns_within_the_bound_and_is_dropped_whole(
    wide: None, room: int, mode: str
) -> None:
    read, write = pipe_with_room(room)
    stream = os.fdopen(write, mode, buffering=0 if mode == "wb" else -1, closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={"wide_probe": WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().write_timeouts) == {"wide_probe": 1}
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
    assert [p["event"] for p in parsed if "event" in p] == ["wide_probe"]
    assert emitted == {"wide_probe": 1}


def test_an_8k_line_goes_out_whole_when_the_pipe_has_room(wide: None) -> None:
    read, write = pipe_with_room(24 * 1024)
    stream = os.fdopen(write, "w", closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={"wide_probe": WIDE})
    try:
        assert within(BOUND + SLACK, _emit_wide)[0] is not None
        seen = drain(read)
        emitted = dict(counters().emitted)
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    assert json.loads(seen.decode().splitlines()[-1])["event"] == "wide_probe"
    assert emitted == {"wide_probe": 1}


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
    read, write = pipe_with_sparse_pages(2)
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=BOUND, catalogue={"wide_probe": WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().partial_write) == {"wide_probe": 1}
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
    assert json.loads(lines[1])["event"] == "wide_probe"
    assert emitted == {"wide_probe": 1}


def test_a_begun_line_is_finished_while_the_reader_drains_within_the_bound(wide: None) -> None:
    read, write = pipe_with_sparse_pages(2)
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=1.0, catalogue={"wide_probe": WIDE})
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
    assert json.loads(lines[-1])["event"] == "wide_probe"


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
    configure(stream=stream, write_timeout=BOUND, catalogue={"wide_probe": WIDE})
    try:
        written, took = within(BOUND + SLACK, _emit_wide)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().write_timeouts) == {"wide_probe": 1}
    finally:
        reset_defaults()
        stream.close()
        ours.close()
        theirs.close()
