"""What the view pipeline costs, as ratios to rendering one layout (no timed assertions).

    .venv/bin/python bench/views_build.py

Prints the time of each step relative to `generate_views` for one layout, so a change that
makes the binding check or the drift check disproportionately slow shows up as a ratio.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from agent_telemetry.config import LAYOUTS, load_config
from agent_telemetry.schema import catalogue
from agent_telemetry.views import binding_violations, build, generate_views

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_config(ROOT / "telemetry.toml")


def best_of(runs: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times)


def bind_all() -> None:
    views = {v.name: v for v in generate_views(CONFIG, "partitioned")}
    for spec in catalogue():
        assert not binding_violations(views[spec.name].query, spec, "partitioned")


def main() -> None:
    base = best_of(3, lambda: generate_views(CONFIG, "partitioned"))
    steps = {
        "generate_views, one layout (5 views)": base,
        "generate_views, all layouts": best_of(
            3, lambda: [generate_views(CONFIG, layout) for layout in LAYOUTS]
        ),
        "generate + binding check, 4 event views": best_of(3, bind_all),
        "views build --check (3 layouts + docs)": best_of(
            3, lambda: build(ROOT / "telemetry.toml", check=True)
        ),
    }
    print(f"baseline: generate_views for one layout = {base * 1000:.0f} ms")
    for name, seconds in steps.items():
        print(f"{name:<42} {seconds / base:5.1f}x")


if __name__ == "__main__":
    main()
