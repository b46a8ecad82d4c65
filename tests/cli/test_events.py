from __future__ import annotations

from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.schema import catalogue


def test_events_prints_every_event_and_field() -> None:
    result = CliRunner().invoke(main, ["events"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for spec in catalogue():
        assert spec.name in result.output
        for field in spec.fields:
            assert field.name in result.output
    assert "3,600,000" in result.output
    assert "needs_attention" in result.output


def test_unknown_event_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["events", "--event", "nope"])
    assert result.exit_code == 2
    assert "unknown event" in result.output


def test_every_command_has_help() -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--help"]).exit_code == 0
    for name in main.list_commands(None):  # type: ignore[arg-type]
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Usage" in result.output
