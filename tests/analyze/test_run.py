"""`views analyze QUERY.sql --run DB`: an analyst's query answered by GoogleSQL's reference
implementation on a sample of the local sink table, as BigQuery would answer it there."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.warehouse import Warehouse
from tests.analyze.oracle import Entry
from tests.analyze.oracle_corpus import START
from tests.conftest import EXAMPLE_CONFIG, REPO

pytestmark = pytest.mark.usefixtures("analyzer_runtime")

QUERY = """\
-- Runs per lane, and how many waited in the queue
SELECT lane, COUNT(*) AS runs, COUNTIF(queue_wait_ms > 0) AS waited
FROM `acme-agents-prod.agent_telemetry.pipeline_run`
GROUP BY lane
ORDER BY lane;
"""


def _run(index: int, lane: str, wait: object) -> Entry:
    payload = {"event": "pipeline_run", "schema_version": 1, "lane": lane, "status": "ok"}
    payload["queue_wait_ms"] = wait
    return Entry.of(payload, START + timedelta(minutes=index), f"run-{index}")


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `preview --db` database: five runs, one wait written as " 5" (refused: NULL)."""
    folder = tmp_path_factory.mktemp("run")
    logs = folder / "runs.jsonl"
    entries = [
        _run(0, "public", 0),
        _run(1, "public", 1200),
        _run(2, "admin", "30000"),
        _run(3, "admin", " 5"),
        _run(4, "premium", 7.0),
    ]
    logs.write_text("".join(json.dumps(e.all_logs_row()) + "\n" for e in entries), "utf-8")
    path = folder / "sample.duckdb"
    with Warehouse(path) as wh:
        wh.load([logs])
    return path


def _answer(tmp_path: Path, database: Path, *args: str) -> Result:
    query = tmp_path / "lanes.sql"
    query.write_text(QUERY, encoding="utf-8")
    argv = ["views", "analyze", "--config", str(EXAMPLE_CONFIG), str(query), "--run", str(database)]
    return CliRunner().invoke(main, [*argv, *args])


def test_the_answer_is_googlesqls_on_the_sample(tmp_path: Path, database: Path) -> None:
    result = _answer(tmp_path, database)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[5].startswith(f"GoogleSQL's reference implementation on 5 sink rows of {database}")
    assert lines[6] == "what BigQuery would answer on these rows only. Slow: for small samples."
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in lines if "│" in line]
    assert cells[-3:] == [["admin", "2", "1"], ["premium", "1", "1"], ["public", "2", "1"]]
    assert lines[-1] == "3 row(s)"


def test_the_sample_is_capped_at_the_earliest_rows(tmp_path: Path, database: Path) -> None:
    result = _answer(tmp_path, database, "--sample", "2")
    assert result.exit_code == 0, result.output
    assert "on 2 sink rows" in result.output
    assert result.output.splitlines()[-1] == "1 row(s)"


def test_a_sample_over_the_cap_is_refused(tmp_path: Path, database: Path) -> None:
    result = _answer(tmp_path, database, "--sample", "10001")
    assert result.exit_code == 2
    assert "--sample" in result.output


def test_run_answers_on_the_local_sinks_layout_only(tmp_path: Path, database: Path) -> None:
    result = _answer(tmp_path, database, "--layout", "analytics")
    assert result.exit_code == 2
    assert "partitioned layout" in result.output


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    other = tmp_path / "not.duckdb"
    other.write_text("not a database", encoding="utf-8")
    result = _answer(tmp_path, other)
    assert result.exit_code == 2  # an error, not a violation
    assert "cannot read the sink table" in result.output
    assert "not a database" not in result.output


def _doc_blocks() -> tuple[str, list[str]]:
    """(lanes.sql, the transcript's lines) of docs/analyst-local.md's --run example."""
    text = (REPO / "docs" / "analyst-local.md").read_text(encoding="utf-8")
    sql = text.split("`lanes.sql`:\n\n```sql\n", 1)[1].split("```", 1)[0]
    transcript = text.split("```console\n$ agent-telemetry views analyze lanes.sql", 1)[1]
    return sql, transcript.split("```", 1)[0].splitlines()[1:]


def test_the_docs_example_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's database, the page's query: the page shows the real output."""
    sql, expected = _doc_blocks()
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLE_CONFIG, tmp_path / "telemetry.toml")
    (tmp_path / "lanes.sql").write_text(sql, encoding="utf-8")
    demo = CliRunner().invoke(main, ["demo", "--out", "demo-out"])
    assert demo.exit_code == 0, demo.output
    args = ["views", "analyze", "lanes.sql", "--run", "demo-out/warehouse.duckdb"]
    result = CliRunner().invoke(main, [*args, "--sample", "200"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == expected
