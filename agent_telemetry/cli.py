"""The ``agent-telemetry`` command line: a thin shell over the package.

Each command imports its subsystem lazily, so ``agent-telemetry events`` never pays
for sqlglot, duckdb or google-cloud-bigquery.
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from agent_telemetry import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agent-telemetry")
def main() -> None:
    """Anonymous, closed-set telemetry for rate-limited AI-agent pipelines."""


@main.command()
@click.option("--event", "only", metavar="NAME", help="Show one event only.")
def events(only: str | None) -> None:
    """Print the event catalogue: fields, types, allowed values or bounds."""
    from agent_telemetry.schema import EVENTS, event_spec

    if only is not None and only not in EVENTS:
        raise click.BadParameter(f"unknown event; known: {', '.join(EVENTS)}", param_hint="--event")
    console = Console()
    for name, model in EVENTS.items():
        if only is not None and name != only:
            continue
        spec = event_spec(model)
        table = Table(
            title=f"{spec.name} (schema_version {spec.schema_version})",
            caption=spec.description,
            title_justify="left",
            caption_justify="left",
        )
        for column in ("field", "type", "required", "values / bounds", "description"):
            table.add_column(column, overflow="fold")
        for field in spec.fields:
            table.add_row(
                field.name,
                field.kind,
                "yes" if field.required else "",
                field.domain,
                field.description,
            )
        console.print(table)


from agent_telemetry.demo._cli import demo  # noqa: E402
from agent_telemetry.views._cli import sink_schema_command, views  # noqa: E402
from agent_telemetry.views._warehouse_cli import check_logs_command, preview  # noqa: E402

main.add_command(views)
main.add_command(sink_schema_command)
main.add_command(preview)
main.add_command(check_logs_command)
main.add_command(demo)
