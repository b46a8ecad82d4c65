"""``agent-telemetry lock`` and ``agent-telemetry check``.

Registered on the main group in ``agent_telemetry/cli.py``. Everything heavier than
click is imported inside the commands: a model that breaks a definition rule makes
``import agent_telemetry.schema`` itself fail, and ``check`` must report that.
"""

from __future__ import annotations

from pathlib import Path

import click


class UsageFailure(click.ClickException):
    """Exit 2: the command could not run as asked."""

    exit_code = 2


_CONFIG_HELP = (
    "Deployment config: its [catalogue] names the models and lock, [views] the committed "
    "SQL and dictionary, [[exceptions]] the reviewed breaking changes (default: the "
    "nearest telemetry.toml in this folder or above it, up to the repository root)."
)


@click.command()
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help=_CONFIG_HELP,
)
@click.option(
    "--against",
    metavar="GIT_REF",
    help="Compare with the lock at this ref (a pull request's base) instead of the committed one.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="github prints ::error annotations.",
)
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Schema lock to check (default: [catalogue] lock of the config; without "
    "[catalogue], the package's schema.lock.json).",
)
@click.option(
    "--sql-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The committed view SQL to check (default: where `views build` writes it: "
    "[views] dir of the config).",
)
@click.option(
    "--docs",
    "docs_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The committed data dictionary (default: [views] docs of the config, else "
    "docs/telemetry.md beside it).",
)
@click.option(
    "--schema-only",
    is_flag=True,
    help="Run the definition, lock and compatibility stages only (well under a second; "
    "for a pre-commit hook). CI runs everything.",
)
@click.pass_context
def check(
    ctx: click.Context,
    config: Path | None,
    against: str | None,
    fmt: str,
    lock_path: Path | None,
    sql_dir: Path | None,
    docs_path: Path | None,
    schema_only: bool,
) -> None:
    """Run every check CI needs: definition rules, schema lock, compatibility, views.

    Everything comes from telemetry.toml: a service repository's [catalogue] makes
    every stage run on its own models, its own lock and its own git history.

    Exit 0 when clean, 1 on violations, 2 when the check cannot run (bad ref,
    missing config, unreadable lock).
    """
    from agent_telemetry.check import CheckUsageError, render, run_check

    try:
        report = run_check(
            config,
            against=against,
            lock_path=lock_path,
            views=not schema_only,
            sql_dir=sql_dir,
            docs_path=docs_path,
        )
    except CheckUsageError as exc:
        raise UsageFailure(str(exc)) from None
    click.echo(render(report, fmt), nl=False)
    ctx.exit(report.exit_code)


@click.command()
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help=_CONFIG_HELP,
)
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write the lock (default: [catalogue] lock of the config; without "
    "[catalogue], the package's schema.lock.json).",
)
@click.pass_context
def lock(ctx: click.Context, config: Path | None, lock_path: Path | None) -> None:
    """Write the schema lock from the models (refuses unreviewed breaking changes).

    Every registered version is locked: the current models and the retired ones
    (agent_telemetry/schema/retired.py). A breaking change to a locked version is
    written only when an [[exceptions]] entry in the config covers it.
    """
    from agent_telemetry.check._definition import definition_finding
    from agent_telemetry.check._format import text_line
    from agent_telemetry.errors import SchemaRuleError

    try:
        from agent_telemetry.config import ConfigError
        from agent_telemetry.project import resolve_project
        from agent_telemetry.schema.catalogue import CatalogueError

        project = resolve_project(config)
        catalogue = project.catalogue
    except SchemaRuleError as exc:
        click.echo(text_line(definition_finding(exc)), err=True)
        ctx.exit(1)
        return
    except (ConfigError, CatalogueError) as exc:
        raise UsageFailure(str(exc)) from None

    from agent_telemetry._files import read_text_or_none, trusted_folder, write_text
    from agent_telemetry._text import clean
    from agent_telemetry.check._paths import display_path
    from agent_telemetry.check._schema_stages import compat_findings, known_events
    from agent_telemetry.config import check_exceptions
    from agent_telemetry.schema.lock import (
        LockFormatError,
        SchemaLock,
        build_lock,
        dump_lock,
        read_lock,
    )
    from agent_telemetry.views import installed_package

    models, versions = catalogue.events, catalogue.versions
    path = lock_path or project.lock_path
    if installed_package(path):
        raise UsageFailure(
            "the lock would go into the installed agent_telemetry package (site-packages); "
            "name your own catalogue and lock in telemetry.toml ([catalogue]; "
            "`agent-telemetry init` writes it)"
        )
    try:
        committed = read_lock(path)
    except LockFormatError as exc:
        raise UsageFailure(f"{exc} (delete it to start a new lock)") from None
    try:
        known = known_events(versions, committed)
        exceptions = check_exceptions(project.config, known, str(project.config_path)).exceptions
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    current = build_lock(catalogue.version_specs())
    text = dump_lock(current)
    old_text = read_text_or_none(path)
    findings, classes = compat_findings(
        committed or SchemaLock(),
        current,
        exceptions,
        models,
        old_text,
        path,
        versions,
        catalogue.module,
    )
    breaking = [f for f in findings if f.severity == "error"]
    if breaking:
        for finding in breaking:
            click.echo(text_line(finding), err=True)
        click.echo(
            f"{clean(display_path(path))} not written: {len(breaking)} breaking change(s)",
            err=True,
        )
        ctx.exit(1)
        return
    if old_text == text:
        click.echo(f"{clean(display_path(path))} is up to date")
        return
    below = project.trusted_folder(path) if lock_path is None else trusted_folder(path)
    write_text(path, text, below)
    summary = ", ".join(f"{e} {c}" for e, c in classes.items() if c != "none") or "no changes"
    click.echo(f"wrote {clean(display_path(path))} ({summary})")


@click.command()
@click.option(
    "--package",
    metavar="NAME",
    default=None,
    help="The service's Python package, where the catalogue module goes (default: "
    "from the folder's name).",
)
@click.pass_context
def init(ctx: click.Context, package: str | None) -> None:
    """Set this repository up: telemetry.toml, a starter catalogue, its lock, views,
    data dictionary and the CI job (never overwrites a file; a second run changes nothing).
    """
    from agent_telemetry.check._init import InitError, plan, write

    root = Path.cwd()
    try:
        planned = plan(root, package)
    except InitError as exc:
        raise UsageFailure(str(exc)) from None
    for path in write(planned):
        click.echo(f"wrote {path.relative_to(root).as_posix()}")
    config = root / "telemetry.toml"
    ctx.invoke(lock, config=config, lock_path=None)

    from agent_telemetry.project import resolve_project
    from agent_telemetry.views import build

    result = build(resolve_project(config))
    for path in result.written:
        click.echo(f"wrote {path.relative_to(root).as_posix()}")
    click.echo(
        "next: edit the [source] and [target] of telemetry.toml, commit everything, and "
        "run `agent-telemetry check` (docs/ci.md has the pre-commit hook)"
    )
