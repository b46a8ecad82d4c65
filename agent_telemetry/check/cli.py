"""``agent-telemetry lock`` and ``agent-telemetry check``.

Registered on the main group in ``agent_telemetry/cli.py``. Everything heavier than
click is imported inside the commands: a model that breaks a definition rule makes
``import agent_telemetry.schema`` itself fail, and ``check`` must report that.
"""

from __future__ import annotations

from pathlib import Path

import click

DEFAULT_CONFIG = Path("telemetry.toml")


class UsageFailure(click.ClickException):
    """Exit 2: the command could not run as asked."""

    exit_code = 2


@click.command()
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=str(DEFAULT_CONFIG),
    show_default=True,
    help="Deployment config; its [[exceptions]] are the reviewed breaking changes.",
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
    help="Schema lock to check (default: the package's schema.lock.json).",
)
@click.option(
    "--sql-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The committed view SQL to check, as `views build --sql-dir` wrote it "
    "(default: the package's generated/ folder).",
)
@click.option(
    "--docs",
    "docs_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The committed data dictionary (default: docs/telemetry.md beside the config).",
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
    config: Path,
    against: str | None,
    fmt: str,
    lock_path: Path | None,
    sql_dir: Path | None,
    docs_path: Path | None,
    schema_only: bool,
) -> None:
    """Run every check CI needs: definition rules, schema lock, compatibility, views.

    A service repository checks its own deployment's views with ``--config``,
    ``--sql-dir`` and ``--docs`` (the same paths it gave ``views build``).

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
    help="Deployment config with [[exceptions]] (default: ./telemetry.toml if present).",
)
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write the lock (default: the package's schema.lock.json).",
)
@click.pass_context
def lock(ctx: click.Context, config: Path | None, lock_path: Path | None) -> None:
    """Write the schema lock from the models (refuses unreviewed breaking changes).

    Every registered version is locked: the current models and the retired ones
    (agent_telemetry/schema/retired.py). A breaking change to a locked version is
    written only when an [[exceptions]] entry in the config covers it.
    """
    from agent_telemetry.check._definition import load_models, load_versions
    from agent_telemetry.check._format import text_line

    models, failures = load_models()
    if models is None:
        for finding in failures:
            click.echo(text_line(finding), err=True)
        ctx.exit(1)
        return

    from agent_telemetry._files import read_text_or_none, write_text
    from agent_telemetry._text import clean
    from agent_telemetry.check._paths import display_path
    from agent_telemetry.check._schema_stages import compat_findings, known_events
    from agent_telemetry.config import ConfigError, load_config
    from agent_telemetry.schema.lock import (
        LOCK_PATH,
        LockFormatError,
        SchemaLock,
        build_lock,
        dump_lock,
        read_lock,
    )
    from agent_telemetry.schema.versions import registry_specs

    if config is None and DEFAULT_CONFIG.is_file():
        config = DEFAULT_CONFIG
    path = lock_path or LOCK_PATH
    try:
        committed = read_lock(path)
    except LockFormatError as exc:
        raise UsageFailure(f"{exc} (delete it to start a new lock)") from None
    versions = load_versions("agent_telemetry.schema", models)
    try:
        known = known_events(versions, committed)
        exceptions = () if config is None else load_config(config, known).exceptions
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    current = build_lock(registry_specs(versions))
    text = dump_lock(current)
    old_text = read_text_or_none(path)
    findings, classes = compat_findings(
        committed or SchemaLock(), current, exceptions, models, old_text, path, versions
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
    write_text(path, text)
    summary = ", ".join(f"{e} {c}" for e, c in classes.items() if c != "none") or "no changes"
    click.echo(f"wrote {clean(display_path(path))} ({summary})")
