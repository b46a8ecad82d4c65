"""Lenient ``emit`` at the recursion limit: nothing escapes, at any depth.

Near the limit every call inside ``emit`` may raise RecursionError, the emitter's own
error handling included. The test calls ``emit`` with the stack at every depth from
the limit minus 50 up to the limit. At the very top ``emit`` cannot even be entered:
the caller's call raises, before any of the emitter's code runs, and its traceback
holds no emitter frame. Anything else must stay inside.
"""

from __future__ import annotations

import io
import sys
import threading
from collections import Counter
from pathlib import Path
from types import TracebackType

from agent_telemetry.emit import counters, emit
from tests.emit.conftest import lines

EMITTER = str(Path(sys.modules["agent_telemetry.emit"].__file__ or "").parent)


def stack_depth() -> int:
    """Frames on the stack of the caller, the caller's own included."""
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    return depth


def through_the_emitter(traceback: TracebackType | None) -> bool:
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename.startswith(EMITTER):
            return True
        traceback = traceback.tb_next
    return False


def emit_at(remaining: int) -> str:
    """Recurse ``remaining`` more frames, then emit there; say what happened."""
    if remaining:
        return emit_at(remaining - 1)
    try:
        record = emit("pipeline_run", lane="public", status="ok", duration_ms=5)
    except RecursionError as error:
        return "escaped" if through_the_emitter(error.__traceback__) else "not entered"
    if record is None:
        return "nothing written"
    return "rejected" if record["event"] == "telemetry_rejected" else "written"


def deepest(depth: int) -> int:
    """How deep the stack can go from a caller at ``depth - 1`` (C calls count too)."""
    try:
        return deepest(depth + 1)
    except RecursionError:
        return depth


def emit_at_every_depth(descending: bool = False) -> Counter[str]:
    limit = sys.getrecursionlimit()
    here = stack_depth()  # emit_at(0), called from here, emits at depth here + 1
    # Frames of C calls count towards the limit too, so where calls start failing may be
    # below the limit: the range starts 50 below whichever comes first.
    top = min(limit, deepest(here + 1))
    depths = range(top - 50, limit + 1)
    outcomes: Counter[str] = Counter()
    for depth in reversed(depths) if descending else depths:
        try:
            outcomes[emit_at(depth - here - 1)] += 1
        except RecursionError:  # the recursion itself ran out before reaching ``depth``
            outcomes["not reached"] += 1
    return outcomes


def check(outcomes: Counter[str], buffer: io.StringIO) -> None:
    assert outcomes["escaped"] == 0, outcomes
    # The range covers the whole way from a normal line to a call that cannot start.
    assert outcomes["written"] > 0, outcomes
    assert outcomes["not entered"] + outcomes["not reached"] > 0, outcomes
    assert counters().internal_errors > 0, outcomes
    events = [line["event"] for line in lines(buffer)]  # every line written is whole
    assert events.count("pipeline_run") == outcomes["written"]
    assert events.count("telemetry_rejected") == outcomes["rejected"]


def test_nothing_escapes_emit_at_any_depth_up_to_the_recursion_limit(
    lenient: io.StringIO,
) -> None:
    check(emit_at_every_depth(), lenient)


def test_nothing_escapes_a_threads_first_emit_at_the_recursion_limit(
    lenient: io.StringIO,
) -> None:
    # A new thread, deepest first: its first emit (which creates its thread-local state)
    # is the one at the limit.
    outcomes: list[Counter[str]] = []
    thread = threading.Thread(target=lambda: outcomes.append(emit_at_every_depth(True)))
    thread.start()
    thread.join()
    check(outcomes[0], lenient)
