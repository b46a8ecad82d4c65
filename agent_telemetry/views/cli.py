"""``agent-telemetry views ...`` and ``agent-telemetry sink-schema``.

Heavy modules (sqlglot, jinja2) are imported inside the commands, not here: cli.py
imports this module for every command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_telemetry._text import clean
from agent_telemetry.views.cli_options import config_option

if TYPE_CHECKING:
    from agent_telemetry.project import Project


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
    help="Where the SQL goes (default: [views] dir of the config; without [catalogue], "
    "the package's generated/ folder, in a checkout of this repository only: an "
    "installed package is never written to).",
)
@click.option(
    "--docs",
    "docs_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Data dictionary path (default: [views] docs of the config, else "
    "docs/telemetry.md beside it).",
)
@click.option(
    "--all-layouts",
    is_flag=True,
    help="Render every layout, not only the configured ones ([views] layouts, else the "
    "source's own layout).",
)
def build_command(
    config_path: Path | None,
    check: bool,
    sql_dir: Path | None,
    docs_path: Path | None,
    all_layouts: bool,
) -> None:
    """Render the configured layouts' view SQL and the data dictionary from the models."""
    from agent_telemetry.config import LAYOUTS, ConfigError
    from agent_telemetry.project import resolve_project
    from agent_telemetry.schema.catalogue import CatalogueError
    from agent_telemetry.views._build import InstalledPackageError, build

    try:
        project = resolve_project(config_path)
        result = build(
            project,
            check,
            sql_dir=sql_dir,
            docs_path=docs_path,
            layouts=LAYOUTS if all_layouts else None,
        )
    except (ConfigError, CatalogueError, InstalledPackageError) as exc:
        raise click.ClickException(str(exc)) from None
    if check:
        if result.drifted:
            click.echo(result.diff, nl=False)
            rebuild = _rebuild_command(project, sql_dir, docs_path, all_layouts)
            click.echo(
                f"{len(result.drifted)} generated file(s) differ from the models; "
                f"run `{rebuild}` and commit the result.",
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


def _rebuild_command(
    project: Project, sql_dir: Path | None, docs_path: Path | None, all_layouts: bool
) -> str:
    """The ``views build`` command that rewrites exactly what ``--check`` compared."""
    command = "agent-telemetry views build" + project.command_flags()
    if sql_dir is not None:
        command += f" --sql-dir {_shown(sql_dir)}"
    if docs_path is not None:
        command += f" --docs {_shown(docs_path)}"
    return command + (" --all-layouts" if all_layouts else "")


@click.command("sink-schema")
@click.option(
    "--layout",
    type=click.Choice(["partitioned", "sharded"]),
    default="partitioned",
    show_default=True,
    help="Sink table layout (analytics reads _AllLogs, which has no table to create).",
)
@config_option
def sink_schema_command(layout: str, config_path: Path | None) -> None:
    """Print the BigQuery JSON schema to pre-create the sink table (of the configured
    catalogue's events; without a telemetry.toml, the package's own)."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import find_config, resolve_project
    from agent_telemetry.schema.catalogue import CatalogueError, default_catalogue
    from agent_telemetry.views._sink import sink_schema

    found = config_path or find_config(Path.cwd())
    try:
        catalogue = default_catalogue() if found is None else resolve_project(found).catalogue
    except (ConfigError, CatalogueError) as exc:
        raise click.ClickException(str(exc)) from None
    schema = sink_schema(layout, catalogue.version_specs())  # type: ignore[arg-type]
    click.echo(json.dumps(schema, indent=2))


@click.command("jsonschema")
@config_option
def jsonschema_command(config_path: Path | None) -> None:
    """Print the catalogue's JSON Schema (draft 2020-12): what a line of any event may be,
    for a service in any language to validate its lines against (of the configured
    catalogue's events; without a telemetry.toml, the package's own). `views build`
    commits the same document beside the views."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import find_config, resolve_project
    from agent_telemetry.schema.catalogue import CatalogueError, default_catalogue
    from agent_telemetry.views._jsonschema import render

    found = config_path or find_config(Path.cwd())
    try:
        catalogue = default_catalogue() if found is None else resolve_project(found).catalogue
    except (ConfigError, CatalogueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(render(catalogue.version_specs(), catalogue.module), nl=False)
