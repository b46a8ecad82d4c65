"""A chart's rows drawn by matplotlib as SVG text, to inline in the report page.

matplotlib (the ``[report]`` extra) writes static SVG with no script and no font to
fetch (text stays text: ``svg.fonttype = none``); the output is deterministic (no date,
a fixed hash salt). Its element ids are prefixed with the chart's key, so several charts
inline in one page never share an id (a shared clip-path id would clip one chart by
another's axes).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.report.charts import CHART_WINDOW_MINUTES, Chart, ChartData

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class ReportError(AgentTelemetryError):
    """The report cannot be drawn or written; says why."""


# One colour per value that has a meaning: green is fine, amber/orange waits, red broken.
COLOURS: dict[str, str] = {
    "ok": "#2da44e",
    "needs_attention": "#d4a72c",
    "failed": "#cf222e",
    "not_ready": "#8c959f",
    "live": "#2da44e",
    "rate_limited": "#fb8500",
    "no_quota": "#cf222e",
    "unreachable": "#6639ba",
    "p50": "#54aeff",
    "p95": "#0550ae",
    "max": "#8c959f",
    "refusal": "#d4a72c",
    "error": "#cf222e",
    "public": "#54aeff",
    "premium": "#8250df",
    "admin": "#1a7f37",
    "finishing work": "#2da44e",
    "no run ended": "#8c959f",
    "looks dead": "#cf222e",
}
_FALLBACK = ("#0969da", "#bf3989", "#953800", "#1b7c83", "#57606a")
WIDTH_IN, HEIGHT_IN = 8.0, 3.4


def _colour(name: str, index: int) -> str:
    return COLOURS.get(name, _FALLBACK[index % len(_FALLBACK)])


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportError(
            "the report's charts need matplotlib: pip install 'agent-telemetry[report]'"
        ) from None


def _figure(height: float = HEIGHT_IN) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH_IN, height), layout="constrained")


def _label(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _grouped_bars(fig: Figure, chart: Chart, rows: Sequence[tuple[Any, ...]]) -> None:
    ax = fig.add_subplot()
    groups = list(dict.fromkeys(str(r[0]) for r in rows))
    present = {str(r[1]) for r in rows}
    series = [s for s in chart.series if s in present] + sorted(present - set(chart.series))
    values = {(str(r[0]), str(r[1])): float(r[2] or 0) for r in rows}
    width = 0.8 / max(len(series), 1)
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        heights = [values.get((group, name), 0.0) for group in groups]
        bars = ax.bar(xs, heights, width, label=name, color=_colour(name, i))
        ax.bar_label(bars, labels=[_label(_as_number(h)) for h in heights], fontsize=9)
    ax.set_xticks(range(len(groups)), groups)
    top = max(values.values(), default=0.0)
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)  # all zeros: an axis from 0, bars labelled 0
    _finish(ax, chart, legend=len(series) > 1)


def _as_number(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def _stacked_time(fig: Figure, chart: Chart, rows: Sequence[tuple[Any, ...]]) -> None:
    from matplotlib.dates import DateFormatter

    panels = list(dict.fromkeys(str(r[0]) for r in rows))
    fig.set_size_inches(WIDTH_IN, 1.2 + 1.6 * len(panels))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    width = timedelta(minutes=CHART_WINDOW_MINUTES * 0.9)
    for ax, panel in zip(axes, panels, strict=True):
        mine = [r for r in rows if str(r[0]) == panel]
        times = sorted({r[1] for r in mine})
        bottom = dict.fromkeys(times, 0.0)
        for i, status in enumerate(chart.series):
            counts = {r[1]: float(r[3]) for r in mine if r[2] == status}
            heights = [counts.get(t, 0.0) for t in times]
            ax.bar(
                times,
                heights,
                width,
                bottom=[bottom[t] for t in times],
                label=status,
                color=_colour(status, i),
                align="edge",
            )
            for t, h in zip(times, heights, strict=True):
                bottom[t] += h
        ax.set_ylabel(panel)
        ax.grid(axis="y", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    axes[-1].xaxis.set_major_formatter(DateFormatter("%H:%M", tz="UTC"))  # type: ignore[no-untyped-call]
    axes[-1].set_xlabel(chart.x_label)
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9, frameon=False)


def _timeline(fig: Figure, chart: Chart, rows: Sequence[tuple[Any, ...]]) -> None:
    from matplotlib.dates import DateFormatter, date2num
    from matplotlib.patches import Patch

    ax = fig.add_subplot()
    rows_by = list(dict.fromkeys(str(r[0]) for r in rows))
    for y, provider in enumerate(rows_by):
        for row in rows:
            if str(row[0]) != provider:
                continue
            start, end = date2num(row[2]), date2num(row[3])  # type: ignore[no-untyped-call]
            index = chart.series.index(row[1]) if row[1] in chart.series else len(chart.series)
            ax.broken_barh(
                [(start, max(end - start, 1e-4))],
                (y - 0.35, 0.7),
                facecolors=_colour(str(row[1]), index),
            )
    ax.set_yticks(range(len(rows_by)), rows_by)
    ax.invert_yaxis()
    ax.xaxis_date(tz="UTC")
    ax.xaxis.set_major_formatter(DateFormatter("%H:%M", tz="UTC"))  # type: ignore[no-untyped-call]
    handles = [Patch(color=_colour(s, i), label=s) for i, s in enumerate(chart.series)]
    ax.legend(
        handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9, frameon=False
    )
    ax.set_xlabel(chart.x_label)
    ax.spines[["top", "right"]].set_visible(False)


def _finish(ax: Axes, chart: Chart, *, legend: bool) -> None:
    ax.set_xlabel(chart.x_label)
    ax.set_ylabel(chart.y_label)
    ax.grid(axis="y", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9, frameon=False)


def _empty(fig: Figure, chart: Chart) -> None:
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.text(
        0.5,
        0.5,
        f"No data: this log has no rows for “{chart.title}”.",
        ha="center",
        va="center",
        fontsize=12,
        color="#57606a",
    )


_DRAW = {"grouped_bars": _grouped_bars, "stacked_time": _stacked_time, "timeline": _timeline}
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def render_svg(data: ChartData) -> str:
    """The chart as an ``<svg>`` element (no XML declaration), ids prefixed by its key."""
    _require_matplotlib()
    import matplotlib

    chart = data.chart
    with matplotlib.rc_context():
        matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: no glyph paths
        matplotlib.rcParams["svg.hashsalt"] = f"agent-telemetry-{chart.key}"  # stable ids
        matplotlib.rcParams["font.size"] = 9
        fig = _figure(1.6 if data.empty else HEIGHT_IN)
        if data.empty:
            _empty(fig, chart)
        else:
            _DRAW[chart.kind](fig, chart, data.rows)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    text = text[text.index("<svg") :]
    text = _ID.sub(lambda m: f'id="{chart.key}-{m[1]}"', text)
    return _REF.sub(lambda m: f"{m[1]}{chart.key}-{m[2]}", text)
