"""The demo's report opened in headless chromium from file://: quiet, offline, every chart
drawn with data; its screenshot is the one the manual shows (docs/img/report.png)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_telemetry.report import CHARTS
from tests.browser import DESKTOP, PHONE, file_url, visit
from tests.pages import assert_no_page_scroll, assert_quiet_and_offline, screenshot

# Per chart: its key, its rows, its drawn shapes (bars, stretches) and the svg's size.
CHART_STATE = """() => [...document.querySelectorAll('figure.chart')].map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  const drawn = 'g[id*="patch_"] path, g[id*="PolyCollection"] path';
  const shapes = svg ? [...svg.querySelectorAll(drawn)]
      .filter(p => { const b = p.getBBox(); return b.width > 0 && b.height > 0; }).length : 0;
  return {key: f.dataset.chart, rows: Number(f.dataset.rows), shapes,
          width: box.width, height: box.height, text: svg ? svg.textContent : ''};
})"""


def test_the_demo_report_draws_every_chart_offline(
    browser: Any, demo_report: tuple[Path, Path], tmp_path: Path
) -> None:
    _log, page = demo_report
    with visit(browser, file_url(page)) as seen:
        charts = seen.page.evaluate(CHART_STATE)
        screenshot(seen, "report.png", tmp_path)
        assert_quiet_and_offline(seen)
    assert [c["key"] for c in charts] == [c.key for c in CHARTS]
    for chart in charts:
        assert chart["rows"] > 0, chart["key"]
        assert chart["width"] > 300, chart["key"]
        assert chart["height"] > 100, chart["key"]
        assert "No data" not in chart["text"], chart["key"]
    drawn = {c["key"]: c["shapes"] for c in charts}
    # more than the legend's swatches: the bars and stretches themselves are drawn
    assert drawn["runs_over_time"] > 20
    assert drawn["provider_states"] >= 4 + 4  # four stretches, four legend states
    states = next(c["text"] for c in charts if c["key"] == "provider_states")
    for state in ("live", "rate_limited", "no_quota", "unreachable"):
        assert state in states


def test_an_empty_chart_is_drawn_saying_so(browser: Any, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from agent_telemetry.cli import main
    from tests.warehouse.lines import line, write_lines

    log = write_lines(tmp_path / "chat.jsonl", [line("chat_turn", tier="public", kind="text")])
    page = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(log), "--html", str(page)]).exit_code == 0
    with visit(browser, file_url(page)) as seen:
        charts = seen.page.evaluate(CHART_STATE)
        assert_quiet_and_offline(seen)
    empty = [c for c in charts if c["rows"] == 0]
    assert empty
    for chart in empty:
        assert "No data" in chart["text"]
        assert chart["height"] > 50


# The smallest chart text as laid out (font size times the svg's scale), in CSS px.
SMALLEST_TEXT = """() => Math.min(...[...document.querySelectorAll('figure.chart svg text')]
  .filter(t => t.textContent.trim())
  .map(t => {
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return parseFloat(getComputedStyle(t).fontSize) * scale;
  }))"""
# The page's small print: the captions under the charts.
SMALL_PRINT = "() => parseFloat(getComputedStyle(document.querySelector('figcaption')).fontSize)"


def test_the_report_reads_on_a_phone(browser: Any, demo_report: tuple[Path, Path]) -> None:
    _log, page = demo_report
    for viewport in (DESKTOP, PHONE):
        with visit(browser, file_url(page), viewport) as seen:
            assert_no_page_scroll(seen)  # a chart may scroll inside its figure, not the page
            smallest = seen.page.evaluate(SMALLEST_TEXT)
            assert smallest >= seen.page.evaluate(SMALL_PRINT) - 1, (viewport, smallest)
