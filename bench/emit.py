"""Cost per line of the emitter against a default structlog JSON logger and json.dumps.

    .venv/bin/python bench/emit.py [--rounds N] [--batch N] [--clock thread|wall]

All in one process, the same pipeline_run fields, each line written (and flushed,
as structlog's PrintLogger does) to the same /dev/null text stream. The indented rows
time, alone, the parts of emit it cannot skip: validating (with the validator emit's
hot path uses, built from the model's schemas), rendering with orjson, one write and
flush (as emit writes). Each round times a batch of calls per contender; contenders
alternate round by round; the figure is the median over rounds of ns per line.

Time is, by default, the benchmarking thread's CPU time (time.thread_time_ns, user
and kernel, so the write syscall counts). --clock wall measures elapsed time instead,
which on a shared machine also counts whatever else runs there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
import structlog

from agent_telemetry.emit import configure, emit, reset_defaults
from agent_telemetry.emit._output import writer_for
from agent_telemetry.emit._validate import plan_for
from agent_telemetry.schema import PipelineRun

FIELDS: dict[str, Any] = {
    "lane": "public",
    "status": "failed",
    "reason": "deadline",
    "error_class": "timeout",
    "queue_wait_ms": 1234,
    "queue_position": 3,
    "user_runs_today": "2_5",
    "user_tokens_today": "50_75",
    "attempts": 1,
    "duration_ms": 45_678,
    "model_calls": 12,
}


def contenders(sink: Any) -> dict[str, Callable[[], object]]:
    structlog_json = structlog.wrap_logger(
        structlog.PrintLogger(sink),
        processors=[
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.add_log_level,
            structlog.processors.JSONRenderer(),
        ],
    ).bind()  # resolve the lazy proxy once, as a module-level logger would
    emitted = emit("pipeline_run", **FIELDS)
    assert emitted is not None
    line = orjson.dumps(emitted, option=orjson.OPT_APPEND_NEWLINE).decode()
    record = json.loads(line)  # the line emit writes, as plain JSON values, for json.dumps
    invalid = {**FIELDS, "queue_wait_ms": -1}
    some_none = {**FIELDS, "reason": None, "error_class": None}
    validate = plan_for(PipelineRun).fast
    assert validate is not None
    write_flush = writer_for(sink)
    line_bytes = line.encode()

    return {
        "emit (validated)": lambda: emit("pipeline_run", **FIELDS),
        "structlog JSONRenderer": lambda: structlog_json.info("pipeline_run", **FIELDS),
        "json.dumps alone": lambda: json.dumps(record),
        # Where emit's time goes: parts it cannot skip, each alone.
        "  validation alone": lambda: validate(FIELDS),
        "  orjson.dumps alone": lambda: orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE),
        "  write+flush alone": lambda: write_flush(line_bytes),
        "emit, two fields None": lambda: emit("pipeline_run", **some_none),
        "emit, one invalid field": lambda: emit("pipeline_run", **invalid),
    }


CLOCKS: dict[str, Callable[[], int]] = {
    "thread": time.thread_time_ns,  # CPU time of this thread: what a line costs
    "wall": time.perf_counter_ns,  # elapsed time: also whatever else the machine runs
}


def measure(
    calls: dict[str, Callable[[], object]], rounds: int, batch: int, clock: Callable[[], int]
) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():  # warm up caches, plans and the timestamp
        for _ in range(batch):
            call()
    for _ in range(rounds):
        for name, call in calls.items():
            start = clock()
            for _ in range(batch):
                call()
            samples[name].append((clock() - start) / batch)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--clock", choices=list(CLOCKS), default="thread")
    args = parser.parse_args()
    with open(os.devnull, "w") as sink:
        configure(stream=sink)
        try:
            medians = measure(contenders(sink), args.rounds, args.batch, CLOCKS[args.clock])
        finally:
            reset_defaults()
    print(
        f"python {sys.version.split()[0]}, structlog {structlog.__version__}, "
        f"{args.rounds} rounds x {args.batch} lines, median {args.clock} ns per line"
    )
    for name, ns in medians.items():
        print(f"  {name:<28} {ns:>9,.0f} ns")
    emitted = medians["emit (validated)"]
    baseline = medians["structlog JSONRenderer"]
    dumps = medians["json.dumps alone"]
    floor = sum(medians[k] for k in medians if k.startswith("  "))
    print(f"  emit / structlog line        {emitted / baseline:>9.2f}x   (target <= 0.50x)")
    print(f"  emit / json.dumps            {emitted / dumps:>9.2f}x")
    print(f"  structlog / json.dumps       {baseline / dumps:>9.2f}x")
    print(f"  unskippable parts / structlog {floor / baseline:>8.2f}x")


if __name__ == "__main__":
    main()
