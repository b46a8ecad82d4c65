"""Lines a busy service loses to the write timeout, per timeout, on a starved CPU.

    .venv/bin/python bench/emit_contention.py [--threads 8] [--lines 10000] [--hogs N]

Eight threads emit into one stream that always drains (a file): no line should be lost.
The write timeout bounds how long a thread waits for the write lock with no line going
out; on a machine whose CPU is taken by other processes (``--hogs`` busy loops, two per
core by default) the thread holding the lock can be off the CPU for longer than that,
and the waiters then drop their lines as if the stream had stalled. The figure is lines
dropped per timeout, all in one run, the timeouts taking turns round by round. The
emitting process runs at niceness 19 (``--nice``) beside the hogs at 0, so the scheduler
keeps it off the CPU for long stretches, as a busy host does to a low-priority service.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import threading
import time

from agent_telemetry.emit import configure, counters, emit, reset_counters, reset_defaults

TIMEOUTS = (0.1, 0.25, 0.5, 1.0)


def _hog() -> None:
    while True:
        pass


def _round(threads: int, lines: int, timeout: float) -> int:
    with tempfile.TemporaryFile("w") as file:
        reset_counters()
        configure(stream=file, write_timeout=timeout)
        start = threading.Barrier(threads)

        def worker(position: int) -> None:
            start.wait()
            for n in range(lines):
                emit(
                    "pipeline_run",
                    lane="public",
                    status="ok",
                    queue_position=position,
                    model_calls=n % 100,
                )

        workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
        dropped = sum(counters().write_timeouts.values())
        reset_defaults()
    return dropped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--lines", type=int, default=10_000, help="per thread and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument(
        "--nice", type=int, default=19, help="this process's niceness, the hogs' stays 0"
    )
    args = parser.parse_args()
    hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    os.nice(args.nice)  # after the hogs started: they keep the CPU, the emitters starve
    dropped = dict.fromkeys(TIMEOUTS, 0)
    started = time.monotonic()
    try:
        for _ in range(args.rounds):
            for timeout in TIMEOUTS:
                dropped[timeout] += _round(args.threads, args.lines, timeout)
    finally:
        for hog in hogs:
            hog.terminate()
    total = args.rounds * args.threads * args.lines
    print(
        f"{args.threads} threads, {args.hogs} busy processes on {os.cpu_count()} cores, "
        f"{total:,} lines per timeout, {time.monotonic() - started:.0f} s"
    )
    for timeout, lost in dropped.items():
        print(f"  write_timeout {timeout:>5} s: {lost:>6,} lines dropped ({lost / total:.2e})")


if __name__ == "__main__":
    main()
