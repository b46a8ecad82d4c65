"""Duplicate bookkeeping across files and loads: what a user reads in the load's report
and check-logs' (``duplicates``, ``conflicting``) must count every copy of an entry the
views will drop, whichever file or earlier load holds the first copy."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._loading.load import load_logs
from tests.warehouse.lines import TIME, entry, line, write_lines


def _entry(entry_id: str, *, lane: str = "public") -> str:
    record = entry("pipeline_run", timestamp=TIME, lane=lane, status="ok")
    record["insertId"] = entry_id
    return json.dumps(record)


# ``sql_from=0``: DuckDB judges the files (the path large exports take); a huge
# threshold keeps every record in Python. Both must count alike.
PATHS = pytest.mark.parametrize("sql_from", [0, 1 << 60], ids=["sql", "python"])


@PATHS
@pytest.mark.parametrize(
    "between",
    [
        [],  # an empty file
        [line("pipeline_run", lane="admin", status="ok")],  # emitter lines: no insert id
        ["not json at all"],
    ],
    ids=["empty", "unkeyed", "text"],
)
def test_a_copy_two_files_later_is_a_duplicate_when_the_file_between_has_no_keys(
    tmp_path: Path, between: list[str], sql_from: int
) -> None:
    first = write_lines(tmp_path / "07.jsonl", [_entry("e-1"), _entry("e-2")])
    middle = write_lines(tmp_path / "08.jsonl", between)
    last = write_lines(tmp_path / "09.jsonl", [_entry("e-1"), _entry("e-3")])
    report = load_logs(duckdb.connect(), [first, middle, last], sql_from=sql_from)
    assert [f.duplicates for f in report.files] == [0, 0, 1]
    assert report.duplicates == 1
    assert [f.duplicates for f in check_logs([first, middle, last]).files] == [0, 0, 1]


@PATHS
def test_an_appended_load_counts_conflicting_copies_of_rows_already_stored(
    tmp_path: Path, sql_from: int
) -> None:
    con = duckdb.connect()
    first = write_lines(tmp_path / "07.jsonl", [_entry("e-1", lane="public"), _entry("e-2")])
    assert load_logs(con, [first], sql_from=sql_from).conflicting == 0
    # The same entry again, its payload different: one of the two stored rows conflicts.
    later = write_lines(tmp_path / "08.jsonl", [_entry("e-1", lane="admin"), _entry("e-3")])
    report = load_logs(con, [later], replace=False, sql_from=sql_from)
    assert report.conflicting == 1
    # A copy alike is no conflict; the earlier conflict stays counted.
    again = write_lines(tmp_path / "09.jsonl", [_entry("e-2")])
    assert load_logs(con, [again], replace=False, sql_from=sql_from).conflicting == 1
    # A fresh load forgets the table: nothing conflicts in one clean file.
    assert load_logs(con, [again], sql_from=sql_from).conflicting == 0


@PATHS
def test_a_copy_of_an_earlier_files_only_entry_is_a_duplicate(
    tmp_path: Path, sql_from: int
) -> None:
    """One keyed entry is enough for the files after it to be checked against it: the
    last file is counted on its own only when no earlier file stored any entry."""
    first = write_lines(tmp_path / "07.jsonl", [_entry("e-1")])
    last = write_lines(tmp_path / "08.jsonl", [_entry("e-1"), _entry("e-2")])
    report = load_logs(duckdb.connect(), [first, last], sql_from=sql_from)
    assert [f.duplicates for f in report.files] == [0, 1]
    assert [f.duplicates for f in check_logs([first, last]).files] == [0, 1]


@pytest.mark.parametrize("setting", [True, False])
def test_a_load_leaves_the_connections_progress_bar_as_it_found_it(
    tmp_path: Path, setting: bool
) -> None:
    """The load silences DuckDB's own bar while it draws its own, then gives the caller's
    connection back as it was: an analyst's notebook keeps its bar."""
    con = duckdb.connect()
    con.execute(f"SET enable_progress_bar = {setting}")
    first = write_lines(tmp_path / "07.jsonl", [_entry("e-1")])
    load_logs(con, [first])
    assert con.execute("SELECT current_setting('enable_progress_bar')").fetchall() == [(setting,)]
