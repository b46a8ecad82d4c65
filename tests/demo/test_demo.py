"""make demo: the simulated morning, through the real emitter, answered by the views."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.demo import DemoResult, run_demo
from agent_telemetry.emit import capture, emit


@pytest.fixture
def result(demo_result: DemoResult) -> DemoResult:
    return demo_result


def _section(result: DemoResult, prefix: str) -> dict[object, tuple[object, ...]]:
    section = next(s for s in result.sections if s.title.startswith(prefix))
    return {row[0]: row[1:] for row in section.rows}


def test_the_demo_is_deterministic(result: DemoResult, tmp_path: Path) -> None:
    again = run_demo(tmp_path)
    assert again.log.read_bytes() == result.log.read_bytes()
    assert again.sections == result.sections


def test_every_line_is_a_valid_emitter_line_on_the_simulated_clock(result: DemoResult) -> None:
    assert result.check.clean
    assert result.load.loaded == result.lines
    times = [
        datetime.fromisoformat(orjson.loads(raw)["time"])
        for raw in result.log.read_bytes().splitlines()
    ]
    assert times == sorted(times)
    assert times[0] == datetime(2026, 5, 9, 8, 0, tzinfo=UTC)
    assert times[-1] < datetime(2026, 5, 9, 12, 30, tzinfo=UTC)


def test_the_emitter_is_back_on_the_real_clock_afterwards(result: DemoResult) -> None:
    with capture() as records:
        emit("chat_turn", tier="public", kind="text")
    written = datetime.fromisoformat(records[0]["time"])
    assert abs((datetime.now(UTC) - written).total_seconds()) < 60


def test_the_admin_fan_out_runs_five_at_a_time_and_queues(result: DemoResult) -> None:
    runs = _section(result, "Runs by lane")
    assert runs["admin"][-1] >= 15
    waits = _section(result, "Queue wait")
    assert waits["admin"][-1] == 14  # the 15th run of the fan-out queued behind 14


def test_public_users_hit_their_run_and_token_limits(result: DemoResult) -> None:
    section = next(s for s in result.sections if s.title.startswith("Refusals"))
    kinds = {(row[1], row[2]) for row in section.rows}
    assert {("refusal", "run_limit"), ("refusal", "budget")} <= kinds
    runs_today = _section(result, "Runs today")
    assert runs_today.get("11_20", (0,))[0] == 0  # public stops at 8 runs a day


def test_the_provider_goes_rate_limited_and_recovers(result: DemoResult) -> None:
    section = next(s for s in result.sections if s.title.startswith("Provider states"))
    anthropic = [row[3] for row in section.rows if row[2] == "anthropic"]
    assert anthropic == ["live", "rate_limited", "live"]
    refusals = next(s for s in result.sections if s.title.startswith("Refusals"))
    assert ("pipeline_run", "error_class", "rate_limited") in {row[:3] for row in refusals.rows}


def test_render_slots_are_contended(result: DemoResult) -> None:
    renders = _section(result, "Render slots")
    assert renders["run"][2] > 0  # slot wait p95


def test_make_demo_command_prints_every_answer(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = CliRunner().invoke(main, ["demo", "--out", str(out)], terminal_width=140)
    assert outcome.exit_code == 0, outcome.output
    for title in (
        "Runs by lane and status",
        "Queue wait by lane",
        "Runs today",
        "Tokens today",
        "Refusals and errors by kind",
        "Render slots",
        "Provider states over time",
        "Data quality",
    ):
        assert title in outcome.output
    assert f"check-logs {out / 'telemetry.jsonl'}: clean" in outcome.output
    assert (out / "warehouse.duckdb").is_file()


def test_check_logs_coverage_names_what_the_demo_never_emits(result: DemoResult) -> None:
    log = str(result.log)
    shown = CliRunner().invoke(main, ["check-logs", log, "--coverage"])
    assert shown.exit_code == 0, shown.output
    assert "telemetry coverage: " in shown.output
    covered = result.check.coverage()
    assert covered.missing
    assert covered.percent < 100
    for name in (*covered.missing_events, *covered.missing_fields, *covered.missing_members):
        assert name in shown.output
    gate = CliRunner().invoke(main, ["check-logs", log, "--coverage", "--fail-under", "100"])
    assert gate.exit_code == 1
    assert "is below --fail-under 100" in gate.output
    assert covered.missing_members[0] in gate.output
