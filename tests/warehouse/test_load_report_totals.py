"""The load report's totals, as the Python API gives them (docs/analyst-local.md, "From
Python") and `preview` warns of them: each a sum over the files, each category its own."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import Warehouse
from agent_telemetry.warehouse._reading.records import MAX_DEPTH
from agent_telemetry.warehouse._reading.source import MAX_RECORD
from tests.warehouse.lines import line, write_lines

GOOD = line("pipeline_run", lane="public", status="ok")
TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
OVERSIZED = '{"textPayload": "' + "x" * MAX_RECORD + '"}'


def _files(tmp_path: Path) -> list[Path]:
    first = write_lines(
        tmp_path / "first.log",
        [GOOD, GOOD, "plain text", '{"other": 1}', '{"cut":', TOO_DEEP, OVERSIZED, OVERSIZED],
    )
    second = write_lines(tmp_path / "second.log", [GOOD, "more text", "and more", TOO_DEEP])
    with (tmp_path / "second.log").open("ab") as file:
        file.write(b'{"bad": "\xff"}\n' * 3)  # invalid UTF-8: undecodable
    return [first, second]


def test_each_total_is_the_sum_of_its_own_category_over_the_files(tmp_path: Path) -> None:
    with Warehouse() as wh:
        report = wh.load(_files(tmp_path))
    first, second = report.files
    assert (first.records, first.loaded, first.skipped) == (8, 2, 6)
    assert (second.records, second.loaded, second.skipped) == (7, 1, 6)
    assert (report.records, report.loaded, report.skipped) == (15, 3, 12)
    assert report.non_telemetry == 3 + 1  # text lines (three) and other JSON (one)
    assert report.truncated == 1
    assert report.hostile == 3 + 2 + 2  # undecodable, too deep, oversized
    assert report.skipped == report.non_telemetry + report.truncated + report.hostile


def test_preview_warns_of_every_hostile_record_of_every_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["preview", *map(str, _files(tmp_path))])
    assert "warning: 7 record(s) oversized, too deep or" in " ".join(result.output.split())
