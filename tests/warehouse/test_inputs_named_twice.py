"""A file named twice (again, through a symlink, by overlapping globs) is read once, with a
warning, by preview and by check-logs alike: it is one file, so one set of lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import Warehouse, check_logs
from tests.warehouse.lines import line, write_lines


def _run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*map(str, args)], terminal_width=200)
    return result.exit_code, result.output


@pytest.fixture
def one(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "one.jsonl", [line("pipeline_run", lane="public", status="ok")])


def test_preview_of_one_file_named_three_ways_shows_one_row_and_a_warning(
    one: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(one)
    code, output = _run("preview", one, one, link)
    assert code == 0, output
    assert "pipeline_run: 1 rows" in output
    assert output.count("is the same file as") == 2
    assert f"{link} is the same file as {one}: read once" in output


def test_check_logs_reads_a_repeated_file_once(one: Path, tmp_path: Path) -> None:
    link = tmp_path / "sub" / "link.jsonl"
    link.parent.mkdir()
    link.symlink_to(os.path.relpath(one, link.parent))
    code, output = _run("check-logs", "--format", "json", one, link, one)
    assert code == 0, output
    report = json.loads(output)
    assert report["telemetry_lines"] == 1
    assert [f["path"] for f in report["files"]] == [str(one)]
    assert report["repeated"] == [
        {"path": str(link), "same_as": str(one)},
        {"path": str(one), "same_as": str(one)},
    ]
    code, text = _run("check-logs", one, link)
    assert code == 0, text
    assert "is the same file as" in text


def test_overlapping_globs_and_hard_links_are_one_file(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    a = write_lines(logs / "2026-05-09.jsonl", [line("chat_turn", tier="public", kind="text")])
    b = write_lines(logs / "2026-05-10.jsonl", [line("chat_turn", tier="admin", kind="text")])
    hard = logs / "copy-by-link.jsonl"
    os.link(a, hard)
    # What a shell gives for `logs/*.jsonl logs/2026-05-*.jsonl`.
    named = [*sorted(logs.glob("*.jsonl")), *sorted(logs.glob("2026-05-*.jsonl"))]
    assert len(named) == 5
    with Warehouse() as wh:
        report = wh.load(named)
        wh.create_views()
        assert wh.one("SELECT count(*) FROM chat_turn") == (2,)
    assert [f.path for f in report.files] == [str(a), str(b)]
    assert len(report.repeated) == 3
    checked = check_logs(named)
    assert checked.telemetry == 2
    assert [r.path for r in checked.repeated] == [r.path for r in report.repeated]


def test_two_files_with_the_same_lines_are_two_files(tmp_path: Path) -> None:
    lines = [line("pipeline_run", lane="public", status="ok")]
    a, b = write_lines(tmp_path / "a.jsonl", lines), write_lines(tmp_path / "b.jsonl", lines)
    code, output = _run("preview", a, b)
    assert code == 0, output
    assert "pipeline_run: 2 rows" in output
    assert "same file" not in output


def test_a_repeated_path_with_markup_is_printed_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "exports[prod]"
    folder.mkdir()
    path = write_lines(folder / "run.jsonl", [line("pipeline_run", lane="public", status="ok")])
    code, output = _run("check-logs", path, path)
    assert code == 0, output
    assert f"{path} is the same file as {path}: read once" in output
