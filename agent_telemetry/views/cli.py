"""``agent-telemetry views ...`` and ``agent-telemetry sink-schema``.

Heavy modules (sqlglot, jinja2) are imported inside the commands, not here: cli.py
imports this module for every command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from agent_telemetry._text import clean
from agent_telemetry.views.cli_options import config_option


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when below it (as `lock` prints it)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


@click.group()
def views() -> None:
    """Generated BigQuery views: build the committed SQL, check it for drift."""


@views.command("build")
@config_option
@click.option(
    "--check", is_flag=True, help="Write nothing; print a diff and exit 1 if files drifted."
)
@click.option(
    "--sql-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the SQL goes (default: the package's generated/ folder, in a checkout "
    "of this repository only: an installed package is never written to).",
)
@click.option(
    "--docs",
    "docs_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Data dictionary path (default: docs/telemetry.md beside the config).",
)
def build_command(
    config_path: Path, check: bool, sql_dir: Path | None, docs_path: Path | None
) -> None:
    """Render every layout's view SQL and the data dictionary from the models."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.views._build import InstalledPackageError, build

    try:
        result = build(config_path, check, sql_dir=sql_dir, docs_path=docs_path)
    except (ConfigError, InstalledPackageError) as exc:
        raise click.ClickException(str(exc)) from None
    if check:
        if result.drifted:
            click.echo(result.diff, nl=False)
            click.echo(
                f"{len(result.drifted)} generated file(s) differ from the models; "
                "run `agent-telemetry views build` and commit the result.",
                err=True,
            )
            sys.exit(result.exit_code)
        click.echo("views are up to date")
        return
    for path in result.written:
        click.echo(f"wrote {clean(_shown(path))}")
    for path in result.removed:
        click.echo(f"removed {clean(_shown(path))}")
    if not result.written and not result.removed:
        click.echo("views are up to date")


@click.command("sink-schema")
@click.option(
    "--layout",
    type=click.Choice(["partitioned", "sharded"]),
    default="partitioned",
    show_default=True,
    help="Sink table layout (analytics reads _AllLogs, which has no table to create).",
)
def sink_schema_command(layout: str) -> None:
    """Print the BigQuery JSON schema to pre-create the sink table."""
    from agent_telemetry.views._sink import sink_schema

    click.echo(json.dumps(sink_schema(layout), indent=2))  # type: ignore[arg-type]
