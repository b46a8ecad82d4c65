"""A stream that stops draining (a full pipe nobody reads) never stalls the service.

Each test runs the call that could block in its own thread and joins it with a deadline,
so a regression fails here instead of hanging the suite.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, cast

import pytest

from agent_telemetry.emit import configure, counters, emit, reset_counters, reset_defaults
from agent_telemetry.emit._output import WRITE_TIMEOUT_SECONDS
from tests.emit.conftest import HalfThenWait, run_python

BOUND = 0.1  # a short write timeout, configured explicitly
# Generous: the machine is shared; what matters is "bounded", not "fast".
SLACK = 1.5


def within(seconds: float, call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()``'s result and elapsed time; fails if it has not returned after ``seconds``."""
    box: list[Any] = []
    started = time.monotonic()
    thread = threading.Thread(target=lambda: box.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    elapsed = time.monotonic() - started
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    return box[0], elapsed


def full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full of whole junk lines; the write end is blocking again."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    junk = b'{"junk":1}\n'
    try:
        while True:
            os.write(write, junk)
    except BlockingIOError:
        pass
    os.set_blocking(write, True)
    return read, write


def drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except BlockingIOError:
        pass
    os.set_blocking(fd, True)
    return b"".join(chunks)


class StuckOnPipe(io.RawIOBase):
    """A stream with no descriptor of its own whose write blocks on a full pipe: the
    emitter cannot poll it, so the thread writing to it is stuck until the pipe drains."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.entered = threading.Event()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.entered.set()
        return os.write(self.fd, bytes(data))


@pytest.fixture
def fresh() -> Iterator[None]:
    reset_counters()
    try:
        yield
    finally:
        reset_defaults()
        reset_counters()


def run(lane: str = "public") -> Any:
    return emit("pipeline_run", lane=lane, status="ok")


def test_emit_and_counters_return_within_the_bound_while_another_thread_is_stuck_writing(
    fresh: None,
) -> None:
    read, write = full_pipe()
    stuck = StuckOnPipe(write)
    configure(stream=cast(IO[Any], stuck), write_timeout=BOUND)
    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    try:
        assert stuck.entered.wait(5), "the first emit never reached the stream"
        written, took = within(BOUND + SLACK, lambda: run("admin"))
        assert written is None
        snapshot, snapshot_took = within(SLACK, counters)
        assert dict(snapshot.write_timeouts) == {"pipeline_run": 1}
        assert snapshot_took < BOUND + SLACK
        assert took >= BOUND * 0.9
    finally:
        drain(read)  # the stuck writer finishes its line
        writer.join(5)
        drain(read)
        os.close(read)
        os.close(write)
    assert not writer.is_alive()
    assert counters().emitted == {"pipeline_run": 1}


@pytest.mark.parametrize("mode", ["wb", "w"], ids=["binary", "text"])
def test_a_full_pipe_drops_the_line_whole_and_the_next_emit_tries_again(
    fresh: None, mode: str
) -> None:
    read, write = full_pipe()
    stream = os.fdopen(write, mode, buffering=0 if mode == "wb" else -1, closefd=False)
    configure(stream=stream, write_timeout=BOUND)
    try:
        written, took = within(BOUND + SLACK, run)
        assert written is None
        assert took >= BOUND * 0.9
        assert dict(counters().write_timeouts) == {"pipeline_run": 1}
        assert not counters().emitted
        before = drain(read)
        assert within(SLACK, run)[0] is not None  # room again: the next line goes out
        after = drain(read)
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)
    # Nothing of the dropped line is on the pipe: every line on it is whole JSON.
    text = (before + after).decode()
    assert text.endswith("\n")
    parsed = [json.loads(line) for line in text.splitlines()]
    assert [line["event"] for line in parsed if "event" in line] == ["pipeline_run"]
    assert counters().emitted == {"pipeline_run": 1}


def test_a_zero_timeout_never_waits(fresh: None) -> None:
    read, write = full_pipe()
    stream = os.fdopen(write, "wb", buffering=0, closefd=False)
    configure(stream=stream, write_timeout=0)
    try:
        written, took = within(SLACK, run)
        assert written is None
        assert took < BOUND
    finally:
        reset_defaults()
        stream.close()
        os.close(read)
        os.close(write)


def test_reset_counters_waits_no_longer_than_the_write_timeout_for_a_stuck_writer(
    fresh: None,
) -> None:
    stream = HalfThenWait()
    configure(stream=stream, write_timeout=BOUND)
    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    try:
        assert stream.entered.wait(5), "the emit never reached the stream"
        within(BOUND + SLACK, reset_counters)
    finally:
        stream.finish.set()
        writer.join(5)
    assert not writer.is_alive()


def test_reset_counters_lets_the_line_being_written_be_counted_first(fresh: None) -> None:
    # Reset in the middle of a write, the line would be counted after the reset: a
    # "since reset" figure with a line written before it.
    stream = HalfThenWait()
    configure(stream=stream, write_timeout=30)
    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    resetter = threading.Thread(target=reset_counters, daemon=True)
    try:
        assert stream.entered.wait(5), "the emit never reached the stream"
        resetter.start()
        resetter.join(0.5)  # room for a reset that does not wait to happen now
    finally:
        stream.finish.set()
        writer.join(5)
        resetter.join(5)
    assert not writer.is_alive()
    assert not resetter.is_alive()
    assert json.loads(stream.getvalue())["event"] == "pipeline_run"
    assert counters().emitted == {}


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan")])
def test_a_write_timeout_must_be_finite_and_not_negative(fresh: None, bad: float) -> None:
    message = r"^write_timeout must be a finite number of seconds >= 0$"
    with pytest.raises(ValueError, match=message):
        configure(write_timeout=bad)


def test_a_service_whose_stdout_nobody_reads_still_exits_promptly() -> None:
    """The child fills its own stdout pipe (the parent never reads it), emits, and exits:
    nothing of the emitter's is left to flush, so exit does not wait for a reader."""
    code = """
import json, os, subprocess, sys, time
child = r'''
import os, sys, json, time
os.set_blocking(1, False)
try:
    while True:
        os.write(1, b"x" * 4096)
except BlockingIOError:
    pass
os.set_blocking(1, True)
from agent_telemetry.emit import counters, emit
started = time.monotonic()
for _ in range(5):
    emit("pipeline_run", lane="public", status="ok")
took = time.monotonic() - started
sys.stderr.write(json.dumps({"took": took, "timeouts": dict(counters().write_timeouts)}))
sys.stderr.flush()
'''
process = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
started = time.monotonic()
while process.poll() is None and time.monotonic() - started < 20:
    time.sleep(0.05)
exited = process.poll() is not None
if not exited:
    process.kill()
process.wait()
err = process.stderr.read().decode()
print(json.dumps({"exited": exited, "err": err}))
"""
    result = run_python(code, timeout=60)
    assert result["exited"], "the service hung at exit on a stdout nobody reads"
    report = json.loads(result["err"])
    assert report["timeouts"] == {"pipeline_run": 5}
    assert report["took"] < 5 * (WRITE_TIMEOUT_SECONDS + SLACK)  # the default bound
