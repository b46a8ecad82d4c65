"""What each chart kind draws, read from its SVG: the words on it (labels, ticks, legend),
its colours, its size, and ids that another chart on the page cannot share. Small rows made
by hand, in-process (no demo): each value's place on the chart is known."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_telemetry.report import CHARTS, ChartData
from agent_telemetry.report._page import query_command, render_page
from agent_telemetry.report._svg import ReportError, render_svg
from agent_telemetry.warehouse import Warehouse
from tests.warehouse.lines import line, write_lines

BY_KEY = {c.key: c for c in CHARTS}
T0 = datetime(2026, 5, 9, 9, 0, tzinfo=UTC)


def _words(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _fills(svg: str) -> set[str]:
    return set(re.findall(r"fill: ?(#[0-9a-f]{6})", svg)) - {"#ffffff"}


def _size(svg: str) -> tuple[str, str]:
    found = re.search(r'<svg [^>]*width="([^"]+)" height="([^"]+)"', svg)
    assert found is not None
    return found[1], found[2]


def _data(key: str, *rows: tuple[object, ...]) -> ChartData:
    return ChartData(BY_KEY[key], ("a", "b", "c", "d")[: len(rows[0]) if rows else 3], rows)


def test_grouped_bars_label_every_bar_and_name_every_series_in_order() -> None:
    svg = render_svg(
        _data(
            "queue_wait",
            ("public", "p50", 1.5),
            ("public", "p95", 1234.0),
            ("premium", "p50", 0.25),
            ("premium", "p99", 2.0),  # a series the chart does not know: last, own colour
        )
    )
    assert svg.startswith("<svg ")
    assert _size(svg) == ("576pt", "244.8pt")
    assert _words(svg) == [
        *("public", "premium", "lane"),
        *("0", "200", "400", "600", "800", "1000", "1200", "seconds"),
        *("1.5", "0.2"),  # p50: public, premium
        *("1,234", "0"),  # p95: premium has none, drawn 0
        *("0", "2"),  # p99
        *("p50", "p95", "p99"),  # the legend
    ]
    assert _fills(svg) == {"#54aeff", "#0550ae", "#953800"}


def test_one_series_has_no_legend_and_the_axis_starts_at_zero() -> None:
    svg = render_svg(_data("runs_today", ("1", "public", 1000)))
    assert _words(svg) == [
        *("1", "runs today"),
        *("0", "200", "400", "600", "800", "1000", "runs"),  # 1000 * 1.12: no 1200 tick
        "1,000",
    ]
    assert _fills(svg) == {"#54aeff"}


def test_all_zero_bars_get_an_axis_from_zero_to_one() -> None:
    svg = render_svg(_data("runs_today", ("1", "public", 0), ("2", "public", None)))
    assert _words(svg) == [
        *("1", "2", "runs today"),
        *("0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "runs"),
        *("0", "0"),
    ]


def test_stacked_time_has_one_panel_per_lane_and_every_status_in_the_legend() -> None:
    rows = (
        ("public", T0, "ok", 3),
        ("public", T0, "failed", 1),
        ("public", T0 + timedelta(minutes=15), "ok", 2),
        ("premium", T0 + timedelta(minutes=30), "needs_attention", 5),
    )
    svg = render_svg(_data("runs_over_time", *rows))
    assert _size(svg) == ("576pt", "316.8pt")  # 1.2 in + 1.6 in per panel
    assert _words(svg) == [
        *("0", "1", "2", "3", "4", "public"),  # 3 ok + 1 failed stacked: 4
        *("ok", "needs_attention", "failed", "not_ready"),  # the legend, on the first panel
        *(f"09:{m:02}" for m in range(0, 50, 5)),
        "time (UTC)",
        *("0", "1", "2", "3", "4", "5", "premium"),
    ]
    assert _fills(svg) == {"#2da44e", "#d4a72c", "#cf222e", "#8c959f"}


def test_a_timeline_draws_each_stretch_in_its_state_colour() -> None:
    rows = (
        ("openai", "live", T0, T0 + timedelta(minutes=20)),
        ("openai", "rate_limited", T0 + timedelta(minutes=20), T0 + timedelta(minutes=40)),
        ("vertex", "odd", T0, T0),  # a state the chart does not know; no length: still drawn
    )
    svg = render_svg(_data("provider_states", *rows))
    assert _size(svg) == ("576pt", "244.8pt")
    assert _words(svg) == [
        *(f"09:{m:02}" for m in range(0, 45, 5)),
        "time (UTC)",
        *("openai", "vertex"),
        *("live", "rate_limited", "no_quota", "unreachable"),
    ]
    # live, rate_limited; the unknown state the fifth fallback; the legend's four.
    assert _fills(svg) == {"#2da44e", "#fb8500", "#57606a", "#cf222e", "#6639ba"}
    assert svg.count('<g id="provider_states-PolyCollection_') == 3


def test_an_empty_chart_says_so_in_a_short_figure() -> None:
    svg = render_svg(_data("queue_wait"))
    assert _size(svg) == ("576pt", "115.2pt")
    assert _words(svg) == ["No data: this log has no rows for “Queue wait per lane: p50 and p95”."]


def test_every_id_and_reference_carries_the_charts_key() -> None:
    one = render_svg(_data("runs_today", ("1", "public", 3)))
    two = render_svg(_data("tokens_today", ("1", "public", 3)))
    for key, svg in (("runs_today", one), ("tokens_today", two)):
        ids = re.findall(r'\bid="([^"]+)"', svg)
        refs = re.findall(r'(?:url\(#|href="#)([^)"]+)', svg)
        assert ids
        assert refs
        assert all(i.startswith(f"{key}-") for i in ids)
        assert set(refs) <= set(ids)  # every reference finds its element
    assert not set(re.findall(r'\bid="([^"]+)"', one)) & set(re.findall(r'\bid="([^"]+)"', two))
    assert render_svg(_data("runs_today", ("1", "public", 3))) == one  # the same bytes again


def test_without_matplotlib_the_page_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReportError) as raised:
        render_svg(_data("queue_wait"))
    assert str(raised.value) == (
        "the report's charts need matplotlib: pip install 'agent-telemetry[report]'"
    )


def test_the_command_under_each_chart_reruns_its_query() -> None:
    logs = [Path("a b.jsonl"), Path("c.jsonl")]
    assert query_command("SELECT 'x'", logs) == (
        "agent-telemetry query 'SELECT '\"'\"'x'\"'\"'' 'a b.jsonl' c.jsonl"
    )


def test_the_page_holds_each_chart_its_query_and_the_counts() -> None:
    data = [_data("queue_wait", ("public", "p50", 1.5)), _data("runs_today")]
    page = render_page(data, [Path("one.jsonl")], {"loaded": 12345})
    assert "Of <code>one.jsonl</code>:\n12,345 telemetry lines loaded" in page
    assert page.count("<svg ") == 2
    assert 'data-chart="queue_wait" data-rows="1"' in page
    assert 'data-chart="runs_today" data-rows="0"' in page
    assert "The query (1 row)" in page
    assert "The query (0 rows)" in page
    assert "min-width: 768px" in page  # 8 in at 96 px
    assert "agent-telemetry query &#39;SELECT * FROM (SELECT lane" in page
    assert "rare_combinations" not in page  # no counts given: no table


def test_the_page_counts_rare_combinations_of_the_loaded_log(tmp_path: Path) -> None:
    from agent_telemetry.report import chart_data
    from agent_telemetry.warehouse import check_logs

    log = write_lines(
        tmp_path / "few.jsonl",
        [line("chat_turn", tier="public", kind="text") for _ in range(3)]
        + [line("chat_turn", tier="admin", kind="action")],
    )
    with Warehouse() as wh:
        wh.load([log])
        wh.create_views()
        data = chart_data(wh)
    assert [d.chart.key for d in data] == [c.key for c in CHARTS]
    refusals = next(d for d in data if d.chart.key == "refusals_errors")
    assert refusals.columns == ("kind", "what", "turns")
    rare = check_logs([log], k=3).rare
    page = render_page(data, [log], {"loaded": 4}, rare)
    table = page.split('<h2 id="rare_combinations">', 1)[1].split("</table>", 1)[0]
    assert 'data-k="3"' in table
    rows = re.findall(r"<tr(?: class=\"has-rare\")?><td>(\w+)</td>(.*?)</tr>", table)
    assert [(e, re.findall(r"<td>([^<]*)</td>", rest)[1:]) for e, rest in rows] == [
        ("chat_turn", ["4", "2", "1", "1, 3"])  # lines, combinations, rare lines, rarest
    ]
    assert '<tr class="has-rare"><td>chat_turn</td>' in table


GOLDEN = Path(__file__).with_name("golden")
DRAWN = {
    "grouped_bars": _data(
        "queue_wait", ("public", "p50", 1.5), ("public", "p95", 12.0), ("premium", "p50", 3.0)
    ),
    "stacked_time": _data(
        "runs_over_time",
        ("public", T0, "ok", 3),
        ("public", T0, "failed", 1),
        ("premium", T0 + timedelta(minutes=30), "needs_attention", 5),
    ),
    "timeline": _data(
        "provider_states",
        ("openai", "live", T0, T0 + timedelta(minutes=20)),
        ("openai", "rate_limited", T0 + timedelta(minutes=20), T0 + timedelta(minutes=40)),
        ("vertex", "no_quota", T0 + timedelta(minutes=10), T0 + timedelta(minutes=30)),
    ),
    "empty": _data("lane_health"),
    # Three panels: the time axis and its label only under the last one.
    "stacked_three": _data(
        "runs_over_time",
        ("public", T0, "ok", 3),
        ("premium", T0, "failed", 1),
        ("admin", T0 + timedelta(minutes=15), "ok", 2),
    ),
    # One series under 1: its bar as wide as a group allows, the axis to 1.12 times its top.
    "one_series": _data("runs_today", ("1", "public", 0.5)),
}


@pytest.mark.parametrize("kind", DRAWN)
def test_each_kind_draws_the_same_picture_as_reviewed(kind: str) -> None:
    """Where each bar, stretch, legend and axis sits: the SVG as reviewed, byte for byte
    (matplotlib's output is deterministic; docs/img's demo pictures are held the same way).
    After a deliberate change, look at the new picture, then replace the file."""
    golden = GOLDEN / f"{kind}.svg"
    assert render_svg(DRAWN[kind]) == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["stacked_time", "timeline"])
def test_times_read_utc_whatever_the_local_matplotlib_time_zone(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's matplotlibrc may set another time zone: the page still says UTC times."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "timezone", "Asia/Kolkata")  # UTC+05:30
    assert render_svg(DRAWN[kind]) == (GOLDEN / f"{kind}.svg").read_text(encoding="utf-8")


def test_a_long_timeline_ticks_whole_utc_hours_under_another_local_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hourly ticks sit on whole UTC hours: at UTC+05:30 the locator would put them at
    half past (labels 09:30, 10:30 ...), if the axis did not read its dates in UTC."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "timezone", "Asia/Kolkata")
    rows = (
        ("openai", "live", T0, T0 + timedelta(hours=3)),
        ("openai", "rate_limited", T0 + timedelta(hours=3), T0 + timedelta(hours=6)),
    )
    svg = render_svg(_data("provider_states", *rows))
    assert _words(svg)[:8] == [*(f"{h:02}:00" for h in range(9, 16)), "time (UTC)"]


def test_one_lane_gets_the_time_axis_and_its_label() -> None:
    svg = render_svg(_data("runs_over_time", ("public", T0, "ok", 3)))
    assert _size(svg) == ("576pt", "201.6pt")  # 1.2 in + 1.6 in for the one panel
    assert "time (UTC)" in _words(svg)
    assert "09:00" in _words(svg)


def _bar_spans(svg: str, colour: str) -> list[tuple[float, float]]:
    """Left and right edge of each rectangle filled with ``colour``, left to right."""
    found = re.findall(r'<path d="M ([\d.]+) [\d.]+ \nL ([\d.]+) [^"]*"[^>]*fill: ' + colour, svg)
    return sorted((float(left), float(right)) for left, right in found)


def test_one_series_bars_take_four_fifths_of_each_group() -> None:
    """With one series a bar is as wide as its group allows (0.8 of the step between
    groups), not half of that as if a second series stood beside it."""
    svg = render_svg(_data("runs_today", ("1", "public", 5), ("2", "public", 3)))
    (left, right), (next_left, _) = _bar_spans(svg, "#54aeff")
    assert (right - left) / (next_left - left) == pytest.approx(0.8)


def test_the_timeline_legend_stands_beside_the_plot_never_on_it() -> None:
    """Where the top right of the plot is empty, matplotlib's "best" place for a legend
    is there, over the time axis; the legend is put beside the plot on every chart."""
    rows = (
        ("openai", "live", T0, T0 + timedelta(minutes=5)),
        ("vertex", "live", T0, T0 + timedelta(minutes=5)),
        ("gemini", "live", T0 + timedelta(minutes=60), T0 + timedelta(minutes=60)),
    )
    svg = render_svg(_data("provider_states", *rows))
    plot = re.search(r'id="provider_states-patch_2">\s*<path d="M [\d.]+ [\d.]+ \nL ([\d.]+)', svg)
    legend = re.search(r'id="provider_states-legend_1">\s*<g[^>]*>\s*<path d="M ([\d.]+)', svg)
    assert plot is not None
    assert legend is not None
    assert float(legend[1]) > float(plot[1])  # the legend's first swatch: right of the plot
