"""How long the CI check takes, stage group by stage group, as ratios.

Run: .venv/bin/python bench/check_speed.py  (from the repository root)

Prints the median wall time of the schema stages (definition, lock, compatibility), of
the whole check, and of `views build --check` alone, each run in-process after one
warm-up, and the ratio of each to the schema stages.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from agent_telemetry.check import run_check
from agent_telemetry.views import build

CONFIG = Path("telemetry.toml")
RUNS = 5


def median_seconds(work: Callable[[], object]) -> float:
    work()
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    schema = median_seconds(lambda: run_check(CONFIG, views=False))
    full = median_seconds(lambda: run_check(CONFIG))
    drift = median_seconds(lambda: build(CONFIG, check=True))
    print(f"schema stages          {schema:8.3f} s   1.0x")
    print(f"views build --check    {drift:8.3f} s {drift / schema:6.1f}x")
    print(f"whole check            {full:8.3f} s {full / schema:6.1f}x")


if __name__ == "__main__":
    main()
