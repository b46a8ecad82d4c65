"""Loading log files into the sink-shaped DuckDB table."""

from __future__ import annotations

import gzip
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agent_telemetry.views import sink_fields
from agent_telemetry.warehouse import SINK_TABLE, LoadError, Warehouse
from agent_telemetry.warehouse._sink.duckdb_types import column_types
from tests.warehouse.broken_input import BAD_HEADER, fifo_with, half_gzip, telemetry_lines
from tests.warehouse.lines import TIME, entry, line, write_lines

SINK = f'"{SINK_TABLE}"'
WHEN = datetime(2026, 5, 9, 7, 35, 25, 123456, tzinfo=UTC)


def test_sink_table_keeps_the_sink_schema_columns_the_views_read(
    wh: Warehouse, tmp_path: Path
) -> None:
    wh.load([write_lines(tmp_path / "empty.jsonl", [])])
    described = dict(wh.rows(f"SELECT column_name, column_type FROM (DESCRIBE {SINK})"))
    expected = column_types(sink_fields("partitioned"))
    # In the sink schema's order; insertId is what the views de-duplicate by.
    assert list(described) == ["jsonPayload", "timestamp", "insertId"]
    for name, kind in described.items():  # DuckDB spells the types its own way
        assert wh.one(f"SELECT typeof(NULL::{expected[name]})") == (kind,)
    assert described["timestamp"] == "TIMESTAMP WITH TIME ZONE"
    assert described["insertId"] == "VARCHAR"
    assert described["jsonPayload"].startswith('STRUCT("event" VARCHAR, schema_version BIGINT')


def test_emitter_lines_land_as_cloud_logging_would_lift_them(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "out.jsonl",
        [line("pipeline_run", lane="public", status="ok", queue_wait_ms=5, invalid_fields=["x"])],
    )
    report = wh.load([path])
    assert (report.records, report.loaded) == (1, 1)
    row = wh.one(
        f"SELECT timestamp, jsonPayload.event, jsonPayload.schema_version, "
        f"jsonPayload.lane, jsonPayload.queue_wait_ms, jsonPayload.invalid_fields, "
        f"jsonPayload.time FROM {SINK}"
    )
    # time is lifted out of the payload into the entry's timestamp.
    assert row == (WHEN, "pipeline_run", 1, "public", 5, ["x"], None)


def test_logentry_lines_load_their_payload_and_timestamp(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "export.jsonl",
        [json.dumps(entry("chat_turn", tier="admin", kind="text", duration_ms=7))],
    )
    report = wh.load([path])
    assert report.loaded == 1
    row = wh.one(f"SELECT timestamp, jsonPayload.tier, jsonPayload.duration_ms FROM {SINK}")
    assert row == (WHEN, "admin", 7)


def test_a_pretty_printed_json_array_export_loads(wh: Warehouse, tmp_path: Path) -> None:
    entries = [entry("pipeline_run", lane=lane, status="ok") for lane in ("public", "admin")]
    entries.insert(1, {"textPayload": "server started", "timestamp": TIME})
    path = tmp_path / "export.json"
    path.write_text(json.dumps(entries, indent=2))
    report = wh.load([path])
    (loaded,) = report.files
    assert (loaded.layout, loaded.records, loaded.loaded, loaded.other_json) == ("array", 3, 2, 1)
    assert wh.rows(f"SELECT jsonPayload.lane FROM {SINK} ORDER BY 1") == [("admin",), ("public",)]


def test_a_cut_off_array_export_loads_what_is_whole(wh: Warehouse, tmp_path: Path) -> None:
    whole = json.dumps(
        [entry("pipeline_run", lane="public", status="ok") for _ in range(3)], indent=1
    )
    path = tmp_path / "cut.json"
    path.write_text(whole[: whole.rindex('"lane"')])  # inside the third element
    report = wh.load([path])
    (loaded,) = report.files
    assert (loaded.loaded, loaded.truncated) == (2, 1)


def test_mixed_lines_are_skipped_and_counted_by_kind(wh: Warehouse, tmp_path: Path) -> None:
    good = line("pipeline_run", lane="public", status="ok")
    path = write_lines(
        tmp_path / "mixed.log",
        [
            "2026-05-09 07:35:25 INFO uvicorn started",
            good,
            good[:20],  # truncated
            "",
            '{"event": "request finished", "level": "info"}',  # a service's structlog line
            "[1, 2]",
            "42",
            good,
        ],
    )
    (loaded,) = wh.load([path]).files
    assert (loaded.records, loaded.loaded, loaded.text, loaded.truncated, loaded.other_json) == (
        7,
        2,
        2,
        1,
        2,
    )


def test_emitter_lines_and_logentries_in_one_file_both_load(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "both.jsonl",
        [
            line("pipeline_run", lane="public", status="ok"),
            json.dumps(entry("pipeline_run", lane="admin", status="ok")),
            "plain text",
        ],
    )
    (loaded,) = wh.load([path]).files
    assert (loaded.loaded, loaded.text, loaded.other_json) == (2, 1, 0)
    assert wh.rows(f"SELECT jsonPayload.lane FROM {SINK} ORDER BY 1") == [("admin",), ("public",)]


def test_gzip_is_read_by_content_not_by_name(wh: Warehouse, tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"  # gzip inside, no .gz suffix
    path.write_bytes(
        gzip.compress((line("pipeline_run", lane="admin", status="ok") + "\n").encode())
    )
    assert wh.load([path]).loaded == 1


def test_crlf_line_endings_load(wh: Warehouse, tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    path.write_bytes(
        b"".join(
            line("pipeline_run", lane=lane, status="ok").encode() + b"\r\n"
            for lane in ("public", "admin")
        )
    )
    assert wh.load([path]).loaded == 2


def test_several_files_load_into_one_table(wh: Warehouse, tmp_path: Path) -> None:
    first = write_lines(tmp_path / "a.jsonl", [line("pipeline_run", lane="public", status="ok")])
    second = write_lines(tmp_path / "b.jsonl", [line("chat_turn", tier="public", kind="text")] * 2)
    report = wh.load([first, second])
    assert [f.loaded for f in report.files] == [1, 2]
    assert wh.one(f"SELECT count(*) FROM {SINK}") == (3,)


@pytest.mark.parametrize("on_disk", [False, True], ids=["in memory", "database file"])
def test_the_first_files_staged_rows_become_the_table(tmp_path: Path, on_disk: bool) -> None:
    """Into a table the load created, the first file with telemetry has its staged rows
    renamed into the table's place (no copy); later files, and loads that add to a
    table, are copied. Either way: the same rows, the sink's columns only, no staging
    table left behind, and views made before a reload read the new rows."""
    run = line("pipeline_run", lane="public", status="ok")
    chat = line("chat_turn", tier="public", kind="text")
    empty = write_lines(tmp_path / "empty.jsonl", ["plain text", ""])
    first = write_lines(tmp_path / "a.jsonl", [run, "plain text", "", '{"a": NaN}', chat])
    second = write_lines(tmp_path / "b.jsonl", [run, run, '{"event": "pipeline_run"'])
    with Warehouse(tmp_path / "w.duckdb" if on_disk else None) as wh:
        wh.load([first])
        wh.create_views()
        assert wh.one("SELECT count(*) FROM pipeline_run") == (1,)
        report = wh.load([empty, second, first])
        assert [f.loaded for f in report.files] == [0, 2, 2]
        assert wh.one("SELECT count(*) FROM pipeline_run") == (3,)
        wh.load([first], replace=False)  # added to the table: copied
        assert wh.rows(
            f"SELECT jsonPayload.event, count(*) FROM {SINK} GROUP BY ALL ORDER BY ALL"
        ) == [("chat_turn", 2), ("pipeline_run", 4)]
        described = wh.rows(f"SELECT column_name FROM (DESCRIBE {SINK})")
        assert described == [("jsonPayload",), ("timestamp",), ("insertId",)]
        assert wh.rows("SELECT table_name FROM duckdb_tables() ORDER BY ALL") == [(SINK_TABLE,)]


def test_a_missing_file_is_a_load_error_naming_it(wh: Warehouse, tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"nope\.jsonl: no such file"):
        wh.load([tmp_path / "nope.jsonl"])


def test_progress_reports_every_byte_of_every_file(wh: Warehouse, tmp_path: Path) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.events: list[tuple[str, object]] = []

        def start_file(self, label: str, size: int) -> None:
            self.events.append(("start", (label, size)))

        def update(self, done: int) -> None:
            self.events.append(("update", done))

        def finish_file(self) -> None:
            self.events.append(("finish", None))

    lines = [line("pipeline_run", lane="public", status="ok")]
    path, other = write_lines(tmp_path / "a.jsonl", lines), write_lines(tmp_path / "b.jsonl", lines)
    recorder = Recorder()
    wh.load([path, other], progress=recorder)
    starts = [e for e in recorder.events if e[0] == "start"]
    size = path.stat().st_size
    assert starts == [("start", ("a.jsonl", size)), ("start", ("b.jsonl", size))]
    assert recorder.events[-1] == ("finish", None)


# -- property: every line is loaded or counted under its kind, blank lines not at all --

TELEMETRY = st.builds(
    lambda lane, status, wait: line("pipeline_run", lane=lane, status=status, queue_wait_ms=wait),
    st.sampled_from(["public", "admin", "premium", "gold"]),
    st.sampled_from(["ok", "failed"]),
    st.integers(-5, 4_000_000),
)
ENTRY = TELEMETRY.map(
    lambda text: json.dumps({"timestamp": TIME, "jsonPayload": orjson.loads(text)})
)
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1
).filter(lambda t: t.strip() != "" and t.strip()[0] not in "{[\ufeff")
TRUNCATED = st.tuples(TELEMETRY, st.integers(1, 10_000)).map(
    lambda pair: pair[0][: 1 + pair[1] % (len(pair[0]) - 1)]
)
OTHER = st.sampled_from(['{"event": "request finished"}', '{"msg": "hi", "n": 1}', "[1, 2]", "{}"])
BLANK = st.sampled_from(["", " ", "\t", "\r"])
KINDS = {
    "emitter": TELEMETRY,
    "entry": ENTRY,
    "text": TEXT,
    "truncated": TRUNCATED,
    "other": OTHER,
    "blank": BLANK,
}
RECORDS = st.lists(st.one_of(*(st.tuples(st.just(k), s) for k, s in KINDS.items())), max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RECORDS)
def test_every_line_is_loaded_or_counted_and_blank_lines_are_not(
    records: list[tuple[str, str]],
) -> None:
    # A file that is one JSON array is an array export, not a line.
    nonblank = [text for kind, text in records if kind != "blank"]
    assume(not (len(nonblank) == 1 and nonblank[0].startswith("[")))
    with tempfile.TemporaryDirectory() as tmp, Warehouse() as wh:
        path = write_lines(Path(tmp) / "mixed.log", [text for _kind, text in records])
        (loaded,) = wh.load([path]).files
        kinds = [kind for kind, _text in records]
        assert loaded.records == len(records) - kinds.count("blank")
        assert loaded.loaded == kinds.count("emitter") + kinds.count("entry")
        assert loaded.text == kinds.count("text")
        assert loaded.truncated == kinds.count("truncated")
        assert loaded.other_json == kinds.count("other")
        assert wh.one(f"SELECT count(*) FROM {SINK}") == (loaded.loaded,)


def test_a_lines_file_may_start_with_an_array_line(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "a.log", ["[1, 2]", line("pipeline_run", lane="admin", status="ok")]
    )
    (loaded,) = wh.load([path]).files
    assert (loaded.layout, loaded.records, loaded.loaded, loaded.other_json) == ("lines", 2, 1, 1)


def test_a_long_load_on_a_terminal_shows_a_rich_bar(wh: Warehouse, tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from agent_telemetry.warehouse._loading.progress import RichLoadProgress, wants_bar

    text = "".join(line("pipeline_run", lane="public", status="ok") + "\n" for _ in range(2000))
    path = tmp_path / "big.jsonl"
    path.write_text(text)
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    assert not wants_bar(Console(file=io.StringIO()), 1 << 30)  # not a terminal: no bar
    assert wants_bar(console, 1 << 30)
    with RichLoadProgress(console, path.stat().st_size) as progress:
        assert wh.load([path], progress=progress).loaded == 2000
    assert "loading" in screen.getvalue()


def test_an_array_export_larger_than_a_read_chunk_loads_every_element(
    wh: Warehouse, tmp_path: Path
) -> None:
    entries = [
        entry("pipeline_run", lane="public", status="ok", model_calls=i % 200) for i in range(6000)
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(entries, indent=2))
    assert path.stat().st_size > 2 << 20  # spans several 1 MiB reads
    (loaded,) = wh.load([path]).files
    assert (loaded.records, loaded.loaded, loaded.truncated) == (6000, 6000, 0)
    assert wh.one(f"SELECT sum(jsonPayload.model_calls) FROM {SINK}") == (
        sum(i % 200 for i in range(6000)),
    )


def test_a_cut_off_gzip_loads_every_whole_line_and_counts_the_cut(
    wh: Warehouse, tmp_path: Path
) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(path)
    (loaded,) = wh.load([path]).files
    assert (loaded.records, loaded.loaded, loaded.truncated) == (whole + 1, whole, 1)
    assert loaded.cut_at == whole + 1
    assert wh.one(f"SELECT count(DISTINCT jsonPayload.queue_wait_ms) FROM {SINK}") == (whole,)


def test_a_gzip_with_a_bad_header_is_one_truncated_record(wh: Warehouse, tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(BAD_HEADER)
    report = wh.load([path])
    assert (report.records, report.loaded, report.truncated) == (1, 0, 1)
    assert report.files[0].cut_at == 1


def test_a_fifo_loads_like_the_file_it_carries(wh: Warehouse, tmp_path: Path) -> None:
    data = "".join(f"{text}\n" for text in telemetry_lines(50)) + "plain text\n"
    with fifo_with(tmp_path / "pipe", gzip.compress(data.encode())) as pipe:
        report = wh.load([pipe])
    (loaded,) = report.files
    assert (loaded.path, loaded.records, loaded.loaded, loaded.text) == (str(pipe), 51, 50, 1)


def test_dev_null_is_an_empty_log(wh: Warehouse) -> None:
    assert wh.load([Path("/dev/null")]).records == 0


def test_a_directory_is_a_load_error_naming_it(wh: Warehouse, tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="is a directory"):
        wh.load([tmp_path])
