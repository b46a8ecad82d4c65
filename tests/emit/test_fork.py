"""Forked children (gunicorn --preload, multiprocessing): every lock usable, lines whole,
counters of their own. A child that hangs is killed and fails the test."""

from __future__ import annotations

import io
import json
import os
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from agent_telemetry.emit import (
    _output,
    capture,
    configure,
    counters,
    emit,
    reset_counters,
    reset_defaults,
)
from agent_telemetry.emit._config import SHARED
from tests.emit.conftest import HalfThenWait, run_python, wait_or_kill

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

CHILDREN = 20
CHILD_LINES = 200

# 4 threads emit and one loops on configure while the main thread forks 20
# children; each child checks its counters, uses every entry point, and writes lines to
# the stream it inherited (opened for appending, as several processes share it).
FORK_STORM = textwrap.dedent(
    """
    import json, os, sys, threading, time, warnings
    from agent_telemetry.emit import capture, configure, counters, emit, reset_defaults

    warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
    PATH, CHILDREN, CHILD_LINES = {path!r}, {children}, {child_lines}
    stream = open(PATH, "a", encoding="utf-8")
    configure(stream=stream)
    stop = threading.Event()

    def emitter(n):
        i = 0
        # i in two exact fields (durations keep 3 significant digits): unique up to 201,000.
        while not stop.is_set() and i < 201_000:
            emit(
                "chat_turn", tier="public", kind="text", pipeline_runs=n,
                duration_ms=i % 1000, model_calls=i // 1000,
            )
            i += 1

    def configurer():  # no capture here: it would take the emitters' lines
        while not stop.is_set():
            configure(stream=stream, strict=False)
            configure(strict=False)

    def child(number):
        start = counters().as_dict()
        configure(stream=stream, strict=False)
        with capture(strict=True) as captured:
            emit("pipeline_run", lane="public", status="ok", queue_position=number)
        reset_defaults()
        configure(stream=stream)
        for n in range(CHILD_LINES):
            emit("pipeline_run", lane="public", status="ok", queue_position=number, duration_ms=n)
        result = {{"start": start, "end": counters().as_dict(), "captured": len(captured)}}
        with open(f"{{PATH}}.{{number}}", "w") as out:
            json.dump(result, out)

    threads = [threading.Thread(target=emitter, args=(n,)) for n in range(4)]
    threads.append(threading.Thread(target=configurer))
    for thread in threads:
        thread.start()
    pids = []
    for number in range(CHILDREN):
        time.sleep(0.01)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                child(number)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    statuses = []
    deadline = time.monotonic() + 120
    for pid in pids:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                statuses.append(os.waitstatus_to_exitcode(status))
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                statuses.append("hung")
                break
            time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join()
    parent = counters().as_dict()
    stream.close()
    print(json.dumps({{"statuses": statuses, "parent": parent}}))
    """
)


def test_twenty_children_forked_while_threads_emit_and_configure(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    code = FORK_STORM.format(path=str(path), children=CHILDREN, child_lines=CHILD_LINES)
    result = run_python(code, timeout=300)
    assert result["statuses"] == [0] * CHILDREN
    records = [json.loads(line) for line in path.read_text().splitlines()]  # all whole
    # The parent's lines appear once each: no child wrote out a copy of a line that was
    # half-written when it was forked.
    parent = [
        (r["pipeline_runs"], r["duration_ms"], r["model_calls"])
        for r in records
        if r["event"] == "chat_turn"
    ]
    assert len(parent) == len(set(parent)) == result["parent"]["emitted"]["chat_turn"]
    assert set(result["parent"]["emitted"]) == {"chat_turn"}
    per_child = Counter(r["queue_position"] for r in records if r["event"] == "pipeline_run")
    assert per_child == dict.fromkeys(range(CHILDREN), CHILD_LINES)
    zero = {name: {} for name in ("emitted", "invalid", "unknown", "rejected")}
    zero |= {
        name: {} for name in ("write_failed", "partial_write", "flush_failed", "write_timeouts")
    }
    for number in range(CHILDREN):
        child = json.loads(Path(f"{path}.{number}").read_text())
        assert child["start"] == {**zero, "internal_errors": 0, "reentrant_dropped": 0}
        # Its lines, and the one it captured (counted as emitted, never written).
        assert child["end"]["emitted"] == {"pipeline_run": CHILD_LINES + 1}
        assert child["captured"] == 1


def fork_and_run(child: object) -> int | None:
    """Fork; the child runs ``child()`` and exits 0 if it returns True; its wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            code = 0 if child() else 2  # type: ignore[operator]
        finally:
            os._exit(code)
    return wait_or_kill(pid, seconds=30)


def exited_ok(status: int | None) -> bool:
    return status is not None and os.waitstatus_to_exitcode(status) == 0


def hold(lock: object, held: threading.Event, release: threading.Event) -> threading.Thread:
    """A thread that takes ``lock``, says so, and keeps it until ``release`` is set."""

    def keep() -> None:
        with lock:  # type: ignore[attr-defined]
            held.set()
            release.wait(30)

    thread = threading.Thread(target=keep)
    thread.start()
    assert held.wait(30)
    return thread


def test_a_child_forked_while_another_thread_configures_can_configure() -> None:
    held, release = threading.Event(), threading.Event()
    thread = hold(SHARED.configure_lock, held, release)  # as if inside configure()

    def child() -> bool:
        configure(stream=io.StringIO(), strict=False)
        with capture(strict=True):
            pass
        reset_defaults()
        return True

    try:
        status = fork_and_run(child)
    finally:
        release.set()
        thread.join()
    assert status is not None, "the child hung on the configure lock it inherited"
    assert exited_ok(status)


def test_a_fork_waits_for_the_line_another_thread_is_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_output, "FORK_WAIT_SECONDS", 20.0)  # ample, on a loaded machine
    stream = HalfThenWait()
    entered, finish = stream.entered, stream.finish
    configure(stream=stream)
    result = tmp_path / "child.txt"

    def child() -> bool:
        emit("chat_turn", tier="admin", kind="text")
        result.write_text(stream.getvalue())
        return True

    try:
        writer = threading.Thread(target=emit, args=("chat_turn",), kwargs={"tier": "public"})
        writer.start()
        assert entered.wait(30)
        threading.Timer(0.3, finish.set).start()  # fork below waits for this
        status = fork_and_run(child)
        writer.join()
    finally:
        finish.set()
        reset_defaults()
    assert exited_ok(status)
    first, second = (json.loads(line) for line in result.read_text().splitlines())
    assert (first["tier"], second["tier"]) == ("public", "admin")


def test_a_fork_does_not_wait_forever_for_a_stuck_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_output, "FORK_WAIT_SECONDS", 0.2)
    held, release = threading.Event(), threading.Event()
    thread = hold(SHARED.lock, held, release)  # as if a write were stuck on a full pipe
    buffer = io.StringIO()
    configure(stream=buffer)

    def child() -> bool:
        return emit("chat_turn", tier="public", kind="text") is not None

    started = time.monotonic()
    try:
        status = fork_and_run(child)
    finally:
        release.set()
        thread.join()
        reset_defaults()
    assert exited_ok(status)
    assert time.monotonic() - started < 20


def test_a_child_counts_from_zero_and_the_parent_keeps_its_counts() -> None:
    reset_counters()
    configure(stream=io.StringIO())
    try:
        emit("chat_turn", tier="public", kind="text")
        emit("chat_turn", tier="public", kind="text")

        def child() -> bool:
            before = counters().emitted
            emit("pipeline_run", lane="public", status="ok")
            return before == {} and counters().emitted == {"pipeline_run": 1}

        assert exited_ok(fork_and_run(child))
        assert counters().emitted == {"chat_turn": 2}
    finally:
        reset_defaults()
        reset_counters()


def test_a_capture_belongs_to_the_process_that_opened_it(tmp_path: Path) -> None:
    path = tmp_path / "child.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        configure(stream=stream)
        try:
            with capture() as records:

                def child() -> bool:
                    written = emit("pipeline_run", lane="public", status="ok")
                    stream.flush()
                    return written is not None and records == []

                assert exited_ok(fork_and_run(child))
                emit("chat_turn", tier="public", kind="text")
        finally:
            reset_defaults()
    assert [r["event"] for r in records] == ["chat_turn"]
    assert json.loads(path.read_text())["event"] == "pipeline_run"
