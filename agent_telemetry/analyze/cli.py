"""``agent-telemetry views analyze FILE.sql``: an analyst's query, checked by GoogleSQL's
analyzer against the views (as tables with their column types) before it costs anything
on BigQuery.

Mounted into the ``views`` group by ``agent_telemetry/cli.py``. zetasql (the
``[analyze]`` extra) is imported inside the command: without it the command prints one
line naming the extra and exits 1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_telemetry._text import clean, rich_text
from agent_telemetry.analyze._limits import DEFAULT_SAMPLE, MAX_SAMPLE, RUN_LAYOUT
from agent_telemetry.views.cli_options import config_option

if TYPE_CHECKING:
    from agent_telemetry.analyze import Analysis
    from agent_telemetry.config import DeploymentConfig, Layout


def _say(line: str, *, err: bool = False) -> None:
    """Every line this command prints: query files, paths, the analyzer's messages (which
    quote the query) and column names are outside text (``_text.clean``)."""
    click.echo(clean(line), err=err)


def _caret(sql: str, line: int, column: int) -> list[str]:
    """The line the analyzer points at and a caret under its column (ZetaSQL counts
    columns after expanding tabs to 8; the caret counts the line as printed, escapes
    and all)."""
    lines = re.split(r"\r\n|\r|\n", sql)  # ZetaSQL's line breaks, no others (U+2028...)
    if not 1 <= line <= len(lines):
        return []
    width = len(str(line))
    shown = lines[line - 1].expandtabs(8)
    return [
        f"  {line} | {clean(shown)}",
        f"  {' ' * width} | {' ' * len(clean(shown[: column - 1]))}^",
    ]


def _report(name: str, sql: str, analysis: Analysis) -> list[str]:
    if analysis.accepted:
        out = [f"{name}:{analysis.start_line}: accepted"]
        width = max((len(c.name) for c in analysis.columns), default=0)
        out += [f"  {c.name:<{width}}  {c.type}" for c in analysis.columns]
        return out
    if analysis.line is None or analysis.column is None:
        where = f"{name}:{analysis.start_line}"
    else:
        where = f"{name}:{analysis.line}:{analysis.column}"
    first, *detail = analysis.message.splitlines() or ["rejected"]
    out = [f"{where}: error: {first}", *detail]
    if analysis.line is not None and analysis.column is not None:
        out += _caret(sql, analysis.line, analysis.column)
    return out


def _layout(config: DeploymentConfig, layout: str | None) -> Layout:
    chosen = layout or config.source.layout
    return chosen  # type: ignore[return-value]  # click.Choice admits only layouts


@click.command("analyze")
@config_option
@click.option(
    "--layout",
    type=click.Choice(["partitioned", "sharded", "analytics"]),
    default=None,
    help="Which layout's views and sink table to check against (default: the config's).",
)
@click.option(
    "--sql-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The committed view SQL (default: where `views build` writes it: [views] dir "
    "of the config, else the package's generated/ folder).",
)
@click.option(
    "--run",
    "database",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also answer the query with GoogleSQL's reference implementation on a sample of "
    "the sink table in this DuckDB file (`preview LOGS --db FILE` writes it). Slow: for "
    "small samples only.",
)
@click.option(
    "--sample",
    type=click.IntRange(1, MAX_SAMPLE),
    default=DEFAULT_SAMPLE,
    show_default=True,
    help="With --run: how many sink rows (the earliest) the answer is computed on.",
)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def analyze_command(
    config_path: Path | None,
    layout: str | None,
    sql_dir: Path | None,
    database: Path | None,
    sample: int,
    files: tuple[Path, ...],
) -> None:
    """Check an SQL file against the views with GoogleSQL's analyzer.

    FILES hold one or more statements each. Each statement is resolved against the
    deployment's views, as tables with the column types the analyzer derives from the
    committed view SQL, and the sink table. Accepted
    statements print their output columns and types; the first rejected one prints the
    analyzer's message with line and column. Exit 0 when every statement is accepted,
    1 otherwise. Needs the [analyze] extra.

    With --run, a file holding one query is then evaluated by GoogleSQL's reference
    implementation on a sample of local rows: what BigQuery would answer on those rows.
    """
    from agent_telemetry.analyze import AnalyzerRejected, AnalyzerUnavailable

    if database is not None and layout not in (None, RUN_LAYOUT):
        raise click.BadParameter(
            f"--run answers on the local sink, which has the {RUN_LAYOUT} layout",
            param_hint="--layout",
        )
    try:
        exit_code = _run(config_path, RUN_LAYOUT if database else layout, sql_dir, files)
        if exit_code == 0 and database is not None:
            _answer(config_path, database, sample, files)
    except (AnalyzerUnavailable, AnalyzerRejected) as exc:
        raise click.ClickException(str(exc)) from None
    raise SystemExit(exit_code)


def _compile_notice(seconds: float | None, path: Path) -> None:
    """The first start on a machine compiles the analyzer: say so, then how long it took."""
    if seconds is None:
        click.echo(
            "compiling GoogleSQL's analyzer (once per machine, about a minute)...",
            nl=False,
            err=True,
        )
    else:
        _say(f" done in {seconds:.1f} s, cached in {path.parent}", err=True)


def _answer(config_path: Path | None, database: Path, sample: int, files: tuple[Path, ...]) -> None:
    from rich.console import Console
    from rich.table import Table

    from agent_telemetry.analyze._run import run_query, sample_rows
    from agent_telemetry.analyze._runtime import runtime
    from agent_telemetry.config import DEFAULT_SINK_TABLE
    from agent_telemetry.project import resolve_project

    if len(files) != 1:
        raise click.UsageError("--run answers one query: give one FILE")
    config = resolve_project(config_path).config
    rows = sample_rows(database, DEFAULT_SINK_TABLE, sample)
    _say(
        f"GoogleSQL's reference implementation on {len(rows.rows)} sink rows of {database} "
        f"(the earliest; --sample {sample}):"
    )
    click.echo("what BigQuery would answer on these rows only. Slow: for small samples.")
    result = run_query(config, _read(files[0]), rows, runtime())
    from rich.table import Column
    from rich.text import Text

    table = Table(
        *(
            Column(Text.assemble(rich_text(c.name), "\n", rich_text(c.type)))
            for c in result.columns
        ),
        show_lines=False,
    )
    for row in result.rows:  # values read back from logs: never rich markup, never raw
        table.add_row(*(rich_text("NULL" if v is None else v) for v in row))
    Console(soft_wrap=False).print(table, overflow="fold")
    click.echo(f"{len(result.rows)} row(s)")


def _run(
    config_path: Path | None, layout_name: str | None, sql_dir: Path | None, files: tuple[Path, ...]
) -> int:
    from agent_telemetry.analyze import Analyzer, analyze_views, query_catalog, runtime
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import resolve_project

    runtime(_compile_notice)  # fails first, and alone, when the extra is missing
    try:
        project = resolve_project(config_path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    config = project.config
    layout = _layout(config, layout_name)
    sql_dir = project.sql_dir if sql_dir is None else sql_dir
    queries = [(path, _read(path)) for path in files]
    views = analyze_views(config, layout, sql_dir)
    if not views:
        raise click.ClickException(
            f"no committed view SQL in {sql_dir / layout}; "
            f"run `agent-telemetry views build{project.command_flags()}` first"
        )
    broken = [v for v in views if not v.analysis.accepted]
    for view in broken:
        for line in _report(str(view.path), view.sql, view.analysis):
            _say(line, err=True)
    if broken:
        raise click.ClickException(
            f"{len(broken)} committed view(s) are rejected by the analyzer; "
            "`agent-telemetry check` and `views build` regenerate them from the models"
        )
    target = f"{config.target.project}.{config.target.dataset}"
    _say(f"checking against {len(views)} views in {target} ({layout} layout)")
    failed = False
    with Analyzer(query_catalog(config, layout, views)) as analyzer:
        for path, sql in queries:
            analyses = analyzer.analyze_script(sql)
            if not analyses:
                _say(f"{path}: no SQL statement")
                failed = True
            for analysis in analyses:
                for line in _report(str(path), sql, analysis):
                    _say(line)
                failed = failed or not analysis.accepted
    return 1 if failed else 0


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise click.ClickException(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise click.ClickException(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot read ({type(exc).__name__})") from None
