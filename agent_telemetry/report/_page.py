"""The report page: every chart inline as SVG, with its query, in one offline HTML file.

jinja2 with autoescaping writes the page; the charts' SVG is matplotlib's own output
(the one piece marked safe). A Content-Security-Policy forbids every request and every
script, so the page cannot reach the network even if a value tried to.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

import jinja2
import markupsafe

from agent_telemetry._files import trusted_folder, write_text
from agent_telemetry.report._svg import WIDTH_IN, render_svg
from agent_telemetry.report.charts import ChartData
from agent_telemetry.warehouse import RareCombinations

_TEMPLATES = Path(__file__).with_name("templates")


def query_command(sql: str, logs: Sequence[Path]) -> str:
    return shlex.join(["agent-telemetry", "query", sql, *(str(p) for p in logs)])


def render_page(
    data: Sequence[ChartData],
    logs: Sequence[Path],
    summary: dict[str, int],
    rare: RareCombinations | None = None,
) -> str:
    """The page; ``rare``: check-logs' rare-combination counts (counts only, no values)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    charts = [
        {
            "data": d,
            "svg": markupsafe.Markup(render_svg(d)),  # matplotlib's own SVG
            "command": query_command(d.chart.sql, logs),
        }
        for d in data
    ]
    shown = None if rare is None else {"k": rare.k, "days": rare.days()}
    return env.get_template("report.html.j2").render(
        charts=charts,
        logs=[str(p) for p in logs],
        summary=summary,
        rare=shown,
        # Never drawn narrower than its own size: on a phone a chart scrolls inside its
        # figure and its 9 pt text stays 12 px, as the captions' small print.
        chart_min_px=round(WIDTH_IN * 96),
    )


def write_page(text: str, path: Path) -> None:
    """The page at ``path`` (``report --html``), through the file door."""
    write_text(path, text, trusted_folder(path))


__all__ = ["query_command", "render_page", "write_page"]
