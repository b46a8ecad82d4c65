"""Each LogEntry counted once: the loader keeps the insert id (column ``insertId``) the
views de-duplicate by, and both commands count an entry exported twice as a duplicate.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_telemetry.warehouse import Warehouse, check_logs
from tests.warehouse.lines import TIME, entry, line, write_lines

SINK = "run_googleapis_com_stdout"


def _entry(entry_id: str, *, timestamp: str = TIME, lane: str = "public") -> str:
    record = entry("pipeline_run", timestamp=timestamp, lane=lane, status="ok")
    record["insertId"] = entry_id
    return json.dumps(record)


def test_the_sink_keeps_each_entrys_insert_id_and_null_for_emitter_lines(
    wh: Warehouse, tmp_path: Path
) -> None:
    path = write_lines(
        tmp_path / "mixed.jsonl",
        [_entry("1a2b3c", lane="admin"), line("pipeline_run", lane="public", status="ok")],
    )
    wh.load([path])
    rows = wh.rows(f'SELECT jsonPayload.lane, "insertId" FROM "{SINK}" ORDER BY 1')
    assert rows == [("admin", "1a2b3c"), ("public", None)]


def test_read_backs_keep_the_insert_id_too(wh: Warehouse, tmp_path: Path) -> None:
    bq_row = {
        "insertId": "bq-1",
        "timestamp": "2026-05-09 07:35:25",
        "jsonPayload": {"event": "chat_turn", "schema_version": "1", "tier": "public"},
    }
    all_logs = {
        "insert_id": "la-1",
        "timestamp": "2026-05-09 07:35:25.123456 UTC",
        "json_payload": json.dumps({"event": "chat_turn", "schema_version": 1, "tier": "admin"}),
    }
    first = tmp_path / "bq.json"
    first.write_text(json.dumps([bq_row]))
    second = write_lines(tmp_path / "alllogs.jsonl", [json.dumps(all_logs)])
    wh.load([first, second])
    rows = wh.rows(f'SELECT jsonPayload.tier, "insertId" FROM "{SINK}" ORDER BY 1')
    assert rows == [("admin", "la-1"), ("public", "bq-1")]


def test_the_same_entry_twice_is_stored_twice_and_counted_as_a_duplicate_by_both(
    wh: Warehouse, tmp_path: Path
) -> None:
    path = write_lines(
        tmp_path / "twice.jsonl", [_entry("dup-1"), _entry("other"), _entry("dup-1")]
    )
    (loaded,) = wh.load([path]).files
    # Stored as exported (as BigQuery holds them); the views keep one row per entry.
    assert (loaded.loaded, loaded.duplicates) == (3, 1)
    assert wh.rows(f'SELECT "insertId", count(*) FROM "{SINK}" GROUP BY 1 ORDER BY 1') == [
        ("dup-1", 2),
        ("other", 1),
    ]
    report = check_logs([path])
    assert (report.files[0].telemetry, report.files[0].duplicates) == (3, 1)
    assert report.events["pipeline_run"].lines == 2  # checked once


def test_an_entry_in_two_files_is_a_duplicate_across_them(tmp_path: Path) -> None:
    first = write_lines(tmp_path / "07.json", [_entry("e-1"), _entry("e-2")])
    second = write_lines(tmp_path / "08.json", [_entry("e-2"), _entry("e-3")])
    with Warehouse() as wh:
        report = wh.load([first, second])
    assert [f.duplicates for f in report.files] == [0, 1]
    assert [f.duplicates for f in check_logs([first, second]).files] == [0, 1]


def test_only_the_same_insert_id_and_timestamp_is_a_duplicate(tmp_path: Path) -> None:
    same_instant = TIME.replace(".123456Z", ".123456000Z")  # another spelling, one instant
    path = write_lines(
        tmp_path / "near.jsonl",
        [
            _entry("e-1"),
            _entry("e-1", timestamp="2026-05-09T07:35:26.123456Z"),  # another instant
            _entry("e-2"),
            _entry("e-1", timestamp=same_instant),
            line("pipeline_run", lane="public", status="ok"),  # no insert id: never merged
            line("pipeline_run", lane="public", status="ok"),
        ],
    )
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    assert loaded.duplicates == checked.duplicates == 1


def test_the_same_entry_twice_is_one_view_row(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "twice.jsonl", [_entry("dup-1"), _entry("dup-1")])
    wh.load([path])
    wh.create_views()
    assert wh.one("SELECT count(*) FROM pipeline_run") == (1,)
