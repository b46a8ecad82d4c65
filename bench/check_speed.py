"""How long `agent-telemetry check` takes, as CI and pre-commit run it: a fresh process.

Run from the repository root:

    .venv/bin/python bench/check_speed.py                      # this checkout
    .venv/bin/python bench/check_speed.py --compare ../main    # and another, interleaved

Runs the `agent-telemetry check` subprocess and `check --schema-only` (the schema stages
alone: interpreter start-up, imports, models, lock, compatibility) RUNS times each and
prints the median wall and CPU times, their ratio to --schema-only and the load average
before and after. The target is a whole check under 3 s wall. With --compare, the other
checkout's check runs in turns with this one's (the same machine load for both) and the
speed-up is printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 5
TARGET_S = 3.0
ROOT = Path(__file__).resolve().parents[1]


def command(*args: str) -> list[str]:
    """The console script beside this interpreter (as CI calls it), else the same entry."""
    script = Path(sys.executable).parent / "agent-telemetry"
    if script.is_file():
        return [str(script), *args]
    return [sys.executable, "-c", "from agent_telemetry.cli import main; main()", *args]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def once(checkout: Path, *args: str) -> tuple[float, float]:
    """Wall and CPU time of one `agent-telemetry check` in ``checkout`` (its code, its files).

    CPU time (user + system of the process) barely moves with the machine's load; on an
    idle machine the wall time of this one-threaded command is about the same.
    """
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        command("check", *args), cwd=checkout, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"check failed in {checkout}:\n{done.stdout}{done.stderr}")
    return elapsed, _children_cpu() - cpu


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, help="another checkout (e.g. main) to time")
    parser.add_argument("--runs", type=int, default=RUNS)
    options = parser.parse_args()
    checkouts = {"this": ROOT}
    if options.compare is not None:
        checkouts["compare"] = options.compare.resolve()
    print(f"before: {load()}")
    whole: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
    schema: list[tuple[float, float]] = []
    once(ROOT, "--schema-only")  # warm the file cache and the bytecode
    for _ in range(options.runs):
        for name, checkout in checkouts.items():
            whole[name].append(once(checkout))
        schema.append(once(ROOT, "--schema-only"))
    print(f"after:  {load()}")

    def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)

    base_wall, base_cpu = medians(schema)
    print(f"median of {options.runs} runs      wall          cpu (user+sys)")
    rows = [("check --schema-only", schema)]
    rows += [(f"check ({name}: {checkouts[name].name})", runs) for name, runs in whole.items()]
    for label, runs in rows:
        wall, cpu = medians(runs)
        print(
            f"  {label:26} {wall:6.2f} s {wall / base_wall:5.1f}x"
            f"   {cpu:6.2f} s {cpu / base_cpu:5.1f}x"
        )
    this_wall, this_cpu = medians(whole["this"])
    verdict = "under" if this_wall < TARGET_S else "OVER"
    print(f"whole check: {this_wall:.2f} s wall, {verdict} the {TARGET_S:.0f} s target")
    if "compare" in whole:
        other_wall, other_cpu = medians(whole["compare"])
        print(
            f"speed-up over {checkouts['compare'].name}: {other_wall / this_wall:.1f}x wall, "
            f"{other_cpu / this_cpu:.1f}x cpu"
        )


if __name__ == "__main__":
    main()
