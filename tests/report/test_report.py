"""agent-telemetry report: the charts of a log, as tables and as one offline HTML page."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.report import CHARTS
from tests.warehouse.lines import line, write_lines


def _report(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["report", *map(str, args)], terminal_width=120)
    return result.exit_code, result.output


def test_every_chart_of_the_issue_is_there() -> None:
    assert [c.key for c in CHARTS] == [
        "runs_over_time",
        "queue_wait",
        "render_slots",
        "runs_today",
        "tokens_today",
        "provider_states",
        "lane_health",
        "refusals_errors",
        "data_quality",
    ]


def test_one_query_two_renderers_the_table_shows_the_rows_the_chart_draws(
    demo_report: tuple[Path, Path],
) -> None:
    log, page = demo_report
    code, out = _report(log)
    assert code == 0, out
    html = page.read_text(encoding="utf-8")
    for chart in CHARTS:
        assert chart.title in out
        rows = re.search(rf'data-chart="{chart.key}" data-rows="(\d+)"', html)
        assert rows is not None
        assert int(rows[1]) > 0, chart.key
    # the provider's 429 stretch is in both
    assert "rate_limited" in out
    assert "rate_limited" in html


def test_an_empty_chart_says_so(tmp_path: Path) -> None:
    log = write_lines(tmp_path / "chat.jsonl", [line("chat_turn", tier="public", kind="text")])
    page = tmp_path / "report.html"
    code, out = _report(log, "--html", page)
    assert code == 0, out
    assert "no data for: Runs per lane and status over time" in out
    html = page.read_text(encoding="utf-8")
    assert 'data-chart="provider_states" data-rows="0"' in html
    assert "No data: this log has no rows for this chart." in html
    assert "No data: this log has no rows for “Provider lane state over time”." in html
    code, out = _report(log)
    assert "no data: this log has no rows for this chart" in out


def test_a_hostile_file_name_is_text_on_the_page(tmp_path: Path) -> None:
    name = r'<script>alert(1)<\script><img src="x" onerror="alert(2)">.jsonl'
    log = write_lines(tmp_path / name, [line("chat_turn", tier="public", kind="text")])
    page = tmp_path / "report.html"
    code, out = _report(log, "--html", page)
    assert code == 0, out
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html


def test_the_page_is_written_atomically_with_normal_permissions(
    tmp_path: Path, demo_report: tuple[Path, Path]
) -> None:
    log, page = demo_report
    assert page.stat().st_mode & 0o777 == 0o644 or page.stat().st_mode & 0o044
    target = tmp_path / "elsewhere.html"
    link = tmp_path / "report.html"
    link.symlink_to(target)
    code, out = _report(log, "--html", link)
    assert code == 2, out  # refused as every write through a link (tests/test_files.py)
    assert "report.html: is a symbolic link; refused" in out
    assert link.is_symlink()
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_missing_log_is_a_usage_error(tmp_path: Path) -> None:
    code, out = _report(tmp_path / "nope.jsonl")
    assert code == 2
    assert "does not exist" in out


@pytest.mark.parametrize("chart", CHARTS, ids=lambda c: c.key)
def test_each_query_runs_with_agent_telemetry_query(
    chart: object, demo_report: tuple[Path, Path]
) -> None:
    log, _page = demo_report
    result = CliRunner().invoke(
        main,
        ["query", chart.sql, str(log), "--format", "csv"],  # type: ignore[attr-defined]
    )
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) > 1


def test_the_lane_health_timeline_shows_each_dead_window_and_only_those(
    demo_report: tuple[Path, Path],
) -> None:
    """The silent outage must be visible: every window lane_health flags is drawn as
    "looks dead", and no other window is (the view decides, the chart only draws it)."""
    from agent_telemetry.report.charts import chart_data
    from agent_telemetry.warehouse import Warehouse

    log, _page = demo_report
    with Warehouse() as wh:
        wh.load([log])
        wh.create_views()
        flagged = set(wh.rows("SELECT provider, window_start FROM lane_health WHERE looks_dead"))
        (lanes,) = chart_data(wh, tuple(c for c in CHARTS if c.key == "lane_health"))
    drawn = {(r[0], r[2]) for r in lanes.rows if r[1] == "looks dead"}
    assert flagged  # the demo has its outages
    assert drawn == flagged
    assert {r[1] for r in lanes.rows} <= set(lanes.chart.series)
    assert all(end - start == timedelta(minutes=5) for _, _, start, end in lanes.rows)


def test_the_page_shows_rare_combinations_as_counts_only(
    demo_report: tuple[Path, Path],
) -> None:
    # The demo's admin: two chat turns (tier admin, kind action) that no one else shares.
    _log, page = demo_report
    html = page.read_text(encoding="utf-8")
    table = html.split('<h2 id="rare_combinations">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr(?: class=\"has-rare\")?><td>(\w+)</td>(.*?)</tr>", table)
    cells = {event: re.findall(r"<td>([^<]*)</td>", rest) for event, rest in rows}
    assert cells["chat_turn"] == ["2026-05-09", "269", "7", "2", "2, 9, 14"]
    assert 'data-k="5"' in table
    body = table.split("<tbody>", 1)[1]
    for member in ("admin", "action", "public", "text", "anthropic", "vertex"):
        assert member not in body


def test_k_of_the_page_is_the_option(tmp_path: Path) -> None:
    log = write_lines(
        tmp_path / "few.jsonl",
        [line("chat_turn", tier="public", kind="text") for _ in range(3)],
    )
    page = tmp_path / "page.html"
    code, output = _report(log, "--html", page, "--k-anonymity", "3")
    assert code == 0, output
    table = page.read_text(encoding="utf-8").split('<h2 id="rare_combinations">', 1)[1]
    assert 'data-k="3"' in table
    assert "has-rare" not in table.split("</table>", 1)[0]  # 3 lines share it: not rare
