"""The check's two view stages side by side (``check/_beside.py``): a forked child does
the second, its answer or its exception comes back, and a child that dies or a process
with threads leaves the work to this process. Each case runs in its own single-threaded
interpreter, as ``agent-telemetry check`` does (pytest's own process may have threads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from agent_telemetry.check._beside import _usable_cores

pytestmark = pytest.mark.skipif(
    _usable_cores() < 2 or sys.platform == "win32", reason="forks only with two cores and fork"
)

PRELUDE = """
import json, os, threading
from agent_telemetry.check._beside import run_beside
here = os.getpid()
def first():
    return {"pid": os.getpid(), "value": 1}
"""


def _run(body: str) -> dict[str, object]:
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return answer


def test_the_second_runs_in_a_child_and_both_answers_come_back() -> None:
    answer = _run(
        """
        def second():
            return {"pid": os.getpid(), "value": [2, "two"]}
        mine, theirs = run_beside(first, second)
        print(json.dumps({"here": here, "mine": mine, "theirs": theirs}))
        """
    )
    assert answer["mine"] == {"pid": answer["here"], "value": 1}
    theirs = answer["theirs"]
    assert isinstance(theirs, dict)
    assert theirs["value"] == [2, "two"]
    assert theirs["pid"] != answer["here"]


def test_an_exception_in_the_child_is_raised_here_with_its_message() -> None:
    answer = _run(
        """
        def second():
            raise ValueError("the views cannot be generated")
        try:
            run_beside(first, second)
        except ValueError as exc:
            print(json.dumps({"raised": str(exc)}))
        """
    )
    assert answer == {"raised": "the views cannot be generated"}


def test_the_first_stages_exception_comes_first_and_no_child_is_left() -> None:
    answer = _run(
        """
        import multiprocessing
        def failing():
            raise KeyError("first")
        def second():
            return 2
        try:
            run_beside(failing, second)
        except KeyError as exc:
            left = len(multiprocessing.active_children())
            print(json.dumps({"raised": str(exc), "children": left}))
        """
    )
    assert answer == {"raised": "'first'", "children": 0}


def test_a_child_that_lingers_after_its_answer_is_killed_and_reaped() -> None:
    # The child answers, then its exit hangs (a finaliser of the forked process): after
    # 5 s it is killed, and reaped at once. A zombie left behind would be the next
    # os.wait() of whatever runs the check in-process (mutmut's runner crashed on one).
    answer = _run(
        """
        import time
        from multiprocessing import util
        def second():
            if os.getpid() != here:
                util.Finalize(None, time.sleep, args=(60,), exitpriority=0)
            return 2
        mine, theirs = run_beside(first, second)
        try:
            left = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            left = None
        print(json.dumps({"theirs": theirs, "left": left}))
        """
    )
    assert answer == {"theirs": 2, "left": None}


def test_a_child_that_dies_without_an_answer_leaves_its_work_to_this_process() -> None:
    answer = _run(
        """
        def second():
            if os.getpid() != here:
                os._exit(3)  # killed mid-stage: no answer
            return {"pid": os.getpid()}
        mine, theirs = run_beside(first, second)
        print(json.dumps({"here": here, "theirs": theirs}))
        """
    )
    assert answer["theirs"] == {"pid": answer["here"]}


def test_a_process_with_threads_is_not_forked() -> None:
    answer = _run(
        """
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
        def second():
            return {"pid": os.getpid()}
        mine, theirs = run_beside(first, second)
        stop.set()
        print(json.dumps({"here": here, "theirs": theirs}))
        """
    )
    assert answer["theirs"] == {"pid": answer["here"]}


def test_text_buffered_before_the_fork_is_written_once() -> None:
    code = PRELUDE + textwrap.dedent(
        """
        import sys
        sys.stdout.write("before")  # no newline: still in the buffer at the fork
        def second():
            return 2
        run_beside(first, second)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONUNBUFFERED": ""},
    )
    assert done.stdout == "before"
