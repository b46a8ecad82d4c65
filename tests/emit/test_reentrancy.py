"""Calls from inside a call: a signal handler, the stream's own write, a clock, a value.

A nested ``emit`` on the same thread is dropped and counted in ``reentrant_dropped``;
nothing deadlocks and no line lands inside another. What could hang runs in a
subprocess with a timeout (``run_python``).
"""

from __future__ import annotations

import io
import json
import signal
import textwrap

import pytest

from agent_telemetry.emit import counters, emit
from agent_telemetry.schema.capacity import round_significant
from tests.emit.conftest import lines, run_python

needs_itimer = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")

# The loop from the issue, as it was reported: it hung with a plain write lock.
SIGNAL_LOOP = textwrap.dedent(
    """
    import json, os, signal, time
    from agent_telemetry.emit import configure, counters, emit

    calls = 0

    def handler(*_):
        global calls
        calls += 1
        emit("pipeline_run", lane="public", status="failed")

    configure(stream=open(os.devnull, "w"))
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    start = time.perf_counter()
    for _ in range(2_000_000): emit("chat_turn", tier="public", kind="text")
    seconds = time.perf_counter() - start
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    print(json.dumps({"calls": calls, "seconds": seconds, **counters().as_dict()}))
    """
)


@needs_itimer
def test_emit_from_a_signal_handler_during_two_million_emits_finishes() -> None:
    result = run_python(SIGNAL_LOOP, timeout=600)
    assert result["emitted"]["chat_turn"] == 2_000_000
    # Each handler call either wrote its line (it landed between two emits) or was
    # dropped (it landed inside one).
    handled = result["emitted"].get("pipeline_run", 0) + result["reentrant_dropped"]
    assert handled == result["calls"]
    assert result["reentrant_dropped"] > 0
    assert result["write_failed"] == {}
    assert result["internal_errors"] == 0
    print(f"2,000,000 emits with SIGALRM every 0.5 ms: {result['seconds']:.1f} s")


# A text stream that writes each line in three pieces, with Python code between them,
# so a signal handler can run in the middle of a line.
PIECES = textwrap.dedent(
    """
    import io, json, signal
    from agent_telemetry.emit import configure, counters, emit

    class Pieces(io.TextIOBase):
        def __init__(self):
            self.parts = []
        def write(self, text):
            third = len(text) // 3
            for start in (0, third, 2 * third):
                end = start + third if start < 2 * third else len(text)
                self.parts.append(text[start:end])
            return len(text)

    calls = 0

    def handler(*_):
        global calls
        calls += 1
        emit("pipeline_run", lane="public", status="failed", attempts=calls % 3)

    stream = Pieces()
    configure(stream=stream)
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
    for n in range(100_000):
        emit("chat_turn", tier="public", kind="text", duration_ms=n)
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    print(json.dumps({"calls": calls, "text": "".join(stream.parts), **counters().as_dict()}))
    """
)


@needs_itimer
def test_a_signal_handler_line_never_lands_inside_another() -> None:
    result = run_python(PIECES, timeout=300)
    records = [json.loads(line) for line in result["text"].splitlines()]  # each one whole
    turns = [r["duration_ms"] for r in records if r["event"] == "chat_turn"]
    assert turns == [round_significant(n, 3) for n in range(100_000)]  # durations: 3 digits
    runs = sum(r["event"] == "pipeline_run" for r in records)
    assert runs == result["emitted"].get("pipeline_run", 0)
    assert runs + result["reentrant_dropped"] == result["calls"]
    assert result["reentrant_dropped"] > 0


# A stream whose write emits: the nested call is dropped, the line itself is written.
ECHO = textwrap.dedent(
    """
    import io, json
    from agent_telemetry.emit import configure, counters, emit

    class Echo(io.StringIO):
        def write(self, text):
            emit("pipeline_run", lane="public", status="ok")
            return super().write(text)

    stream = Echo()
    configure(stream=stream)
    written = [emit("chat_turn", tier="public", kind="text") is not None for _ in range(1000)]
    print(json.dumps({"written": sum(written), "text": stream.getvalue(), **counters().as_dict()}))
    """
)


def test_a_stream_whose_write_emits_finishes() -> None:
    result = run_python(ECHO, timeout=120)
    assert result["written"] == 1000
    assert [json.loads(x)["event"] for x in result["text"].splitlines()] == ["chat_turn"] * 1000
    assert result["emitted"] == {"chat_turn": 1000}
    assert result["reentrant_dropped"] == 1000


# A stream whose write calls every other entry point: none of them waits for itself.
BUSY_STREAM = textwrap.dedent(
    """
    import io, json
    from agent_telemetry.emit import (
        capture, configure, counters, emit, reset_counters, reset_defaults, settings
    )

    seen = []

    class Busy(io.StringIO):
        def write(self, text):
            seen.append(counters().emitted.get("chat_turn", 0))
            configure(stream=self)
            with capture(strict=False) as inner:
                seen.append(emit("chat_turn", tier="public", kind="text"))  # dropped
            seen.append(inner)
            settings()
            return super().write(text)

    stream = Busy()
    configure(stream=stream)
    for _ in range(500):
        emit("chat_turn", tier="public", kind="text")
    snapshot = counters().as_dict()
    reset_counters()
    reset_defaults()
    print(json.dumps({"seen": seen[:6], "text": stream.getvalue(), **snapshot}))
    """
)


def test_a_stream_whose_write_calls_counters_configure_and_capture_finishes() -> None:
    result = run_python(BUSY_STREAM, timeout=120)
    assert len(result["text"].splitlines()) == 500
    assert result["emitted"] == {"chat_turn": 500}
    assert result["reentrant_dropped"] == 500
    # Inside the write: the counters as they were before this line, the nested emit
    # dropped (so the capture opened there caught nothing).
    assert result["seen"] == [0, None, [], 1, None, []]


# A signal handler that calls every entry point, while the main thread calls them too:
# a handler can interrupt configure, capture or counters while they hold their lock.
SIGNAL_EVERYTHING = textwrap.dedent(
    """
    import io, json, signal
    from agent_telemetry.emit import (
        capture, configure, counters, emit, reset_counters, reset_defaults
    )

    stream = io.StringIO()
    calls = 0
    depth = 0

    def handler(*_):
        # Nested up to two deep (a signal inside the handler inside an emit); deeper
        # ones return at once, so a handler slower than the timer (a loaded machine,
        # traced code) cannot livelock the loop with handlers all the way down.
        global calls, depth
        if depth >= 2:
            return
        depth += 1
        try:
            calls += 1
            configure(stream=stream, strict=False)
            counters()
            with capture(strict=False):
                emit("pipeline_run", lane="public", status="ok")
            emit("pipeline_run", lane="public", status="failed")
        finally:
            depth -= 1

    configure(stream=stream)
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
    for n in range(20_000):
        configure(stream=stream, strict=False)
        with capture(strict=False):
            emit("chat_turn", tier="public", kind="text")
        counters()
        emit("chat_turn", tier="public", kind="action")
        if n % 1000 == 0:
            reset_defaults()
            configure(stream=stream)
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    for line in stream.getvalue().splitlines():
        json.loads(line)
    print(json.dumps({"calls": calls}))
    """
)


@needs_itimer
def test_a_signal_handler_may_call_every_entry_point() -> None:
    assert run_python(SIGNAL_EVERYTHING, timeout=300)["calls"] > 0


# A clock that emits: without the guard every nested emit calls the clock again, and
# the rejections written on the way down call it too, so this would not finish.
CLOCK = textwrap.dedent(
    """
    import io, json, time
    from agent_telemetry.emit import configure, counters, emit

    def clock():
        emit("pipeline_run", lane="public", status="ok")
        return time.time_ns()

    stream = io.StringIO()
    configure(stream=stream, clock=clock)
    written = [emit("chat_turn", tier="public", kind="text") for _ in range(2)]
    configure(clock=None)  # the flag was per call: this thread emits normally again
    written.append(emit("pipeline_run", lane="public", status="ok"))
    events = [json.loads(line)["event"] for line in stream.getvalue().splitlines()]
    print(json.dumps({"written": [r is not None for r in written], "events": events,
                      **counters().as_dict()}))
    """
)


def test_a_clock_that_emits_gets_its_line_dropped() -> None:
    result = run_python(CLOCK, timeout=120)
    assert result["written"] == [True, True, True]
    assert result["events"] == ["chat_turn", "chat_turn", "pipeline_run"]
    assert result["reentrant_dropped"] == 2


class Noisy:
    """A value whose every conversion emits, as a careless ``__str__`` might."""

    def __init__(self) -> None:
        self.calls = 0

    def _emit(self) -> None:
        self.calls += 1
        emit("pipeline_run", lane="public", status="ok")

    def __str__(self) -> str:
        self._emit()
        return "public"

    def __repr__(self) -> str:
        self._emit()
        return "Noisy()"

    def __hash__(self) -> int:
        self._emit()
        return 0

    def __eq__(self, other: object) -> bool:
        self._emit()
        return False


def test_a_value_that_emits_gets_its_lines_dropped(lenient: io.StringIO) -> None:
    noisy = Noisy()
    record = emit("chat_turn", tier=noisy, kind="text")
    assert record is not None
    assert record["invalid_fields"] == ["tier"]
    assert noisy.calls > 0
    assert counters().reentrant_dropped == noisy.calls
    assert [line["event"] for line in lines(lenient)] == ["chat_turn"]
