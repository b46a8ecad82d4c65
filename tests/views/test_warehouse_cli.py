"""agent-telemetry preview: load, run every view, summarise; --db keeps the database."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.views.lines import line, write_lines

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
