"""``make demo``: a synthetic but realistic morning, end to end on the local warehouse.

A simulated service (lanes, an admin fan-out, users at their limits, a provider that
goes rate-limited and recovers, another that silently runs out of quota) emits through
the real emitter into a log file; the file loads into DuckDB; the generated views,
transpiled from the BigQuery SQL, answer the questions an operator asks. Deterministic:
a fixed seed and a simulated clock.

    from agent_telemetry.demo import run_demo
    result = run_demo("demo-out")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_telemetry._files import building, read_text, trusted_folder, writing
from agent_telemetry._text import clean, markup
from agent_telemetry.demo._report import Section, ask, flagged_lanes, render_sections
from agent_telemetry.demo._sim import Simulation, emitting_at
from agent_telemetry.demo._workload import START, run_workload

if TYPE_CHECKING:
    from rich.console import Console

    from agent_telemetry.warehouse import LoadReport, LogCheckReport

__all__ = ["DemoResult", "Section", "print_demo", "run_demo"]

# The workload seed `make demo` uses (`agent-telemetry demo --seed` changes it).
SEED = 20260509


@dataclass(frozen=True, slots=True)
class DemoResult:
    log: Path
    database: Path
    lines: int
    load: LoadReport
    check: LogCheckReport
    sections: list[Section]


def run_demo(out_dir: str | Path = "demo-out", *, seed: int = SEED) -> DemoResult:
    """Simulate, emit to ``out_dir/telemetry.jsonl``, load ``out_dir/warehouse.duckdb``."""
    from agent_telemetry.warehouse import Warehouse, check_logs, default_config

    out = Path(out_dir)
    log = out / "telemetry.jsonl"
    database = out / "warehouse.duckdb"
    below = trusted_folder(log, out)  # no link below the folder named, none as a file

    sim = Simulation(START)
    with writing(log, below) as stream, emitting_at(sim, stream):
        run_workload(sim, seed)
    lines = read_text(log).count("\n")

    with building(database, below) as made, Warehouse(made, config=default_config()) as wh:
        load = wh.load([log])
        wh.create_views()
        sections = ask(wh)
    return DemoResult(log, database, lines, load, check_logs([log]), sections)


def print_demo(result: DemoResult, console: Console) -> None:
    from rich.text import Text

    from agent_telemetry.warehouse import render_rare
    from agent_telemetry.warehouse.cli import explore_hint

    end = START.strftime("%Y-%m-%d %H:%M")
    console.print(
        f"[bold]agent-telemetry demo[/bold]: a simulated morning from {end} UTC, "
        f"{result.lines:,} lines through agent_telemetry.emit -> {markup(result.log)}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"loaded {result.load.loaded:,} telemetry rows into DuckDB ({markup(result.database)}); "
        "every answer below reads the generated views",
        highlight=False,
        soft_wrap=True,
    )
    render_sections(result.sections, console)
    render_rare(result.check.rare, console)
    console.print(
        "one admin works the admin lane this morning: chat_turn's rare lines are that "
        "admin's turns, and every admin-lane run is theirs whatever k says (lines, not "
        "people, are counted)",
        highlight=False,
    )
    console.print(flagged_lanes(result.sections), highlight=False)
    check = result.check
    verdict = "clean" if check.clean else f"{check.violations} line(s) with violations"
    console.print(
        Text(
            f"check-logs {clean(result.log)}: {verdict}; "
            f"explore: {clean(explore_hint(result.database))}"
        ),
        highlight=False,
        soft_wrap=True,
    )
