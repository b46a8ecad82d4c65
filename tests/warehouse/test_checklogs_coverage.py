"""``check-logs --coverage`` and ``--fail-under``: which events, fields and enum members
of a service's catalogue no valid line showed, as text, as JSON and as the exit status
a CI job reads (docs/ci.md). A small catalogue of the test's own, so every figure is
known: 9 items declared, 5 seen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from tests.service import write_module
from tests.warehouse.lines import line, write_lines

MODELS = '''
from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count, flag


class Door(StrEnum):
    OPEN = "open"
    SHUT = "shut"


class DoorCheck(TelemetryEvent):
    """One line per door check."""

    event_name: ClassVar[str] = "door_check"
    schema_version: ClassVar[int] = 1

    door: Door = Field(description="How the door stood.")
    wait_ms: int | None = count(0, 1000, "Wait before the check, in milliseconds.")


class Knock(TelemetryEvent):
    """One line per knock."""

    event_name: ClassVar[str] = "knock"
    schema_version: ClassVar[int] = 1

    loud: bool | None = flag("Whether the knock was loud.")


class Bell(TelemetryEvent):
    """One line per ring of the bell."""

    event_name: ClassVar[str] = "bell"
    schema_version: ClassVar[int] = 1

    rung: bool | None = flag("Whether the bell rang.")


EVENTS = {m.event_name: m for m in (DoorCheck, Knock, Bell)}
'''

DEPLOYMENT = """
[catalogue]
module = "{module}"
lock = "schema.lock.json"

[source]
project = "acme-door-prod"
dataset = "door_logs"
layout = "partitioned"

[target]
project = "acme-door-prod"
dataset = "door_telemetry"
"""

# Declared: door_check, its 2 fields and 2 members; knock and its field; bell and its field.
# Seen: door_check, door_check.door, door_check.door=open, door_check.wait_ms and knock.
MISSING = {
    "missing_events": ["bell"],
    "missing_fields": ["knock.loud", "bell.rung"],
    "missing_members": ["door_check.door=shut"],
}
SHOWN = [
    "telemetry coverage: 55.6% (5 of 9 declared)",
    "  events never seen (1): bell",
    "  fields never seen (2): knock.loud, bell.rung",
    "  enum members never seen (1): door_check.door=shut",
]


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(telemetry.toml naming the catalogue, a clean log of it); the catalogue's folder
    on sys.path is undone afterwards (write_module gives it a name of its own)."""
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    config = tmp_path / "telemetry.toml"
    config.write_text(DEPLOYMENT.format(module=write_module(tmp_path, MODELS)), encoding="utf-8")
    log = write_lines(
        tmp_path / "app.jsonl",
        [line("door_check", door="open", wait_ms=5), line("knock"), "service started"],
    )
    return config, log


def _check_logs(config: Path, log: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["check-logs", str(log), "--config", str(config), *args])


def test_coverage_lists_what_no_valid_line_showed(service: tuple[Path, Path]) -> None:
    result = _check_logs(*service, "--coverage")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-len(SHOWN) :] == SHOWN


def test_coverage_in_json_counts_the_same(service: tuple[Path, Path]) -> None:
    result = _check_logs(*service, "--coverage", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["clean"] is True
    assert report["telemetry_coverage"] == {"percent": 55.56, "declared": 9, **MISSING}


def test_without_coverage_no_coverage_is_reported(service: tuple[Path, Path]) -> None:
    result = _check_logs(*service, "--format", "json")
    assert result.exit_code == 0, result.output
    assert "telemetry_coverage" not in json.loads(result.output)
    assert "telemetry coverage" not in _check_logs(*service).output


@pytest.mark.parametrize(
    ("threshold", "figure"),
    [("55", None), ("55.5", None), ("55.6", "55.56"), ("60", "55.6"), ("100", "55.6")],
)
def test_fail_under_fails_a_clean_log_below_the_threshold(
    service: tuple[Path, Path], threshold: str, figure: str | None
) -> None:
    result = _check_logs(*service, "--fail-under", threshold)  # implies --coverage
    assert result.exit_code == (0 if figure is None else 1), result.output
    assert SHOWN[0] in result.output
    below = [line for line in result.stderr.splitlines() if "is below" in line]
    # 55.555...% below 55.6 reads "55.56%", never "55.6% is below --fail-under 55.6"
    expected = f"telemetry coverage {figure}% is below --fail-under {threshold}"
    assert below == ([] if figure is None else [expected])


def test_fail_under_with_json_reports_the_coverage(service: tuple[Path, Path]) -> None:
    result = _check_logs(*service, "--format", "json", "--fail-under", "90")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["telemetry_coverage"]["percent"] == 55.56
    assert "telemetry coverage 55.6% is below --fail-under 90" in result.stderr
