"""agent-telemetry query: SQL over the views on log files or a kept database."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.warehouse.lines import line, write_lines

COUNT = "SELECT lane, count(*) AS runs FROM pipeline_run GROUP BY lane ORDER BY lane"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lines(
        tmp_path_factory.mktemp("query") / "telemetry.jsonl",
        [
            line("pipeline_run", lane="public", status="ok", queue_wait_ms=1200),
            line("pipeline_run", lane="public", status="failed"),
            line("pipeline_run", lane="admin", status="ok"),
            line("provider_status", provider="anthropic", state="no_quota", probe="preflight"),
        ],
    )


@pytest.fixture(scope="module")
def kept_db(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("kept") / "kept.duckdb"
    result = CliRunner().invoke(main, ["preview", str(logs), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


def _query(*args: str | Path, width: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["query", *map(str, args)], terminal_width=width)
    return result.exit_code, result.output


def test_query_runs_over_the_views_of_log_files(logs: Path) -> None:
    code, out = _query(COUNT, logs, "--format", "csv")
    assert code == 0, out
    assert list(csv.reader(io.StringIO(out))) == [["lane", "runs"], ["admin", "1"], ["public", "2"]]


def test_the_same_query_on_a_kept_database_gives_the_same_rows(logs: Path, kept_db: Path) -> None:
    assert _query(COUNT, "--db", kept_db, "--format", "json") == _query(
        COUNT, logs, "--format", "json"
    )
    _code, out = _query(COUNT, "--db", kept_db, "--format", "json")
    assert json.loads(out) == [{"lane": "admin", "runs": 1}, {"lane": "public", "runs": 2}]


def test_a_kept_database_is_opened_read_only(kept_db: Path) -> None:
    code, out = _query("DROP VIEW pipeline_run", "--db", kept_db)
    assert code == 2
    assert "read-only" in out.lower() or "read only" in out.lower()
    con = duckdb.connect(str(kept_db), read_only=True)
    assert con.execute("SELECT count(*) FROM pipeline_run").fetchone() == (3,)
    con.close()


def test_markdown_is_a_table_whose_cells_cannot_break_out(tmp_path: Path, logs: Path) -> None:
    code, out = _query(
        "SELECT 'a|b' AS \"x|y\", '<script>`' AS s, 3 AS n", logs, "--format", "markdown"
    )
    assert code == 0, out
    assert out.splitlines() == [
        "| x\\|y | s | n |",
        "|---|---|---:|",
        "| a\\|b | &lt;script&gt;\\` | 3 |",
    ]


def test_the_table_folds_long_names_instead_of_cutting_them(logs: Path) -> None:
    long = "provider_" + "x" * 90
    code, out = _query(f"SELECT '{long}' AS name, provider, state FROM provider_status", logs)
    assert code == 0, out
    assert "…" not in out
    first_column = [ln.split("│")[1].strip() for ln in out.splitlines() if ln.startswith("│")]
    assert "".join(first_column) == long
    assert max(len(ln) for ln in out.splitlines()) <= 80


def test_a_value_from_a_log_cannot_write_terminal_controls(logs: Path) -> None:
    code, out = _query("SELECT chr(27) || '[2J' || chr(7) || 'x' AS v", logs)
    assert code == 0, out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "\\x1b[2J\\x07x" in out  # shown escaped, as all outside text (_text.clean)


def test_errors_exit_2_and_name_the_problem(logs: Path, tmp_path: Path) -> None:
    code, out = _query("SELEC lane FROM pipeline_run", logs)
    assert (code, "the query failed") == (2, out.split(": ", 1)[1][: len("the query failed")])
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello")
    code, out = _query("SELECT 1", "--db", not_db)
    assert code == 2
    assert "cannot be opened as a DuckDB database" in out
    code, out = _query("SELECT 1")
    assert code == 2
    assert "either LOGS or --db" in out
    code, out = _query("SELECT 1", logs, "--db", not_db)
    assert code == 2


def test_hints_name_the_query_command_not_the_duckdb_cli(logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "kept.duckdb"
    result = CliRunner().invoke(main, ["preview", str(logs), "--db", str(db)])
    hint = result.output.split("e.g. ", 1)[1].strip()
    assert hint.startswith("agent-telemetry query ")
    assert "duckdb " not in result.output.replace(".duckdb", "")


def test_rows_wider_than_the_terminal_show_one_field_per_line(logs: Path) -> None:
    # SELECT * FROM pipeline_run has 16 columns: squeezed into 80 columns every value
    # was cut into strips a few characters wide.
    code, out = _query("SELECT * FROM pipeline_run ORDER BY lane, status", logs, width=80)
    assert code == 0, out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "-[ row 1 ]" in out
    first = out.split("-[ row 2 ]")[0]
    assert "lane              | admin" in first
    assert "user_tokens_today | NULL" in first  # every field, by its whole name
    assert "3 rows" in out
    # csv and json stay as they are: one record per row.
    _code, csv_out = _query("SELECT * FROM pipeline_run", logs, "--format", "csv", width=80)
    assert len(csv_out.splitlines()) == 4


def test_rows_that_fit_stay_a_table(logs: Path) -> None:
    code, out = _query(COUNT, logs, width=80)
    assert code == 0, out
    assert "-[ row" not in out
    assert "public" in out
