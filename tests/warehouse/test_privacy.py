"""No string a service wrote outside the models' closed sets reaches a report or a view:
names in invalid_fields, unknown keys and event names, reasons, values."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.schema.envelope import NOT_A_FIELD, REJECTED_EVENT, RejectReason
from agent_telemetry.views import QUALITY_VIEW
from agent_telemetry.warehouse import Warehouse
from tests.warehouse.lines import TIME, line, write_lines

HOSTILE = (
    "erin@x.io",
    "John Smith",
    "jane@example.com",
    "bob@secret.org",
    "john_smith",
    "mary_jones",
    "gina@x.io",
)


def _hostile(tmp_path: Path) -> Path:
    def raw(**record: object) -> str:
        return orjson.dumps(
            {"schema_version": 1, "severity": "INFO", "time": TIME, **record}
        ).decode()

    return write_lines(
        tmp_path / "hostile.jsonl",
        [
            line(
                "pipeline_run", lane="public", status="ok", invalid_fields=["erin@x.io", "reason"]
            ),
            line("chat_turn", tier="public", kind="text", invalid_fields=["John Smith"]),
            line("pipeline_run", lane="jane@example.com", status="ok"),
            line(
                "pipeline_run", lane="admin", status="ok", **{"jane@example.com": "bob@secret.org"}
            ),
            raw(event="john_smith", lane="public"),
            raw(event="erin@x.io"),
            raw(event=REJECTED_EVENT, reason="mary_jones"),
            raw(event=REJECTED_EVENT, reason="gina@x.io"),
            raw(event=REJECTED_EVENT, reason=RejectReason.UNKNOWN_EVENT.value),
        ],
    )


# Rich fits tables to the terminal (80 columns under CliRunner) by folding or shortening
# cells, which could split a leaked value so that a substring check misses it. At this
# width nothing is shortened; _assert_none_shown also checks that nothing was.
WIDE = {"COLUMNS": "1000"}


def _run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], env=WIDE)
    # Nothing rich printed was shortened or folded, so a substring check sees every value.
    assert "…" not in result.output
    assert max(map(len, result.output.splitlines()), default=0) < int(WIDE["COLUMNS"])
    return result


def _assert_none_shown(text: str) -> None:
    assert not [s for s in HOSTILE if s in text]


def test_preview_prints_no_name_that_is_not_a_field(tmp_path: Path) -> None:
    result = _run("preview", _hostile(tmp_path))
    assert result.exit_code == 0, result.output
    _assert_none_shown(result.output)
    assert NOT_A_FIELD in result.output  # counted in telemetry_quality


def test_the_views_keep_only_field_names_in_invalid_fields(tmp_path: Path, wh: Warehouse) -> None:
    wh.load([_hostile(tmp_path)])
    wh.create_views()
    rows = wh.rows("SELECT invalid_fields FROM pipeline_run")
    assert sorted(rows, key=lambda row: len(row[0])) == [([],), ([],), (["reason"],)]
    assert wh.rows("SELECT invalid_fields FROM chat_turn") == [([],)]
    not_a_field = wh.rows(
        f"SELECT event, invalid_values FROM {QUALITY_VIEW} WHERE field = ?", [NOT_A_FIELD]
    )
    assert dict(not_a_field) == {"pipeline_run": 1, "chat_turn": 1}
    for view in wh.views():
        _assert_none_shown(repr(wh.rows(f"SELECT * FROM {view.name}")))


@pytest.mark.parametrize("output", ["text", "json"])
def test_check_logs_shows_no_unknown_name_or_reason(tmp_path: Path, output: str) -> None:
    path = _hostile(tmp_path)
    result = _run("check-logs", "--format", output, path)
    assert result.exit_code == 1
    _assert_none_shown(result.output)
    assert RejectReason.UNKNOWN_EVENT.value in result.output  # a reason the emitter writes
    if output == "json":
        report = json.loads(result.output)
        assert report["unknown_events"] == {"<name not shown>": 2}
        assert report["rejected"] == {"<name not shown>": 2, "unknown_event": 1}


@pytest.mark.parametrize("output", ["text", "json"])
def test_check_logs_without_telemetry_warns_and_fails(tmp_path: Path, output: str) -> None:
    path = write_lines(tmp_path / "service.log", ["plain text", '{"event": "a structlog line"}'])
    result = CliRunner().invoke(main, ["check-logs", "--format", output, str(path)])
    assert result.exit_code == 1
    if output == "text":
        assert "no telemetry lines found" in result.output
    else:
        report = json.loads(result.output)
        assert (report["clean"], report["telemetry_lines"]) == (False, 0)


def test_preview_of_lines_without_timestamps(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "notime.jsonl", [line("pipeline_run", time=None, lane="public")])
    result = CliRunner().invoke(main, ["preview", str(path)])
    assert result.exit_code == 0, result.output
    assert "no timestamps" in result.output
