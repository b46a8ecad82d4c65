"""``agent-telemetry report LOGS... [--html OUT]``: the charts of a log.

Without ``--html`` each chart's rows print as a table (the terminal renderer); with it,
the same rows are drawn as SVG charts in one offline HTML page (the ``[report]`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_telemetry.views.cli_options import k_anonymity_option

if TYPE_CHECKING:
    from rich.console import Console

    from agent_telemetry.warehouse import LoadReport


class _ReportFailed(click.ClickException):
    exit_code = 2  # an error, not a finding


@click.command("report")
@click.argument(
    "logs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the charts as one self-contained, offline HTML page (needs the [report] extra).",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Deployment file (default: ./telemetry.toml if present).",
)
@k_anonymity_option(
    "The page's rare combinations: closed-set values fewer than K valid lines of a UTC "
    "day share (default: [check_logs] k_anonymity of telemetry.toml, else 5)."
)
def report_command(
    logs: tuple[Path, ...], html_path: Path | None, config: Path | None, k: int | None
) -> None:
    """Chart a log: runs per lane and status over time, queue waits, render slot waits,
    the run and token buckets, provider lane states over time, chat refusals and errors,
    data quality. Each chart is one query over the views (the page prints it).

    What the load could not read (a gzip stream cut short, truncated or hostile records,
    a file stopped at a limit) is printed on stderr as preview prints it; the charts
    show the rest. Exit status 2 when a file could not be read at all (nothing is
    drawn), 1 with a warning when no line was telemetry.
    """
    from rich.console import Console
    from rich.text import Text

    from agent_telemetry._text import clean
    from agent_telemetry.errors import AgentTelemetryError
    from agent_telemetry.report._svg import ReportError
    from agent_telemetry.report.charts import chart_data
    from agent_telemetry.warehouse import Warehouse
    from agent_telemetry.warehouse.cli import render_load_report, resolve_deployment
    from agent_telemetry.warehouse.results import Result, print_table

    errors = Console(stderr=True)
    try:
        # The charts read the package's own events; the rare combinations are measured
        # over the service's catalogue, as check-logs with the same file measures them.
        deployment, catalogue = resolve_deployment(config)
        with Warehouse(config=deployment) as wh:
            loaded = wh.load(logs)
            if loaded.unreadable:  # charts without it would pass for the whole story
                render_load_report(loaded, errors)
                names = ", ".join(f.path for f in loaded.unreadable)  # cleaned by the cli door
                raise _ReportFailed(f"{names}: no record of it could be read, so no chart is drawn")
            wh.create_views()
            data = chart_data(wh)
    except AgentTelemetryError as exc:  # the config, its catalogue, the load
        raise _ReportFailed(str(exc)) from None
    console = Console()
    if html_path is None:
        for d in data:
            console.print(Text(f"\n{d.chart.title}", style="bold"))
            if d.empty:
                console.print(Text("no data: this log has no rows for this chart", style="dim"))
            else:
                print_table(Result(d.columns, d.rows), console)
        _tell_what_the_load_found(loaded, errors)
        return
    from agent_telemetry.report._page import render_page, write_page
    from agent_telemetry.warehouse import check_logs

    try:
        # The rare-combination counts, as check-logs measures them (one definition).
        chosen = k or deployment.check_logs.k_anonymity
        versions = (catalogue or wh.catalogue).versions
        rare = check_logs(logs, versions, k=chosen).rare
        page = render_page(data, logs, {"loaded": loaded.loaded}, rare)
        write_page(page, html_path)
    except ReportError as exc:
        raise _ReportFailed(str(exc)) from None
    except OSError as exc:
        raise _ReportFailed(f"cannot write {html_path}: {exc.strerror}") from None
    empty = [d.chart.title for d in data if d.empty]
    console.print(
        Text(
            f"wrote {clean(html_path)}: {len(data)} charts of {loaded.loaded:,} telemetry lines"
            + (f"; no data for: {', '.join(empty)}" if empty else "")
        ),
        soft_wrap=True,
    )
    _tell_what_the_load_found(loaded, errors)


def _tell_what_the_load_found(loaded: LoadReport, errors: Console) -> None:
    """After the charts, so it is the last thing read: the load's table and notes when it
    could not read everything; exit 1 when no line was telemetry (as preview does)."""
    from agent_telemetry.warehouse.cli import exit_no_telemetry, render_load_report

    if loaded.damaged:
        render_load_report(loaded, errors)
    if not loaded.loaded:
        exit_no_telemetry(errors)
