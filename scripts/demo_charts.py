"""The manual's pictures of the demo's morning: charts of the real report, drawn from the
demo's log by the same code as ``agent-telemetry report`` (``make diagrams`` runs it).

The demo is deterministic (fixed seed, simulated clock) and matplotlib's SVG is written
without a date and with a fixed hash salt, so a fresh drawing is byte for byte the
committed one; tests/report/test_demo_charts.py holds them equal.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PICTURES = REPO / "docs" / "img"
# Report chart key -> the picture it becomes.
CHARTS = {
    "provider_states": "demo-provider-states.svg",
    "queue_wait": "demo-queue-wait.svg",
}


def drawings(log: Path) -> dict[str, str]:
    """Picture name -> SVG text, for each chart in CHARTS, from ``log``."""
    from agent_telemetry.report._svg import render_svg
    from agent_telemetry.report.charts import chart_data
    from agent_telemetry.warehouse import Warehouse, default_config

    with Warehouse(config=default_config(REPO / "telemetry.toml")) as wh:
        wh.load([log])
        wh.create_views()
        data = {d.chart.key: d for d in chart_data(wh)}
    return {name: render_svg(data[key]) for key, name in CHARTS.items()}


def stale(log: Path) -> list[str]:
    """The committed pictures that differ from a fresh drawing of ``log``."""
    return [
        name
        for name, svg in drawings(log).items()
        if not (PICTURES / name).is_file() or (PICTURES / name).read_text("utf-8") != svg
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    from agent_telemetry.demo import run_demo

    with tempfile.TemporaryDirectory() as out:
        log = run_demo(out).log
        if args.check:
            for name in stale(log):
                print(f"docs/img/{name}: differs from the demo's report; run `make diagrams`")
            return 1 if stale(log) else 0
        for name, svg in drawings(log).items():
            (PICTURES / name).write_text(svg, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
