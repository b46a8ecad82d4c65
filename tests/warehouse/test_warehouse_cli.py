"""agent-telemetry preview: load, run every view, summarise; --db keeps the database."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.warehouse.broken_input import BAD_HEADER, fifo_with, half_gzip, telemetry_lines
from tests.warehouse.lines import line, write_lines

CONFIG = """
[source]
project = "my-project-123"
dataset = "logs_eu"
layout = "sharded"
table = "custom_sink"

[target]
project = "my-project-123"
dataset = "telemetry"
"""


def _lines(tmp_path: Path) -> Path:
    return write_lines(
        tmp_path / "telemetry.jsonl",
        [
            line("pipeline_run", lane="public", status="ok", queue_wait_ms=1200),
            line("pipeline_run", lane="admin", status="failed", error_class="rate_limited"),
            line("chat_turn", tier="public", kind="text", refusal="run_limit"),
            line("pipeline_render", theme="light", render_lane="run", slot_wait_ms=40),
            line("provider_status", provider="anthropic", state="live", probe="preflight"),
            line("pipeline_run", lane="gold", status="ok"),
            "plain text from the service",
        ],
    )


def _preview(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["preview", *map(str, args)], terminal_width=160)
    return result.exit_code, result.output


def test_preview_summarises_every_view(tmp_path: Path) -> None:
    code, output = _preview(_lines(tmp_path))
    assert code == 0, output
    for title in (
        "pipeline_run: 3 rows",
        "chat_turn: 1 rows",
        "pipeline_render: 1 rows",
        "provider_status: 1 rows",
        "telemetry_quality:",
    ):
        assert title in output
    assert "public 1 · admin 1" in output  # in the model's order; "gold" is NULL
    assert "rate_limited 1" in output
    assert "fields with rejected or out-of-domain values" in output
    assert "loaded into run_googleapis_com_stdout" in output


def test_preview_db_keeps_the_sink_table_and_the_views(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    code, output = _preview(_lines(tmp_path), "--db", db)
    assert code == 0, output
    assert f"kept {db}" in output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM run_googleapis_com_stdout").fetchall() == [(6,)]
        rows = con.execute("SELECT lane, status FROM pipeline_run ORDER BY ALL").fetchall()
        assert rows == [("admin", "failed"), ("public", "ok"), (None, "ok")]


def test_preview_db_starts_afresh_each_time(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    logs = _lines(tmp_path)
    for _ in range(2):
        assert _preview(logs, "--db", db)[0] == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM pipeline_run").fetchall() == [(3,)]


def test_preview_reads_the_sink_named_in_the_config(tmp_path: Path) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text(CONFIG)
    code, output = _preview(_lines(tmp_path), "--config", config)
    assert code == 0, output
    assert "pipeline_run: 3 rows" in output


def test_preview_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, output = _preview(tmp_path / "nope.jsonl")
    assert code == 2
    assert "nope.jsonl" in output


def _sink_rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        ((rows,),) = con.execute("SELECT count(*) FROM run_googleapis_com_stdout").fetchall()
    return int(rows)


def test_preview_db_refuses_to_overwrite_one_of_its_logs(tmp_path: Path) -> None:
    logs = _lines(tmp_path)
    before = logs.read_bytes()
    for same in (logs, tmp_path / "." / logs.name):
        code, output = _preview(logs, "--db", same)
        assert code == 2
        assert "is one of the LOGS" in output
        assert logs.read_bytes() == before


def test_preview_db_replaces_only_a_duckdb_database(tmp_path: Path) -> None:
    notes = tmp_path / "notes.duckdb"
    notes.write_text("my notes, not a database\n")
    code, output = _preview(_lines(tmp_path), "--db", notes)
    assert code == 2
    assert "is not a DuckDB database" in output
    assert "another path" in output
    assert notes.read_text() == "my notes, not a database\n"
    old = tmp_path / "old.duckdb"
    with duckdb.connect(str(old)) as con:
        con.execute("CREATE TABLE mine AS SELECT 1 AS x")
    assert _preview(_lines(tmp_path), "--db", old)[0] == 0
    assert _sink_rows(old) == 6


def test_preview_db_in_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    code, output = _preview(_lines(tmp_path), "--db", tmp_path / "nowhere" / "w.duckdb")
    assert code == 2
    assert "nowhere does not exist" in output
    assert "Traceback" not in output
    assert not (tmp_path / "nowhere").exists()


def test_a_failed_preview_keeps_the_previous_database(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    assert _preview(_lines(tmp_path), "--db", db)[0] == 0
    # Reading /proc/self/mem from offset 0 fails with EIO: a log that cannot be read.
    code, output = _preview("/proc/self/mem", "--db", db)
    assert code == 2  # an error
    assert "/proc/self/mem: Input/output error" in output
    assert _sink_rows(db) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["telemetry.jsonl", "warehouse.duckdb"]


def test_preview_db_removes_a_stale_write_ahead_log(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE old AS SELECT 1 AS x")
    wal = tmp_path / "warehouse.duckdb.wal"
    wal.write_bytes(b"a write-ahead log of the old database")
    assert _preview(_lines(tmp_path), "--db", db)[0] == 0
    assert not wal.exists()
    assert _sink_rows(db) == 6


def test_preview_counts_a_cut_off_gzip_as_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(path)
    code, output = _preview(path)
    assert code == 0, output
    assert "Aborted" not in output
    assert f"pipeline_run: {whole:,} rows" in output
    assert f"breaks off (cut short or corrupt) at record {whole + 1:,}" in output


def test_preview_counts_a_gzip_with_a_bad_header_as_truncated(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(BAD_HEADER)
    code, output = _preview(path)
    assert code == 1, output  # a report, ending in the no-telemetry warning
    assert "Aborted" not in output
    assert "at record 1;" in output
    assert "warning: no telemetry lines found" in output


def test_preview_reads_a_fifo(tmp_path: Path) -> None:
    data = "".join(f"{text}\n" for text in telemetry_lines(7)).encode()
    with fifo_with(tmp_path / "pipe", data) as pipe:
        code, output = _preview(pipe)
    assert code == 0, output
    assert "pipeline_run: 7 rows" in output


def test_preview_reads_dev_null_as_an_empty_log(tmp_path: Path) -> None:
    code, output = _preview("/dev/null")
    assert code == 1, output  # every view summarised, then the no-telemetry warning
    assert "pipeline_run: 0 rows" in output
    assert "warning: no telemetry lines found" in output
