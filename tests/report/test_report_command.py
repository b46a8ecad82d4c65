"""What a user of ``agent-telemetry report`` sees, run in-process on small hand-made logs:
the tables on a terminal, the one-line summary of ``--html``, the deployment file used
and the errors (no demo: the report group's mutation run calls these per mutant)."""

from __future__ import annotations

import errno
import itertools
import os
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.report import CHARTS
from tests.service import write_module
from tests.warehouse.lines import entry, line, write_lines

NO_DATA = "no data: this log has no rows for this chart"
WIDTH = 80  # the terminal's columns: a longer summary line must still be one line


@pytest.fixture(autouse=True)
def _no_deployment_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where no telemetry.toml is: the built-in config unless --config names one."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)


def _report(*args: str | Path, colour: bool = False) -> tuple[int, str]:
    env = {"COLUMNS": str(WIDTH), "NO_COLOR": None, "FORCE_COLOR": None, "TERM": "dumb"}
    if colour:  # a terminal that shows styles
        env |= {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    result = CliRunner().invoke(main, ["report", *map(str, args)], env=env)
    return result.exit_code, result.output


def _every_chart_log(folder: Path) -> Path:
    """One line of each event, enough for a row in every chart."""
    return write_lines(
        folder / "every.jsonl",
        [
            line(
                "pipeline_run",
                lane="public",
                status="ok",
                queue_wait_ms=1500,
                user_runs_today="1",
                user_tokens_today="lt25",
                provider="vertex",
            ),
            line("pipeline_render", theme="dark", render_lane="run", slot_wait_ms=200),
            line("provider_status", provider="vertex", state="live", probe="preflight"),
            line("chat_turn", tier="public", kind="text", refusal="out_of_scope"),
        ],
    )


def _chat_log(folder: Path) -> Path:
    """One chat turn: only the refusal and data-quality charts have rows."""
    turn = line("chat_turn", tier="public", kind="text", refusal="budget")
    return write_lines(folder / "chat.jsonl", [turn])


def _titles(out: str) -> list[str]:
    """The lines after each blank line: where each chart's title is printed."""
    lines = out.splitlines()
    return [text for before, text in itertools.pairwise(lines) if before == ""]


def test_the_terminal_shows_each_charts_title_then_its_rows(tmp_path: Path) -> None:
    code, out = _report(_every_chart_log(tmp_path))
    assert code == 0, out
    assert _titles(out) == [chart.title for chart in CHARTS]
    assert NO_DATA not in out
    lines = out.splitlines()
    queue = lines.index("Queue wait per lane: p50 and p95")
    assert lines[queue + 1 : queue + 8] == [
        "┏━━━━━━━━┳━━━━━━━━━━━━┳━━━━━┓",
        "┃ lane   ┃ percentile ┃   s ┃",
        "┡━━━━━━━━╇━━━━━━━━━━━━╇━━━━━┩",
        "│ public │ p50        │ 1.5 │",
        "│ public │ p95        │ 1.5 │",
        "└────────┴────────────┴─────┘",
        "2 rows",
    ]
    assert "│ out_of_scope │ refusal │     1 │" in lines
    assert "│ run         │ max  │ 0.2 │" in lines


def test_an_empty_chart_prints_its_title_and_says_so_in_one_line(tmp_path: Path) -> None:
    code, out = _report(_chat_log(tmp_path))
    assert code == 0, out
    assert _titles(out) == [chart.title for chart in CHARTS]
    lines = out.splitlines()
    for chart in CHARTS:
        below = lines[lines.index(chart.title) + 1]
        assert (below == NO_DATA) == (chart.key not in {"refusals_errors", "data_quality"})


def test_on_a_terminal_titles_are_bold_and_no_data_is_dim(tmp_path: Path) -> None:
    code, out = _report(_chat_log(tmp_path), colour=True)
    assert code == 0, out
    lines = out.splitlines()
    for chart in CHARTS:
        assert f"\x1b[1m{chart.title}\x1b[0m" in lines
    assert lines.count(f"\x1b[2m{NO_DATA}\x1b[0m") == len(CHARTS) - 2


def test_html_says_where_it_wrote_in_one_line_however_long(tmp_path: Path) -> None:
    folder = tmp_path / ("a-folder-with-a-long-name-" * 3)
    folder.mkdir()
    page = folder / "report.html"
    code, out = _report(_every_chart_log(tmp_path), "--html", page)
    assert code == 0, out
    summary = f"wrote {page}: {len(CHARTS)} charts of 4 telemetry lines"
    assert len(summary) > WIDTH  # rich would fold it without soft_wrap
    assert out == summary + "\n"  # every chart has rows: no "no data for"
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_html_names_every_empty_chart(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    code, out = _report(_chat_log(tmp_path), "--html", page)
    assert code == 0, out
    empty = [c.title for c in CHARTS if c.key not in {"refusals_errors", "data_quality"}]
    assert len(empty) >= 2
    assert out == (
        f"wrote {page}: {len(CHARTS)} charts of 1 telemetry lines; "
        f"no data for: {', '.join(empty)}\n"
    )


def test_the_deployment_file_given_decides_duplicates_and_k(tmp_path: Path) -> None:
    # One Cloud Logging entry delivered twice: the views keep one row unless the
    # deployment file says the sink is clean (dedupe = false), as in BigQuery.
    twice = orjson.dumps(entry("pipeline_run", insert_id="d1", lane="public", status="ok"))
    log = write_lines(tmp_path / "twice.jsonl", [twice.decode()] * 2)
    config = tmp_path / "deploy" / "telemetry.toml"
    config.parent.mkdir()
    config.write_text(
        '[source]\nproject = "acme-prod"\ndataset = "logs"\ndedupe = false\n\n'
        '[target]\nproject = "acme-prod"\ndataset = "views"\n\n'
        "[check_logs]\nk_anonymity = 3\n",
        encoding="utf-8",
    )
    run_row = "│ public │ 2026-05-09T07:30:00+00:00 │ ok     │    {} │"
    code, out = _report(log)
    assert code == 0, out
    assert run_row.format(1) in out.splitlines()  # the built-in config dedupes
    code, out = _report(log, "--config", config)
    assert code == 0, out
    assert run_row.format(2) in out.splitlines()
    page = tmp_path / "page.html"
    code, out = _report(log, "--config", config, "--html", page)
    assert code == 0, out
    table = page.read_text(encoding="utf-8").split('<h2 id="rare_combinations">', 1)[1]
    assert 'data-k="3"' in table.split("</table>", 1)[0]


def test_a_broken_deployment_file_is_named_with_what_is_wrong(tmp_path: Path) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text('[source]\nproject = "acme-prod"\n', encoding="utf-8")
    code, out = _report(_chat_log(tmp_path), "--config", config)
    assert code == 2, out
    assert out.startswith(f"Error: {config}: source.dataset: required key is missing")


def test_without_matplotlib_html_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    page = tmp_path / "report.html"
    code, out = _report(_chat_log(tmp_path), "--html", page)
    assert code == 2, out
    assert out == (
        "Error: the report's charts need matplotlib: pip install 'agent-telemetry[report]'\n"
    )
    assert not page.exists()


def test_a_page_that_cannot_be_written_says_where_and_why(tmp_path: Path) -> None:
    page = tmp_path / ("x" * 300 + ".html")  # longer than a file name may be
    code, out = _report(_chat_log(tmp_path), "--html", page)
    assert code == 2, out
    assert out == f"Error: cannot write {page}: {os.strerror(errno.ENAMETOOLONG)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.jsonl", "cwd"]


SERVICE_MODELS = """
from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent


class Door(StrEnum):
    OPEN = "open"
    SHUT = "shut"


class DoorCheck(TelemetryEvent):
    \"\"\"One line per door check.\"\"\"

    event_name: ClassVar[str] = "door_check"
    schema_version: ClassVar[int] = 1

    door: Door = Field(description="How the door stood.")


EVENTS = {m.event_name: m for m in (DoorCheck,)}
"""


def test_the_pages_rare_combinations_count_the_services_own_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # check-logs measures with the service's catalogue: an event only it defines is
    # counted on the page too, not dropped as unknown to the package's own catalogue.
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    config = tmp_path / "telemetry.toml"
    config.write_text(
        f'[catalogue]\nmodule = "{write_module(tmp_path, SERVICE_MODELS)}"\n'
        'lock = "schema.lock.json"\n\n'
        '[source]\nproject = "acme-door-prod"\ndataset = "door_logs"\n\n'
        '[target]\nproject = "acme-door-prod"\ndataset = "door_telemetry"\n',
        encoding="utf-8",
    )
    log = write_lines(
        tmp_path / "doors.jsonl",
        [line("door_check", door="open")] * 4 + [line("door_check", door="shut")],
    )
    page = tmp_path / "page.html"
    code, out = _report(log, "--config", config, "--html", page)
    assert code == 0, out
    table = page.read_text(encoding="utf-8").split('<h2 id="rare_combinations">', 1)[1]
    rows = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "<td>door_check</td><td>2026-05-09</td><td>5</td><td>2</td><td>5</td>" in rows
