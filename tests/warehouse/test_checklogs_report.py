"""check-logs' JSON report (``as_dict``, ``--format json``): the keys and values CI and
analysts read, and the envelope checks behind its violations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.schema import ProviderStatus
from agent_telemetry.schema.versions import version_registry
from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._checking.check_logs import LINE_RULES, OTHER_NAME
from tests.warehouse.lines import entry, line, write_lines

# One event only, so the whole report fits in one assertion.
PROVIDER_ONLY = version_registry((ProviderStatus,))
LIVE = {"provider": "vertex", "state": "live", "probe": "preflight"}


def _violations(path: Path) -> dict[str, Any]:
    """The ``violations`` of provider_status as the JSON report shows them."""
    report = check_logs([path], PROVIDER_ONLY).as_dict()
    violations: dict[str, Any] = report["events"]["provider_status"]["violations"]
    return violations


def test_the_report_dict_holds_every_promised_key_and_value(tmp_path: Path) -> None:
    logged_twice = entry("provider_status", insert_id="dup-1", **LIVE)
    path = write_lines(
        tmp_path / "mixed.jsonl",
        [
            # Maximum first, a lower value after: max_seen is the maximum, not the last.
            line("provider_status", **LIVE, retry_after_s=86_400, blocked_runs=30),
            line("provider_status", **LIVE, retry_after_s=5),
            line("provider_status", **LIVE, retry_after_s="7"),  # a BigQuery read-back
            line("provider_status", state="down", probe="preflight"),
            line("provider_status", provider="openai", state="down", probe="preflight"),
            line("pipeline_run", lane="public", status="ok"),  # not in this registry
            line("telemetry_rejected", reason="unknown_event"),
            json.dumps(logged_twice),
            json.dumps(logged_twice),  # the same LogEntry exported twice: checked once
            "INFO not telemetry",
        ],
    )

    report = check_logs([path], PROVIDER_ONLY).as_dict()

    assert list(report) == [
        "clean",
        "telemetry_lines",
        "duplicates",
        "conflicting_duplicates",
        "repeated",
        "stopped",
        "strict_types",
        "coerced",
        "files",
        "events",
        "unknown_events",
        "rejected",
        "rare_combinations",
        "rules",
    ]
    assert report == {
        "clean": False,
        "telemetry_lines": 9,
        "duplicates": 1,
        "conflicting_duplicates": 0,
        "repeated": [],
        "stopped": 0,
        "strict_types": False,
        "coerced": {"numbers_as_strings": 1, "booleans_as_strings": 0, "integral_doubles": 0},
        "files": [
            {
                "path": str(path),
                "layout": "lines",
                "encoding": "utf-8",
                "records": 10,
                "telemetry": 9,
                "non_telemetry": 1,
                "truncated": 0,
                "truncated_at": [],
                "oversized": 0,
                "too_deep": 0,
                "undecodable": 0,
                "duplicates": 1,
                "stopped": None,
            }
        ],
        "events": {
            "provider_status": {
                "lines": 6,
                "valid": 4,
                "invalid": 2,
                "versions": {"1": 6},
                # By field, then rule; counts are lines.
                "violations": {"provider": {"required": 1}, "state": {"member": 2}},
                "coverage": {
                    "provider": {
                        "kind": "enum",
                        "valid_lines": 5,
                        "seen": ["vertex", "openai"],
                        "not_seen": ["anthropic", "ollama", "other"],
                    },
                    "state": {
                        "kind": "enum",
                        "valid_lines": 4,
                        "seen": ["live"],
                        "not_seen": ["rate_limited", "no_quota", "unreachable"],
                    },
                    "probe": {
                        "kind": "enum",
                        "valid_lines": 6,
                        "seen": ["preflight"],
                        "not_seen": ["turn_outcome"],
                    },
                    "retry_after_s": {
                        "kind": "int",
                        "valid_lines": 3,
                        "ge": 0,
                        "le": 86_400,
                        "min_seen": 5,
                        "max_seen": 86_400,
                        "ge_seen": False,
                        "le_seen": True,
                    },
                    # Values seen, but not the upper bound: le_seen stays False.
                    "blocked_runs": {
                        "kind": "int",
                        "valid_lines": 1,
                        "ge": 0,
                        "le": 60,
                        "min_seen": 30,
                        "max_seen": 30,
                        "ge_seen": False,
                        "le_seen": False,
                    },
                },
            }
        },
        "unknown_events": {OTHER_NAME: 1},
        "rejected": {"unknown_event": 1},
        # The 4 valid lines share one combination of closed-set values: fewer than 5.
        "rare_combinations": {
            "k": 5,
            "rare_lines": 4,
            "days": [
                {
                    "event": "provider_status",
                    "day": "2026-05-09",
                    "lines": 4,
                    "combinations": 1,
                    "rare_lines": 4,
                    "rare_combinations": 1,
                    "rarest": [4],
                }
            ],
        },
        "rules": dict(LINE_RULES),
    }
    assert list(report["rules"]) == list(LINE_RULES)


def test_strict_types_is_reported_as_given(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "ok.jsonl", [line("provider_status", **LIVE)])
    assert check_logs([path], PROVIDER_ONLY, strict_types=True).as_dict()["strict_types"] is True
    assert check_logs([path], PROVIDER_ONLY).as_dict()["strict_types"] is False


def test_the_cli_json_report_is_the_report_dict(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "cli.jsonl",
        [line("provider_status", **LIVE), line("provider_status", **LIVE, blocked_runs=61)],
    )
    result = CliRunner().invoke(main, ["check-logs", str(path), "--format", "json"])
    assert result.exit_code == 1, result.output
    shown = json.loads(result.output)
    assert shown == check_logs([path]).as_dict()
    # What CI reads of one event: these keys, in this order.
    status = shown["events"]["provider_status"]
    assert list(status) == ["lines", "valid", "invalid", "versions", "violations", "coverage"]
    assert {key: status[key] for key in ("lines", "valid", "invalid", "versions")} == {
        "lines": 2,
        "valid": 1,
        "invalid": 1,
        "versions": {"1": 2},
    }
    assert status["violations"] == {"blocked_runs": {"range": 1}}


def test_malformed_invalid_fields_is_an_envelope_violation(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "envelope.jsonl",
        [
            line("provider_status", **LIVE, invalid_fields="probe"),  # not an array
            # Not all strings: the list is malformed, so no name in it counts as dropped.
            line("provider_status", **LIVE, invalid_fields=["probe", 5]),
            line("provider_status", **LIVE, invalid_fields=[]),  # well formed, nothing dropped
        ],
    )
    assert _violations(path) == {"invalid_fields": {"envelope": 2}}


def test_unknown_fields_negative_or_not_a_number_is_an_envelope_violation(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "unknown.jsonl",
        [
            line("provider_status", **LIVE, unknown_fields=-1),
            line("provider_status", **LIVE, unknown_fields="many"),
            line("provider_status", **LIVE, unknown_fields=3),
            line("provider_status", **LIVE, unknown_fields=0),  # none dropped: a valid line
        ],
    )
    report = check_logs([path], PROVIDER_ONLY).as_dict()["events"]["provider_status"]
    assert (report["lines"], report["valid"]) == (4, 1)
    assert report["violations"] == {"unknown_fields": {"envelope": 2, "unknown_keys": 1}}


def test_a_non_string_event_is_an_unknown_event_not_a_crash(tmp_path: Path) -> None:
    # `event` is any JSON a service wrote: a list or object must not reach a dict lookup.
    path = write_lines(
        tmp_path / "odd-events.jsonl",
        [
            '{"event": ["provider_status"], "schema_version": 1}',
            '{"event": {}, "schema_version": 1}',
        ],
    )
    report = check_logs([path], PROVIDER_ONLY)
    assert dict(report.unknown_events) == {OTHER_NAME: 2}
    assert report.events["provider_status"].lines == 0
