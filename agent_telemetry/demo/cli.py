"""``agent-telemetry demo``: the command ``make demo`` runs."""

from __future__ import annotations

from pathlib import Path

import click

from agent_telemetry.demo import SEED, print_demo, run_demo


@click.command()
@click.option(
    "--out",
    default="demo-out",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for telemetry.jsonl and warehouse.duckdb.",
)
@click.option("--seed", default=SEED, show_default=True, help="Workload seed.")
def demo(out: Path, seed: int) -> None:
    """Simulate a morning of a rate-limited agent service through the real emitter,
    load its log into DuckDB and answer an operator's questions from the views."""
    from rich.console import Console

    print_demo(run_demo(out, seed=seed), Console())
