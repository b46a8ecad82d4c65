"""Edges of the output layer the other emitter tests leave open.

- Short writes, to the byte: a raw stream that takes part of a line, returns 0 or None
  (it would block) mid-line or on the first try, or takes the newline that ends an
  earlier fragment and then part of the line; a flush that fails right after such a
  newline; the same cut when the writer follows ``sys.stdout`` (and no newline for the
  next ``sys.stdout``). Real files and pipes under a UTF-8 text layer (``python -u``
  and buffered): a broken pipe, a full non-blocking pipe, a file at its size limit
  mid-line. A stream that is no io class is written bytes when its ``mode`` says so.
- A freshly built ``Shared`` (the process-wide state is otherwise built once, at import):
  its locks are re-entrant and exclude other threads, its counters and captures start
  empty, and its fork handlers are registered: a fork waits for a line in progress, the
  parent's other threads can still write after it, and the child starts with free locks,
  zero counters and no captures. ``_after_fork_in_child`` is also called here directly,
  as ``os.fork`` does in the child: what runs only in a forked child is not seen by
  tools that record which tests run which code (mutmut).
- A fork whose wait for the write lock is interrupted (a signal handler raising) must
  not release a lock it never took: nothing but the interrupt itself is reported.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.emit import _output, configure, counters, emit, reset_counters, reset_defaults
from agent_telemetry.emit._counters import TelemetryCounters
from agent_telemetry.emit._logger import TelemetryLogger, make_logger
from agent_telemetry.emit._output import Shared
from tests.emit.conftest import HalfThenWait, wait_or_kill

NOW = 1_767_225_600_000_000_000  # a fixed clock: lines are known to the byte


def clock() -> int:
    return NOW


@pytest.fixture(autouse=True)
def restore() -> Iterator[None]:
    reset_counters()
    yield
    reset_defaults()
    reset_counters()


class Scripted(io.RawIOBase):
    """An unbuffered stream whose writes follow a script, then take all they are given.

    A step is how many bytes the write takes (it returns that many), None (it takes
    nothing and returns None: it would block) or an exception to raise. ``flush_fails``:
    which flushes (1 = the first) raise.
    """

    def __init__(self, *script: int | Exception | None, flush_fails: tuple[int, ...] = ()) -> None:
        self.data = bytearray()
        self.script = list(script)
        self.flush_fails = flush_fails
        self.flushes = 0

    def writable(self) -> bool:
        return True

    def write(self, chunk: Any) -> int | None:
        given = bytes(memoryview(chunk))
        step = self.script.pop(0) if self.script else len(given)
        if isinstance(step, Exception):
            raise step
        if step is None:
            return None
        self.data += given[:step]
        return min(step, len(given))

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes in self.flush_fails:
            raise OSError(errno.EIO, "I/O error")


class Trickle(Scripted):
    """Takes at most 7 bytes per write; an empty write takes nothing and returns 0."""

    def write(self, chunk: Any) -> int:
        taken = bytes(memoryview(chunk))[:7]
        self.data += taken
        return len(taken)


def expected_lines() -> list[bytes]:
    """The three lines ``emit_three`` writes, each with its newline, from a stream that
    takes every write whole."""
    stream = Scripted()
    emit_three(stream)
    reset_counters()
    lines = bytes(stream.data).splitlines(keepends=True)
    assert len(lines) == 3
    return lines


def emit_three(stream: object) -> list[dict[str, Any] | None]:
    configure(stream=stream, clock=clock)  # type: ignore[arg-type]
    return [emit("chat_turn", tier="public", kind="text", duration_ms=n) for n in range(3)]


def test_a_line_taken_a_few_bytes_at_a_time_lands_whole_and_counts_as_written() -> None:
    first, second, third = expected_lines()
    stream = Trickle()
    assert None not in emit_three(stream)
    assert bytes(stream.data) == first + second + third  # no blank line, no extra write
    snapshot = counters()
    assert snapshot.emitted == {"chat_turn": 3}
    assert snapshot.partial_write == {}
    assert snapshot.write_failed == {}


@pytest.mark.parametrize("refusal", [0, None])
def test_a_stream_that_stops_taking_mid_line_leaves_a_fragment_ended_by_the_next_line(
    refusal: int | None,
) -> None:
    first, second, third = expected_lines()
    stream = Scripted(7, refusal)  # 7 bytes land, then it takes nothing
    assert emit_three(stream)[0] is None
    assert bytes(stream.data) == first[:7] + b"\n" + second + third
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 2}


@pytest.mark.parametrize("refusal", [0, None])
def test_a_first_write_that_takes_nothing_is_tried_again(refusal: int | None) -> None:
    lines = expected_lines()
    stream = Scripted(refusal)  # nothing on the first try, all of it on the next
    assert None not in emit_three(stream)
    assert bytes(stream.data) == b"".join(lines)
    assert counters().emitted == {"chat_turn": 3}
    assert counters().write_failed == {}


def test_a_line_cut_after_the_newline_that_ended_a_fragment_is_a_fragment_too() -> None:
    # Line 0: 7 bytes, cut. Line 1: its leading newline and 5 bytes of it, cut. Line 2
    # starts on a new line of its own.
    first, second, third = expected_lines()
    stream = Scripted(7, OSError(errno.EIO, "I/O error"), 6, OSError(errno.EIO, "I/O error"))
    assert emit_three(stream)[:2] == [None, None]
    assert bytes(stream.data) == first[:7] + b"\n" + second[:5] + b"\n" + third
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 2}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 1}


def test_a_flush_failing_after_the_newline_that_ended_a_fragment_spoils_no_later_line() -> None:
    first, second, third = expected_lines()
    stream = Scripted(7, OSError(errno.EIO, "I/O error"), flush_fails=(1,))
    first_record, *rest = emit_three(stream)
    assert first_record is None
    assert None not in rest  # line 1 is on the stream although its flush failed
    assert bytes(stream.data) == first[:7] + b"\n" + second + third
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.flush_failed == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 2}


def test_a_cut_on_sys_stdout_ends_the_fragment_and_later_lines_are_whole() -> None:
    first, second, third = expected_lines()
    reset_defaults()  # follows sys.stdout
    configure(clock=clock)
    stdout = Scripted(7, OSError(errno.EIO, "I/O error"))
    with contextlib.redirect_stdout(stdout):  # type: ignore[type-var]
        records = [emit("chat_turn", tier="public", kind="text", duration_ms=n) for n in range(3)]
    assert records[0] is None
    assert None not in records[1:]
    assert bytes(stdout.data) == first[:7] + b"\n" + second + third
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 2}


def test_a_cut_on_one_stdout_adds_no_newline_to_the_next_stdout() -> None:
    first, _, _ = expected_lines()
    reset_defaults()  # follows sys.stdout
    configure(clock=clock)
    cut, fresh = Scripted(7, OSError(errno.EIO, "I/O error")), Scripted()
    with contextlib.redirect_stdout(cut):  # type: ignore[type-var]
        assert emit("chat_turn", tier="public", kind="text", duration_ms=0) is None
    with contextlib.redirect_stdout(fresh):  # type: ignore[type-var]
        assert emit("chat_turn", tier="public", kind="text", duration_ms=0) is not None
    assert bytes(fresh.data) == first  # the fragment is on the other stream


# A fresh Shared, and loggers over it (what configure builds over the process's own).


def logger_over(shared: Shared, stream: object) -> TelemetryLogger:
    return make_logger(shared, stream, False, clock)  # type: ignore[arg-type]


def chat_turn(logger: TelemetryLogger, n: int = 0) -> dict[str, Any] | None:
    return logger.emit("chat_turn", {"tier": "public", "kind": "text", "duration_ms": n})


def taken_by_another_thread(lock: Any, within: float = 5.0) -> bool:
    """Whether another thread can take ``lock`` within ``within`` seconds (it gives it
    back at once)."""
    got: list[bool] = []

    def take() -> None:
        got.append(lock.acquire(timeout=within))
        if got[0]:
            lock.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join(10)
    return got == [True]


def hold(lock: Any) -> Callable[[], None]:
    """Another thread takes ``lock`` and keeps it; the returned call makes it let go."""
    held, release = threading.Event(), threading.Event()

    def keep() -> None:
        with lock:
            held.set()
            release.wait(30)

    thread = threading.Thread(target=keep)
    thread.start()
    assert held.wait(30)

    def let_go() -> None:
        release.set()
        thread.join(30)

    return let_go


def test_a_fresh_shared_state_has_working_locks_zero_counters_and_no_captures() -> None:
    shared = Shared()
    for lock in (shared.lock, shared.configure_lock):
        with lock, lock:  # re-entrant: the holder does not wait for itself
            assert not taken_by_another_thread(lock, within=0.1)
        assert taken_by_another_thread(lock)
    assert shared.counters.snapshot() == TelemetryCounters()
    assert shared.sinks == []
    stream = Scripted()
    logger = logger_over(shared, stream)
    assert chat_turn(logger) is not None
    captured: list[dict[str, Any]] = []
    shared.sinks.append(captured)  # what capture() does
    record = chat_turn(logger, 1)
    assert captured == [record]
    assert [json.loads(x)["duration_ms"] for x in bytes(stream.data).splitlines()] == [0]
    assert shared.counters.snapshot().emitted == {"chat_turn": 2}


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def fork_and_report(child: Callable[[], dict[str, Any]], report: Path) -> dict[str, Any]:
    """Fork; the child writes what ``child()`` returns to ``report`` as JSON and exits."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            report.write_text(json.dumps(child()))
            code = 0
        finally:
            os._exit(code)
    status = wait_or_kill(pid, seconds=20)
    assert status is not None, "the child hung"
    assert os.waitstatus_to_exitcode(status) == 0
    result: dict[str, Any] = json.loads(report.read_text())
    return result


@needs_fork
def test_a_fork_of_a_fresh_shared_state_gives_the_child_its_own(tmp_path: Path) -> None:
    shared = Shared()
    path = tmp_path / "lines.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        logger = logger_over(shared, stream)
        chat_turn(logger, 0)
        parent_capture: list[dict[str, Any]] = []
        shared.sinks.append(parent_capture)
        let_go = hold(shared.configure_lock)  # as if another thread were configuring

        def child() -> dict[str, Any]:
            start = shared.counters.snapshot().as_dict()["emitted"]
            configure_free = shared.configure_lock.acquire(timeout=5)
            written = chat_turn(logger, 1) is not None
            return {
                "start": start,
                "configure_free": configure_free,
                "written": written,
                "captured": len(parent_capture),
                "end": shared.counters.snapshot().as_dict()["emitted"],
            }

        try:
            result = fork_and_report(child, tmp_path / "child.json")
        finally:
            let_go()
        # The parent's other threads can still write (into its capture, still open).
        writer = threading.Thread(target=chat_turn, args=(logger, 2), daemon=True)
        writer.start()
        writer.join(5)
        assert not writer.is_alive(), "the parent kept the write lock after the fork"
    assert result == {
        "start": {},
        "configure_free": True,
        "written": True,
        "captured": 0,
        "end": {"chat_turn": 1},
    }
    assert [json.loads(x)["duration_ms"] for x in path.read_text().splitlines()] == [0, 1]
    assert [record["duration_ms"] for record in parent_capture] == [2]
    assert shared.counters.snapshot().emitted == {"chat_turn": 2}


@needs_fork
def test_a_fork_of_a_fresh_shared_state_waits_for_the_line_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_output, "FORK_WAIT_SECONDS", 20.0)  # ample, on a loaded machine
    stream = HalfThenWait()
    entered, finish = stream.entered, stream.finish
    logger = logger_over(Shared(), stream)

    def child() -> dict[str, Any]:
        finish.set()  # the child's own line does not wait
        chat_turn(logger, 1)
        return {"text": stream.getvalue()}

    writer = threading.Thread(target=chat_turn, args=(logger, 0))
    try:
        writer.start()
        assert entered.wait(30)
        threading.Timer(0.3, finish.set).start()  # the fork below waits for this
        result = fork_and_report(child, tmp_path / "child.json")
    finally:
        finish.set()
        writer.join(30)
    lines = result["text"].splitlines()
    assert [json.loads(x)["duration_ms"] for x in lines] == [0, 1]


class Interrupted(Exception):
    pass


@contextlib.contextmanager
def reported(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[type[BaseException]]]:
    """The types of exceptions reported as unraisable (a fork handler's, among them)."""
    reports: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: reports.append(args.exc_type))
    yield reports


def interrupted_fork(shared: Shared) -> None:
    """Fork while another thread holds ``shared.lock``; a signal handler raises in the
    fork's wait for it. The child exits at once."""

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    let_go = hold(shared.lock)
    try:
        main = threading.main_thread().ident
        assert main is not None
        timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGALRM))
        timer.start()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os._exit(0)
        timer.join(10)
        status = wait_or_kill(pid, seconds=20)
        assert status is not None
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        let_go()
        signal.signal(signal.SIGALRM, previous)


def plain_fork() -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0)
    status = wait_or_kill(pid, seconds=20)
    assert status is not None


@needs_fork
def test_an_interrupted_wait_for_the_lock_at_fork_releases_nothing_it_did_not_take(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_output, "FORK_WAIT_SECONDS", 10.0)  # the signal comes first
    shared = Shared()
    with reported(monkeypatch) as reports:
        interrupted_fork(shared)  # the first fork after the state was built
        plain_fork()  # takes the lock for the fork and gives it back
        interrupted_fork(shared)
    # Only the interrupts: no "cannot release un-acquired lock" from a fork handler.
    assert reports == [Interrupted, Interrupted]
    assert taken_by_another_thread(shared.lock)


def test_what_a_forked_child_starts_with(monkeypatch: pytest.MonkeyPatch) -> None:
    # What os.fork runs in the child, called here, in this process: the parent's other
    # threads hold both locks, a capture is open, a line was counted.
    shared = Shared()
    stream = Scripted()
    logger = logger_over(shared, stream)
    chat_turn(logger, 0)
    parent_capture: list[dict[str, Any]] = []
    shared.sinks.append(parent_capture)
    let_go_lock = hold(shared.lock)
    let_go_configure = hold(shared.configure_lock)
    try:
        shared._after_fork_in_child()
        assert shared.counters.snapshot().emitted == {}
        assert shared.sinks == []
        assert chat_turn(logger, 1) is not None  # the lock held by a thread gone is not
        for lock in (shared.lock, shared.configure_lock):
            with lock, lock:
                assert not taken_by_another_thread(lock, within=0.1)
            assert taken_by_another_thread(lock)
        captured: list[dict[str, Any]] = []
        shared.sinks.append(captured)
        record = chat_turn(logger, 2)
        assert captured == [record]
        assert parent_capture == []
        assert shared.counters.snapshot().emitted == {"chat_turn": 2}
        assert [json.loads(x)["duration_ms"] for x in bytes(stream.data).splitlines()] == [0, 1]
    finally:
        let_go_lock()
        let_go_configure()
    if hasattr(os, "fork"):
        monkeypatch.setattr(_output, "FORK_WAIT_SECONDS", 10.0)
        with reported(monkeypatch) as reports:
            interrupted_fork(shared)  # the first fork since: nothing taken to give back
        assert reports == [Interrupted]


# Unbuffered text stdout (python -u): a UTF-8 TextIOWrapper over a real io.FileIO.


def unbuffered_text(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w"), encoding="utf-8", write_through=True)


def read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            data += chunk
    return data


def test_an_unbuffered_text_stream_whose_reader_is_gone_took_nothing() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = unbuffered_text(write_end)
    try:
        assert emit_three(stream) == [None, None, None]  # broken pipe, every time
    finally:
        reset_defaults()
        stream.close()
    snapshot = counters()
    assert snapshot.write_failed == {"chat_turn": 3}
    assert snapshot.partial_write == {}


def test_an_unbuffered_text_stream_on_a_full_pipe_took_nothing_and_adds_no_newline() -> None:
    _, second, third = expected_lines()
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            filled += os.write(write_end, b"x" * 4096)
    stream = unbuffered_text(write_end)
    try:
        configure(stream=stream, clock=clock)
        assert emit("chat_turn", tier="public", kind="text", duration_ms=0) is None
        assert read_all(read_end) == b"x" * filled  # not a byte of the line
        assert emit("chat_turn", tier="public", kind="text", duration_ms=1) is not None
        assert emit("chat_turn", tier="public", kind="text", duration_ms=2) is not None
        assert read_all(read_end) == second + third  # no newline before them
    finally:
        reset_defaults()
        stream.close()
        os.close(read_end)
    snapshot = counters()
    assert snapshot.write_failed == {"chat_turn": 1}
    assert snapshot.partial_write == {}


@needs_fork
def test_an_unbuffered_text_file_that_hits_its_size_limit_mid_line_keeps_a_fragment(
    tmp_path: Path,
) -> None:
    # The kernel takes the part of the line that fits under RLIMIT_FSIZE, then refuses
    # the rest (EFBIG; Python ignores SIGXFSZ). In a child: the limit is per process.
    resource = pytest.importorskip("resource")
    first, _, _ = expected_lines()
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"x" * 1000)

    def child() -> dict[str, Any]:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        stream = unbuffered_text(os.open(path, os.O_WRONLY | os.O_APPEND))
        configure(stream=stream, clock=clock)
        reset_counters()
        resource.setrlimit(resource.RLIMIT_FSIZE, (1010, hard))
        try:
            written = emit("chat_turn", tier="public", kind="text", duration_ms=0)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        return {"written": written is not None, "counters": counters().as_dict()}

    try:
        result = fork_and_report(child, tmp_path / "child.json")
    finally:
        reset_defaults()
    assert result["written"] is False
    assert result["counters"]["partial_write"] == {"chat_turn": 1}
    assert result["counters"]["emitted"] == {}
    assert result["counters"]["write_failed"] == {}
    assert path.read_bytes() == b"x" * 1000 + first[:10]


class Duck:
    """Not an io class: a ``write`` and a ``flush``, and perhaps a ``mode``."""

    def __init__(self, mode: str | None = None) -> None:
        if mode is not None:
            self.mode = mode
        self.chunks: list[object] = []

    def write(self, data: object) -> int:
        self.chunks.append(data)
        return len(data)  # type: ignore[arg-type]

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    ("mode", "binary"), [("wb", True), ("ab+", True), ("w", False), (None, False)]
)
def test_a_stream_that_is_no_io_class_gets_bytes_when_its_mode_says_binary(
    mode: str | None, binary: bool
) -> None:
    first, _, _ = expected_lines()
    stream = Duck(mode)
    configure(stream=stream, clock=clock)  # type: ignore[arg-type]
    assert emit("chat_turn", tier="public", kind="text", duration_ms=0) is not None
    assert stream.chunks == [first if binary else first.decode()]


def test_a_buffered_text_stream_on_a_full_pipe_says_what_it_took() -> None:
    first, second, third = expected_lines()
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            filled += os.write(write_end, b"x" * 4096)
    buffered = io.BufferedWriter(io.FileIO(write_end, "w"), buffer_size=16)
    stream = io.TextIOWrapper(buffered, encoding="utf-8")
    try:
        configure(stream=stream, clock=clock)
        assert emit("chat_turn", tier="public", kind="text", duration_ms=0) is None
        assert read_all(read_end) == b"x" * filled
        assert emit("chat_turn", tier="public", kind="text", duration_ms=1) is not None
        assert emit("chat_turn", tier="public", kind="text", duration_ms=2) is not None
        got = read_all(read_end)
    finally:
        reset_defaults()
        with contextlib.suppress(OSError):
            stream.close()
        os.close(read_end)
    # The buffer took 16 bytes of line 0 before it would block: they are a fragment.
    assert got == first[:16] + b"\n" + second + third
    snapshot = counters()
    assert snapshot.partial_write == {"chat_turn": 1}
    assert snapshot.write_failed == {}
    assert snapshot.emitted == {"chat_turn": 2}
