"""check-logs' totals over several files: what each file counts adds up, on both of
check-logs' paths (Python's, and SQL's for files DuckDB reads exactly)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._checking.check_logs import PROGRESS_EVERY
from agent_telemetry.warehouse._loading.fast import SQL_FROM
from agent_telemetry.warehouse._reading.records import MAX_DEPTH
from agent_telemetry.warehouse._reading.source import MAX_RECORD
from tests.warehouse.lines import line, write_lines

GOOD = line("pipeline_run", lane="public", status="ok")
OVERSIZED = '{"textPayload": "' + "x" * MAX_RECORD + '"}'
TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
UNDECODABLE = b'{"event": "pipeline_run", "schema_version": 1, "lane": "\xff"}'


def _hostile_file(path: Path, oversized: int, too_deep: int, undecodable: int) -> Path:
    lines = [GOOD.encode()]
    lines += [OVERSIZED.encode()] * oversized + [TOO_DEEP.encode()] * too_deep
    lines += [UNDECODABLE] * undecodable + [GOOD.encode()]
    path.write_bytes(b"".join(text + b"\n" for text in lines))
    return path


@pytest.fixture
def two_hostile_files(tmp_path: Path) -> list[Path]:
    # Each kind several times, unevenly over the files: a total that added a kind twice,
    # took one away or kept one file's would show another number. DuckDB refuses a file
    # with invalid UTF-8 (Python checks it); the last file it reads, on the SQL path.
    return [
        _hostile_file(tmp_path / "a.jsonl", oversized=2, too_deep=1, undecodable=3),
        _hostile_file(tmp_path / "b.jsonl", oversized=1, too_deep=2, undecodable=1),
        _hostile_file(tmp_path / "c.jsonl", oversized=2, too_deep=1, undecodable=0),
    ]


@pytest.mark.parametrize("fast", [False, True], ids=["python only", "sql where duckdb reads"])
def test_hostile_records_of_every_kind_add_up_over_files(
    two_hostile_files: list[Path], fast: bool
) -> None:
    report = check_logs(two_hostile_files, fast=fast, sql_from=0)
    assert [(f.oversized, f.too_deep, f.undecodable) for f in report.files] == [
        (2, 1, 3),
        (1, 2, 1),
        (2, 1, 0),
    ]
    assert report.hostile == 13
    assert (report.telemetry, report.clean) == (6, True)  # skipped, never fatal


def test_check_logs_warns_of_every_hostile_record_and_exits_zero(
    two_hostile_files: list[Path],
) -> None:
    result = CliRunner().invoke(
        main, ["check-logs", *map(str, two_hostile_files)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
    assert (
        "warning: 13 record(s) oversized, too deep or undecodable were skipped (see files)"
        in result.output
    )
    assert "clean: every telemetry line matches its model" in result.output


def _render(wait: int) -> str:
    return line("pipeline_render", theme="dark", render_lane="run", slot_wait_ms=wait)


def _render_lines(path: Path, waits: list[int]) -> Path:
    lines = [_render(wait) for wait in waits]
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    return path


@pytest.fixture
def extremes_first(tmp_path: Path) -> list[Path]:
    # The bounds of slot_wait_ms (0 .. 120,000) both in the first file, a value between
    # them in the second: the second file's extremes must not replace the first's.
    # Over SQL_FROM bytes between them, so check-logs judges both in SQL.
    middle = [500] * (SQL_FROM // len(_render(500)))
    return [
        _render_lines(tmp_path / "first.jsonl", [0, 120_000]),
        _render_lines(tmp_path / "second.jsonl", middle),
    ]


EXTREMES = {"min_seen": 0, "max_seen": 120_000, "ge_seen": True, "le_seen": True}


@pytest.mark.parametrize("fast", [False, True], ids=["python path", "sql path"])
def test_a_field_s_extremes_are_the_extremes_of_every_file(
    extremes_first: list[Path], fast: bool
) -> None:
    report = check_logs(extremes_first, fast=fast)
    assert report.clean
    seen = report.as_dict()["events"]["pipeline_render"]["coverage"]["slot_wait_ms"]
    assert {key: seen[key] for key in EXTREMES} == EXTREMES
    assert seen["valid_lines"] == report.telemetry


def test_check_logs_reports_the_extremes_of_every_file(extremes_first: list[Path]) -> None:
    result = CliRunner().invoke(main, ["check-logs", "--format", "json", *map(str, extremes_first)])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["events"]["pipeline_render"]["coverage"]["slot_wait_ms"]
    assert {key: shown[key] for key in EXTREMES} == EXTREMES


def test_unknown_events_and_rejected_lines_each_count_as_a_violation(tmp_path: Path) -> None:
    # As many unknown events as rejected lines, and no invalid line: a count that took one
    # kind away from the other would find the log clean.
    path = write_lines(
        tmp_path / "odd.jsonl",
        [
            GOOD,
            line("cache_lookup", tier="public"),
            line("door_opened"),
            line("telemetry_rejected", reason="unknown_event"),
            line("telemetry_rejected", reason="bad_event_type"),
        ],
    )
    report = check_logs([path])
    assert (report.violations, report.clean) == (4, False)
    result = CliRunner().invoke(main, ["check-logs", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == "4 line(s) with violations"
    shown = CliRunner().invoke(main, ["check-logs", str(path), "--format", "json"])
    assert shown.exit_code == 1
    assert json.loads(shown.output)["clean"] is False


class _Bar:
    """What check-logs reports to its progress bar: each file's name and size, and the
    bytes of it read so far."""

    def __init__(self) -> None:
        self.files: list[tuple[str, int]] = []
        self.updates: list[int] = []
        self.finished = 0

    @property
    def size(self) -> int:
        return self.files[-1][1]

    def start_file(self, label: str, size: int) -> None:
        self.files.append((label, size))

    def update(self, done: int) -> None:
        self.updates.append(done)

    def finish_file(self) -> None:
        self.finished += 1


def test_python_s_check_moves_the_bar_every_progress_every_records(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "long.jsonl", [GOOD] * (3 * PROGRESS_EVERY + 1))
    bar = _Bar()
    report = check_logs([path], progress=bar, fast=False)
    assert report.telemetry == 3 * PROGRESS_EVERY + 1
    # Records 0, PROGRESS_EVERY, 2 * and 3 * PROGRESS_EVERY: in bytes read, never past
    # the file's size, and moving on as the read does (the file spans several reads).
    assert len(bar.updates) == 4, bar.updates
    assert bar.updates == sorted(bar.updates)
    assert 0 < bar.updates[0] < bar.updates[-1] <= bar.size == path.stat().st_size
    assert (bar.files, bar.finished) == ([("long.jsonl", path.stat().st_size)], 1)


def test_the_sql_path_moves_the_bar_to_each_file_s_end(tmp_path: Path) -> None:
    paths = [
        write_lines(tmp_path / "a.jsonl", [GOOD] * 3),
        write_lines(tmp_path / "b.jsonl", [GOOD, "service started"]),
    ]
    bar = _Bar()
    report = check_logs(paths, progress=bar, sql_from=0)
    assert (report.telemetry, report.clean) == (4, True)
    sizes = [path.stat().st_size for path in paths]
    assert bar.files == [("a.jsonl", sizes[0]), ("b.jsonl", sizes[1])]
    assert (bar.updates, bar.finished) == (sizes, 2)
