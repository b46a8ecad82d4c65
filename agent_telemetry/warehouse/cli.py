"""Commands of the local warehouse: ``preview``, ``query`` and ``check-logs``.

DuckDB, sqlglot and the view generator load inside the commands, so other commands
never pay for them.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent_telemetry._files import building, check_target, trusted_folder
from agent_telemetry._text import clean, markup, rich_text
from agent_telemetry.views.cli_options import k_anonymity_option
from agent_telemetry.warehouse.results import FORMATS, ResultFormat

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_telemetry.config import DeploymentConfig
    from agent_telemetry.schema.catalogue import Catalogue
    from agent_telemetry.warehouse._loading.load import LoadReport
    from agent_telemetry.warehouse._reading.source import Limits

# DuckDB's file header (MainHeader): a uint64 checksum, then the magic bytes.
DUCKDB_MAGIC_OFFSET = 8
DUCKDB_MAGIC = b"DUCK"

LOGS = click.argument(
    "logs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)


def _limit_options(command: Callable[..., None]) -> Callable[..., None]:
    """--max-decompressed and --max-ratio: how far a gzip file may expand."""
    from agent_telemetry.warehouse._reading.source import DEFAULT_LIMITS

    command = click.option(
        "--max-ratio",
        type=click.IntRange(min=1),
        metavar="TIMES",
        default=DEFAULT_LIMITS.max_ratio,
        show_default=True,
        help="Stop a gzip file that expands more than this many times (past its first "
        f"{DEFAULT_LIMITS.ratio_floor >> 20} MiB): a gzip bomb.",
    )(command)
    return click.option(
        "--max-decompressed",
        type=click.IntRange(min=1),
        metavar="MIB",
        default=DEFAULT_LIMITS.max_bytes >> 20,
        show_default=True,
        help="Stop a gzip file past this many MiB decompressed.",
    )(command)


def _limits(max_decompressed: int, max_ratio: int) -> Limits:
    from agent_telemetry.warehouse._reading.source import Limits

    return Limits(max_bytes=max_decompressed << 20, max_ratio=max_ratio)


# Columns shown only when some file has such records, so the usual table stays narrow.
_OPTIONAL_COUNTS = (
    ("oversized", "oversized"),
    ("too deep", "too_deep"),
    ("undecodable", "undecodable"),
    ("duplicates", "duplicates"),
)


def render_load_report(report: LoadReport, console: Console) -> None:
    table = Table(title=f"loaded into {report.table}", title_justify="left", title_style="bold")
    table.add_column("file", overflow="fold")
    extra = [
        (header, name)
        for header, name in _OPTIONAL_COUNTS
        if any(getattr(loaded, name) for loaded in report.files)
    ]
    encodings = any(loaded.encoding != "utf-8" for loaded in report.files)
    if encodings:
        table.add_column("encoding")
    for header in ("records", "telemetry", "non-telemetry", "truncated"):
        table.add_column(header, justify="right")
    for header, _name in extra:
        table.add_column(header, justify="right")
    for loaded in report.files:
        table.add_row(
            rich_text(loaded.path),
            *([loaded.encoding] if encodings else []),
            f"{loaded.records:,}",
            f"{loaded.loaded:,}",
            f"{loaded.text + loaded.other_json:,}",
            f"{loaded.truncated:,}",
            *(f"{getattr(loaded, name):,}" for _header, name in extra),
        )
    console.print(table)
    print_load_notes(report, console)


def print_load_notes(report: LoadReport, console: Console) -> None:
    """What the load table's counts do not say: a gzip stream that breaks off, a file
    named twice or stopped at a limit, duplicates, conflicting copies, hostile records."""
    for loaded in report.files:
        if loaded.cut_at is not None:
            console.print(
                f"{markup(loaded.path)}: the gzip stream breaks off (cut short or corrupt) "
                f"at record {loaded.cut_at:,}; counted as truncated, every record before it "
                "is loaded",
                soft_wrap=True,
                highlight=False,
            )
    from agent_telemetry.warehouse._checking.render import print_input_warnings

    print_input_warnings(
        console, report.repeated, [(f.path, f.stopped or "") for f in report.stopped]
    )
    if report.duplicates:
        console.print(
            f"duplicates: {report.duplicates:,} LogEntries seen before (same insertId and "
            "timestamp); the views keep one row per entry",
            soft_wrap=True,
            highlight=False,
        )
    if report.conflicting:
        console.print(
            f"[red]conflicting[/red]: {report.conflicting:,} copies of LogEntries hold another "
            "payload than the copy the views keep (telemetry_quality.conflicting_duplicates)",
            soft_wrap=True,
            highlight=False,
        )
    if report.hostile:
        console.print(
            f"[yellow]warning[/yellow]: {report.hostile:,} record(s) oversized, too deep or "
            "undecodable were skipped",
            soft_wrap=True,
            highlight=False,
        )


def is_duckdb_file(path: Path) -> bool:
    """Whether ``path`` starts with DuckDB's main header: an 8-byte checksum, then "DUCK"."""
    try:
        with path.open("rb") as probe:
            head = probe.read(DUCKDB_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[DUCKDB_MAGIC_OFFSET:] == DUCKDB_MAGIC


def check_db_target(db: Path, logs: tuple[Path, ...]) -> None:
    """Refuse a --db path whose replacement would destroy data or that cannot be made."""
    check_target(db, trusted_folder(db))  # a link, in its place or above it: refused
    target = db.resolve()
    for log in logs:
        if log.resolve() == target:
            raise click.BadParameter(
                f"{db} is one of the LOGS; keep the database in another file", param_hint="--db"
            )
    if db.is_dir():
        raise click.BadParameter(f"{db} is a directory", param_hint="--db")
    if not target.parent.is_dir():
        raise click.BadParameter(
            f"directory {db.parent} does not exist; create it or choose another path",
            param_hint="--db",
        )
    if db.exists() and not is_duckdb_file(db):
        raise click.BadParameter(
            f"{db} exists and is not a DuckDB database, so preview will not replace it; "
            "choose another path",
            param_hint="--db",
        )


@click.command()
@LOGS
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the DuckDB database in this file (sink table and views) for your own queries.",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Deployment file (default: ./telemetry.toml if present).",
)
@_limit_options
def preview(
    logs: tuple[Path, ...],
    db: Path | None,
    config: Path | None,
    max_decompressed: int,
    max_ratio: int,
) -> None:
    """Load log files into a local DuckDB warehouse and summarise every view.

    LOGS are the emitter's JSON lines, Cloud Logging exports (LogEntry JSON, one per
    line or one array) or BigQuery read-backs of the sink table or of _AllLogs, gzipped
    or not, in UTF-8, UTF-16 or UTF-32 (with a byte-order mark). Other lines are skipped
    and counted. A file named twice (again, through a link, by overlapping globs) is
    read once, with a warning; a gzip file that expands past --max-decompressed or
    --max-ratio stops there, with an error line, and what it held before is loaded.
    Exit status 1, with a warning, when no telemetry line was found.
    """
    from agent_telemetry.errors import AgentTelemetryError
    from agent_telemetry.warehouse import LoadError, Warehouse
    from agent_telemetry.warehouse._loading.progress import RichLoadProgress, wants_bar
    from agent_telemetry.warehouse._preview import render_preview, summarize

    console = Console()
    limits = _limits(max_decompressed, max_ratio)
    try:
        deployment, catalogue = resolve_deployment(config)
    except AgentTelemetryError as error:
        raise click.ClickException(str(error)) from None
    if db is not None:
        check_db_target(db, logs)
    # A fresh warehouse each time (the sink holds exactly LOGS), built beside --db and
    # renamed over it only once everything worked: a failed run keeps the old database.
    with contextlib.ExitStack() as stack:
        made = None if db is None else stack.enter_context(building(db, trusted_folder(db)))
        with Warehouse(made, config=deployment, catalogue=catalogue) as wh:
            total = sum(path.stat().st_size for path in logs)
            err = Console(stderr=True)
            try:
                if wants_bar(err, total):
                    with RichLoadProgress(err, total) as progress:
                        report = wh.load(logs, progress=progress, limits=limits)
                else:
                    report = wh.load(logs, limits=limits)
            except LoadError as error:
                raise click.ClickException(str(error)) from None
            render_load_report(report, console)
            names = wh.create_views()
            render_preview(summarize(wh), console)
    if db is not None:
        console.print(
            Text(
                f"kept {clean(db)}: table {clean(report.table)}, views {', '.join(names)}\n"
                f"  e.g. {clean(explore_hint(db))}"
            ),
            soft_wrap=True,
            highlight=False,
        )
    if not report.loaded:
        exit_no_telemetry(console)


def exit_no_telemetry(console: Console) -> NoReturn:
    """The warning and exit status 1 of a command whose logs held no telemetry line
    (``preview``, ``report``)."""
    from agent_telemetry.warehouse._checking.render import NO_TELEMETRY

    console.print(NO_TELEMETRY)
    sys.exit(1)


EXPLORE_SQL = "SELECT lane, status, count(*) AS runs FROM pipeline_run GROUP BY ALL ORDER BY ALL"


def explore_hint(db: Path) -> str:
    """The command every "explore" hint prints: it needs nothing beyond this package."""
    return f'agent-telemetry query "{EXPLORE_SQL}" --db {shlex.quote(str(db))}'


class _QueryFailed(click.ClickException):
    exit_code = 2  # an error, not a finding


@click.command("query")
@click.argument("sql")
@click.argument("logs", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Query this DuckDB database (kept by `preview --db` or `demo`) instead of LOGS; "
    "opened read-only.",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="table folds to the terminal's width; csv, json and markdown are for files and pages.",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Deployment file for LOGS (default: ./telemetry.toml if present).",
)
def query_command(
    sql: str, logs: tuple[Path, ...], db: Path | None, output: ResultFormat, config: Path | None
) -> None:
    """Run SQL over the generated views (pipeline_run, chat_turn, pipeline_render,
    provider_status, telemetry_quality) on LOGS, loaded as preview loads them, or on a
    database kept by `preview --db`. DuckDB's SQL dialect. Exit status 2 on an error.
    """
    from agent_telemetry.errors import AgentTelemetryError
    from agent_telemetry.warehouse._query import QueryError, query_database, query_logs
    from agent_telemetry.warehouse._reading.source import LoadError
    from agent_telemetry.warehouse.results import print_table, to_csv, to_json, to_markdown

    if (db is None) == (not logs):
        raise click.UsageError("give either LOGS or --db FILE, not both and not neither")
    try:
        if db is not None:
            result = query_database(sql, db)
        else:
            deployment, catalogue = resolve_deployment(config)
            result = query_logs(sql, logs, config=deployment, catalogue=catalogue)
    except (QueryError, LoadError, AgentTelemetryError) as exc:  # also the catalogue's import
        raise _QueryFailed(str(exc)) from None
    if output == "table":
        print_table(result, Console())
    else:
        writer = {"csv": to_csv, "json": to_json, "markdown": to_markdown}[output]
        click.echo(writer(result), nl=False)


@click.command("check-logs")
@LOGS
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--strict-types",
    is_flag=True,
    help="Check a service's own output against the emitter's exact types and time format: "
    'numbers or booleans written as strings ("5", "true") and integers written as doubles '
    "(5.0) are violations, not coercions.",
)
@_limit_options
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Deployment file whose [catalogue] the lines are checked against (default: the "
    "nearest telemetry.toml, if any; else the package's own events).",
)
@click.option(
    "--coverage",
    "show_coverage",
    is_flag=True,
    help="Also report which events, fields and enum members of the catalogue no valid "
    "line showed (counts and the catalogue's own names only).",
)
@click.option(
    "--fail-under",
    type=click.FloatRange(0, 100),
    metavar="PCT",
    default=None,
    help="Exit 1 when the coverage is below PCT percent (implies --coverage).",
)
@k_anonymity_option(
    "A combination of closed-set values fewer than K valid lines of a UTC day share "
    "is rare (default: [check_logs] k_anonymity of telemetry.toml, else 5)."
)
def check_logs_command(
    logs: tuple[Path, ...],
    output: str,
    strict_types: bool,
    config: Path | None,
    show_coverage: bool,
    fail_under: float | None,
    k: int | None,
    max_decompressed: int,
    max_ratio: int,
) -> None:
    """Check real log lines against the models: per event valid and invalid lines,
    violations by field and rule (never the values), unknown events and coverage.

    Reads what preview reads, and judges values as the views do: a value is valid here
    exactly when the views show it. Values the views read from another JSON type (BigQuery
    read-backs write "5", Cloud Logging keeps 5.0) are counted as coercions.

    Exit status 0 when every telemetry line is valid, 1 when any is not, when two
    copies of one log entry (same insertId and timestamp) hold different payloads,
    when a gzip file stopped at --max-decompressed or --max-ratio, or when no
    telemetry line was found at all (a warning says so). Plain text, other JSON,
    truncated, oversized, too deep and undecodable records are counted, never fatal.
    A file named twice is read once, with a warning. Unknown event names and
    reasons the emitter never writes are counted, never shown.
    """
    from agent_telemetry.warehouse._checking.check_logs import check_logs
    from agent_telemetry.warehouse._checking.render import render_json, render_text
    from agent_telemetry.warehouse._loading.progress import RichLoadProgress, wants_bar
    from agent_telemetry.warehouse._reading.source import LoadError

    catalogue, k = _catalogue_and_k(config, k)
    limits = _limits(max_decompressed, max_ratio)
    err = Console(stderr=True)
    total = sum(path.stat().st_size for path in logs)
    try:
        if wants_bar(err, total):
            with RichLoadProgress(err, total) as progress:
                report = check_logs(
                    logs,
                    catalogue.versions,
                    strict_types=strict_types,
                    limits=limits,
                    progress=progress,
                    k=k,
                )
        else:
            report = check_logs(
                logs, catalogue.versions, strict_types=strict_types, limits=limits, k=k
            )
    except LoadError as error:
        raise click.ClickException(str(error)) from None
    covered = report.coverage() if show_coverage or fail_under is not None else None
    if output == "json":
        click.echo(render_json(report, covered))
    else:
        render_text(report, Console())
        if covered is not None:
            for line in covered.lines():
                click.echo(line)
    failed = not report.clean
    if covered is not None and fail_under is not None and covered.below(fail_under):
        figure, threshold = covered.figures_below(fail_under)
        click.echo(f"telemetry coverage {figure}% is below --fail-under {threshold}", err=True)
        failed = True
    sys.exit(1 if failed else 0)


def resolve_deployment(config: Path | None) -> tuple[DeploymentConfig, Catalogue | None]:
    """The deployment file and its catalogue, resolved once: ``config``, else
    ./telemetry.toml; with neither, the local placeholder and the package's own events.
    Raises AgentTelemetryError (the config, or importing its catalogue)."""
    from agent_telemetry.project import find_config, resolve_project
    from agent_telemetry.warehouse import default_config

    path = config or find_config(Path.cwd(), climb=False)
    if path is None:
        return default_config(None), None
    project = resolve_project(path)
    return project.config, project.catalogue


def _catalogue(config: Path | None) -> Catalogue:
    """The catalogue of ``config``, else of the nearest telemetry.toml, else the package's."""
    return _catalogue_and_k(config, None)[0]


def _catalogue_and_k(config: Path | None, k: int | None) -> tuple[Catalogue, int]:
    """The catalogue as ``_catalogue`` finds it, and the k of the rare-combination
    measure: ``k`` given, else the deployment file's ``[check_logs] k_anonymity``."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import find_config, resolve_project
    from agent_telemetry.schema.catalogue import CatalogueError, default_catalogue
    from agent_telemetry.warehouse._checking.rare import DEFAULT_K

    path = config or find_config(Path.cwd())
    if path is None:
        return default_catalogue(), k or DEFAULT_K
    try:
        project = resolve_project(path)
    except (ConfigError, CatalogueError) as error:
        raise click.ClickException(str(error)) from None
    return project.catalogue, k or project.config.check_logs.k_anonymity
