"""`agent-telemetry views analyze FILE.sql`: an analyst's query, checked against the views
(as tables with the column types the analyzer derives) before it costs anything on
BigQuery."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.views import GENERATED_DIR, sql_path
from tests.conftest import EXAMPLE_CONFIG, REPO

pytestmark = pytest.mark.usefixtures("analyzer_runtime")

GOOD = """\
-- Failure rate by lane over the last 7 days
SELECT lane, COUNTIF(status = 'failed') / COUNT(*) AS failure_rate
FROM `acme-agents-prod.agent_telemetry.pipeline_run`
WHERE timestamp >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
GROUP BY lane;
"""

BAD = """\
-- Invalid values per day and event
SELECT q.day, q.event, SUM(q.invalid_values) AS invalid
FROM agent_telemetry.telemetry_quality AS q
WHERE q.day >= '2025-01-01'
  AND q.schema_version = '1'
GROUP BY q.day, q.event
"""


def _analyze(tmp_path: Path, sql: str, *args: str) -> Result:
    query = tmp_path / "query.sql"
    query.write_text(sql, encoding="utf-8")
    return CliRunner().invoke(
        main, ["views", "analyze", "--config", str(EXAMPLE_CONFIG), *args, str(query)]
    )


def test_an_accepted_query_prints_its_output_columns_and_exits_0(tmp_path: Path) -> None:
    result = _analyze(tmp_path, GOOD)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == (
        "checking against 6 views in acme-agents-prod.agent_telemetry (partitioned layout)"
    )
    assert lines[1] == f"{tmp_path / 'query.sql'}:2: accepted"
    assert lines[2:] == ["  lane          STRING", "  failure_rate  FLOAT64"]


def test_a_type_error_prints_the_analyzers_message_with_line_and_column(
    tmp_path: Path,
) -> None:
    result = _analyze(tmp_path, BAD)
    assert result.exit_code == 1
    where = f"{tmp_path / 'query.sql'}:5:7"
    assert f"{where}: error: No matching signature for operator = for argument types: " in (
        result.output
    )
    assert "INT64, STRING" in result.output
    assert "  5 |   AND q.schema_version = '1'\n    |       ^\n" in result.output


def test_every_statement_is_checked_up_to_the_first_error(tmp_path: Path) -> None:
    result = _analyze(tmp_path, GOOD + "\n" + BAD)
    assert result.exit_code == 1
    assert f"{tmp_path / 'query.sql'}:2: accepted" in result.output
    assert f"{tmp_path / 'query.sql'}:11:7: error: No matching signature" in result.output


def test_the_views_are_tables_with_the_analyzers_column_types(tmp_path: Path) -> None:
    sql = (
        "SELECT r.attempts + 1 AS next_attempt, r.invalid_fields, q.day\n"
        "FROM agent_telemetry.pipeline_run AS r\n"
        "JOIN `acme-agents-prod`.agent_telemetry.telemetry_quality AS q\n"
        "  ON q.day = DATE(r.timestamp)\n"
    )
    result = _analyze(tmp_path, sql)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2:] == [
        "  next_attempt    INT64",
        "  invalid_fields  ARRAY<STRING>",
        "  day             DATE",
    ]


def test_an_unknown_column_of_a_view_is_rejected(tmp_path: Path) -> None:
    result = _analyze(tmp_path, "SELECT lane, user_id FROM agent_telemetry.pipeline_run\n")
    assert result.exit_code == 1
    assert "query.sql:1:14: error: Unrecognized name: user_id" in result.output


def test_the_sink_table_of_the_chosen_layout_is_in_the_catalog(tmp_path: Path) -> None:
    sql = (
        "SELECT COUNT(*) AS lines FROM `acme-agents-prod.agent_logs.run_googleapis_com_stdout_*`\n"
        "WHERE _TABLE_SUFFIX >= '20250101'\n"
    )
    result = _analyze(tmp_path, sql, "--layout", "sharded")
    assert result.exit_code == 0, result.output
    assert "(sharded layout)" in result.output
    assert result.output.splitlines()[-1] == "  lines  INT64"


def test_the_caret_lines_up_after_tabs_and_non_ascii_text(tmp_path: Path) -> None:
    """ZetaSQL counts columns in characters, tabs expanded to 8: so does the caret line."""
    sql = "SELECT 'é€' AS a\n\tFROM agent_telemetry.chat_turn\nWHERE\tnope = 1 OR 'é' = nope\n"
    result = _analyze(tmp_path, sql)
    assert result.exit_code == 1
    assert "query.sql:3:9: error: Unrecognized name: nope" in result.output
    assert "  3 | WHERE   nope = 1 OR 'é' = nope\n    |         ^\n" in result.output


def test_a_file_without_a_statement_fails(tmp_path: Path) -> None:
    result = _analyze(tmp_path, "-- nothing here\n")
    assert result.exit_code == 1
    assert "query.sql: no SQL statement" in result.output


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["views", "analyze", "--config", str(EXAMPLE_CONFIG), str(tmp_path / "no.sql")]
    )
    assert result.exit_code == 2  # an error
    assert result.output.strip().splitlines() == [f"Error: {tmp_path / 'no.sql'}: no such file"]


def test_a_committed_view_the_analyzer_rejects_fails_the_command(tmp_path: Path) -> None:
    sql_dir = tmp_path / "views"
    shutil.copytree(GENERATED_DIR, sql_dir)
    broken = sql_path(sql_dir, "partitioned", "chat_turn")
    broken.write_text(broken.read_text().replace("SAFE_CAST(", "SAFE_CAST_TO(", 1))
    result = _analyze(tmp_path, GOOD, "--sql-dir", str(sql_dir))
    assert result.exit_code == 2  # the queries cannot be checked: an error
    assert f"{broken}:" in result.output
    assert "Function not found: SAFE_CAST_TO" in result.output
    assert "1 committed view(s) are rejected by the analyzer" in result.output


def _entry(tmp_path: Path, prelude: str) -> subprocess.CompletedProcess[str]:
    query = tmp_path / "query.sql"
    query.write_text(GOOD, encoding="utf-8")
    code = f"{prelude}; from agent_telemetry.cli import main; main()"
    return subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "views",
            "analyze",
            "--config",
            str(EXAMPLE_CONFIG),
            str(query),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=False,
    )


def test_the_command_runs_cleanly_in_its_own_process(tmp_path: Path) -> None:
    """The real entry point: exit 0, nothing on stderr (no finalizer noise at exit)."""
    result = _entry(tmp_path, "import sys")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "accepted" in result.stdout


@pytest.mark.parametrize("module", ["zetasql", "wasmtime"])
def test_without_the_analyze_extra_one_line_names_it(tmp_path: Path, module: str) -> None:
    # sys.modules[name] = None makes `import name` raise ImportError, as if not installed.
    result = _entry(tmp_path, f"import sys; sys.modules[{module!r}] = None")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"Error: GoogleSQL's analyzer needs the [analyze] extra ({module} is missing): "
        "pip install 'agent-telemetry[analyze]'"
    ]


def test_the_first_compile_prints_one_line_with_its_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agent_telemetry.analyze.cli import _compile_notice

    _compile_notice(None, Path("/cache/zetasql/z.cwasm"))
    _compile_notice(63.24, Path("/cache/zetasql/z.cwasm"))
    assert capsys.readouterr().err == (
        "compiling GoogleSQL's analyzer (once per machine, about a minute)..."
        " done in 63.2 s, cached in /cache/zetasql\n"
    )


def test_a_services_views_are_typed_from_its_own_catalogue(tmp_path: Path) -> None:
    # examples/service: its cache_lookup view reads payload fields only its catalogue has.
    # Typed from the package's events, every one of its views was rejected.
    from tests.service import copy_service

    service = copy_service(tmp_path / "svc")
    query = tmp_path / "query.sql"
    query.write_text(
        "SELECT 1;\nSELECT result, COUNT(*) AS lookups\n"
        "FROM `acme-myservice-prod.myservice_telemetry.cache_lookup` GROUP BY result;\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main, ["views", "analyze", "--config", str(service / "telemetry.toml"), str(query)]
    )
    assert result.exit_code == 0, result.output
    assert "checking against 7 views in acme-myservice-prod.myservice_telemetry" in result.output
    assert "  result   STRING" in result.output
