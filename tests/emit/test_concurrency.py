"""Many threads, one stream: every line whole, none lost, none merged."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO

import pytest

from agent_telemetry.emit import configure, counters, reset_counters, reset_defaults, settings
from tests.emit.conftest import wait_or_kill

THREADS = 8
LINES_PER_THREAD = 10_000


class Pieces(io.TextIOBase):
    """A stream whose write is not atomic: each line goes out in two pieces, and other
    threads run between them (as with a pipe or socket writer). Only the emitter's write
    lock keeps lines whole here; a file's own write would hide its absence."""

    def __init__(self, target: IO[str]) -> None:
        self.target = target

    def write(self, text: str) -> int:
        half = len(text) // 2
        self.target.write(text[:half])
        time.sleep(0)  # lets another thread run mid-line
        self.target.write(text[half:])
        return len(text)

    def flush(self) -> None:
        self.target.flush()


def test_eight_threads_write_80000_whole_lines(tmp_path: Path) -> None:
    from agent_telemetry.emit import emit

    path = tmp_path / "telemetry.jsonl"
    previous = settings()
    start = threading.Barrier(THREADS)

    def worker(position: int) -> None:
        start.wait()
        for n in range(LINES_PER_THREAD):
            emit(
                "pipeline_run",
                lane="public",
                status="ok",
                queue_position=position,
                # n in two exact fields: the millisecond fields keep 3 significant digits.
                queue_wait_ms=n // 100,
                duration_ms=n // 100,
                model_calls=n % 100,
            )

    with path.open("w", encoding="utf-8") as file:
        reset_counters()
        # This stream always drains: no line may be dropped. The write timeout (the wait for
        # the write lock) is for a stalled stream; on a loaded machine eight threads can
        # wait that long for their turn (2 lines of 80,000 were dropped that way).
        configure(stream=Pieces(file), strict=False, write_timeout=60)
        try:
            threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            snapshot = counters()
        finally:
            reset_defaults()
            configure(stream=previous.stream, strict=previous.strict)
            reset_counters()

    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == THREADS * LINES_PER_THREAD
    per_thread: Counter[int] = Counter()
    seen: set[tuple[int, int, int]] = set()
    for line in lines:
        record = json.loads(line)
        assert record["event"] == "pipeline_run"
        assert record["queue_wait_ms"] == record["duration_ms"]
        per_thread[record["queue_position"]] += 1
        seen.add((record["queue_position"], record["queue_wait_ms"], record["model_calls"]))
    assert per_thread == dict.fromkeys(range(THREADS), LINES_PER_THREAD)
    assert len(seen) == THREADS * LINES_PER_THREAD
    assert snapshot.emitted == {"pipeline_run": THREADS * LINES_PER_THREAD}
    assert not snapshot.write_timeouts


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_while_the_lock_is_held_can_still_write(tmp_path: Path) -> None:
    from agent_telemetry.emit import emit
    from agent_telemetry.emit._config import SHARED

    path = tmp_path / "child.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        configure(stream=stream)
        try:
            with SHARED.lock:  # as if another thread were mid-write at fork time
                pid = os.fork()
                if pid == 0:  # the child: must not deadlock on the inherited lock
                    emit("chat_turn", tier="public", kind="text")
                    stream.flush()
                    os._exit(0)
            status = wait_or_kill(pid, seconds=20)
        finally:
            reset_defaults()
    assert status is not None, "the child deadlocked on the lock it inherited"
    assert os.waitstatus_to_exitcode(status) == 0
    assert json.loads(path.read_text())["event"] == "chat_turn"
