"""check-logs: real lines against the models, never echoing a value."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.cli import main
from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._checking.check_logs import NOT_A_FIELD, OTHER_NAME, UNKNOWN_KEY
from tests.warehouse.lines import entry, line, write_lines


def _run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check-logs", *map(str, args)], terminal_width=200)
    return result.exit_code, result.output


def test_a_clean_file_exits_zero_and_counts_every_event(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "clean.jsonl",
        [
            line("pipeline_run", lane="public", status="ok", queue_wait_ms=0),
            line("pipeline_run", lane="admin", status="failed", error_class="timeout"),
            line("chat_turn", tier="public", kind="text", refusal="budget"),
            line("pipeline_render", theme="dark", render_lane="run", passed=True, attempt=2),
            line("provider_status", provider="vertex", state="rate_limited", probe="preflight"),
        ],
    )
    code, output = _run(path)
    assert code == 0, output
    assert "clean" in output
    report = check_logs([path])
    assert report.clean
    assert {name: (c.lines, c.valid) for name, c in report.events.items()} == {
        "pipeline_run": (2, 2),
        "chat_turn": (1, 1),
        "pipeline_render": (1, 1),
        "provider_status": (1, 1),
    }


def test_violations_are_counted_by_field_and_rule_and_exit_one(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bad.jsonl",
        [
            line("pipeline_run", lane="gold", status="ok"),
            line("pipeline_run", lane="public", status="ok", queue_wait_ms=-1, attempts=True),
            line("pipeline_run", lane="public", status="ok", model_calls=1.0),
            line("pipeline_run", status="ok"),
            line("pipeline_run", lane="public", status="ok", invalid_fields=["reason"]),
            line("pipeline_run", lane="public", status="ok", unknown_fields=2),
            line("pipeline_run", lane="public", status="ok", user_email="a@b.example"),
            line("pipeline_run", lane="public", status="ok", time="2026-05-09 07:35:25"),
            line("pipeline_run", lane="public", status="ok"),
        ],
    )
    # --strict-types: the emitter's own contract, so model_calls=1.0 is a type violation.
    report = check_logs([path], strict_types=True)
    run = report.events["pipeline_run"]
    assert (run.lines, run.valid, run.invalid) == (9, 1, 8)
    assert dict(run.violations) == {
        ("lane", "member"): 1,
        ("queue_wait_ms", "range"): 1,
        ("attempts", "type"): 1,
        ("model_calls", "type"): 1,
        ("lane", "required"): 1,
        ("reason", "dropped"): 1,
        ("unknown_fields", "unknown_keys"): 1,
        # --strict-types: the emitter writes the flag 1 (issue 36), never a count.
        ("unknown_fields", "envelope"): 1,
        (UNKNOWN_KEY, "unknown_keys"): 1,
        ("time", "time"): 1,
    }
    code, output = _run(path, "--strict-types")
    assert code == 1
    assert "8 line(s) with violations" in output
    for secret in ("gold", "a@b.example", "user_email", "2026-05-09 07:35:25"):
        assert secret not in output


def test_non_telemetry_and_truncated_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    good = line("chat_turn", tier="admin", kind="action")
    path = write_lines(
        tmp_path / "service.log",
        ["INFO booting", good, good[:-9], '{"event": "request finished"}', "", good],
    )
    code, output = _run(path, "--format", "json")
    assert code == 0, output
    (checked,) = json.loads(output)["files"]
    assert checked == {
        "path": str(path),
        "layout": "lines",
        "records": 5,
        "telemetry": 2,
        "non_telemetry": 2,
        "truncated": 1,
        "truncated_at": [3],
        "encoding": "utf-8",
        "oversized": 0,
        "too_deep": 0,
        "undecodable": 0,
        "duplicates": 0,
        "stopped": None,
    }


def test_logentry_exports_are_checked_by_their_payload(tmp_path: Path) -> None:
    entries = [entry("pipeline_run", lane="premium", status="ok"), {"textPayload": "hi"}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(entries, indent=2))
    report = check_logs([path])
    assert report.clean
    assert report.events["pipeline_run"].valid == 1
    assert report.files[0].non_telemetry == 1


def test_unknown_and_rejected_events_fail_and_unknown_names_are_hidden(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "odd.jsonl",
        [
            line("cache_lookup", tier="public"),
            line("alice@example.com"),
            line("telemetry_rejected", reason="unknown_event"),
            line("pipeline_run", lane="public", status="ok", invalid_fields=["bob@example.com"]),
        ],
    )
    report = check_logs([path])
    assert dict(report.unknown_events) == {OTHER_NAME: 2}  # names are never shown
    assert dict(report.rejected) == {"unknown_event": 1}
    assert dict(report.events["pipeline_run"].violations) == {(NOT_A_FIELD, "dropped"): 1}
    code, output = _run(path, "--format", "json")
    assert code == 1
    assert "example.com" not in output


def test_coverage_names_members_and_bound_extremes_seen(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "cov.jsonl",
        [
            line("pipeline_render", theme="dark", render_lane="run", slot_wait_ms=0, passed=True),
            line("pipeline_render", theme="dark", render_lane="toggle", slot_wait_ms=120_000),
            line("pipeline_render", theme="dark", render_lane="run", attempt=2),
        ],
    )
    coverage = check_logs([path]).as_dict()["events"]["pipeline_render"]["coverage"]
    assert coverage["theme"] == {
        "kind": "enum",
        "valid_lines": 3,
        "seen": ["dark"],
        "not_seen": ["light"],
    }
    assert coverage["render_lane"]["not_seen"] == []
    assert coverage["slot_wait_ms"] == {
        "kind": "int",
        "valid_lines": 2,
        "ge": 0,
        "le": 120_000,
        "min_seen": 0,
        "max_seen": 120_000,
        "ge_seen": True,
        "le_seen": True,
    }
    assert coverage["attempt"]["ge_seen"] is False
    assert coverage["attempt"]["le_seen"] is True
    assert coverage["passed"] == {
        "kind": "bool",
        "valid_lines": 1,
        "seen": [True],
        "not_seen": [False],
    }


ADVERSARIAL = st.one_of(
    st.emails(),
    st.uuids().map(str),
    st.text(min_size=6).map(lambda t: f"secret-{t}"),
    st.integers(min_value=10**7, max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: abs(f) > 10**6),
    st.dictionaries(st.just("nested"), st.emails(), min_size=1),
)


@settings(max_examples=40, deadline=None)
@given(
    field=st.sampled_from(["lane", "queue_wait_ms", "user_runs_today", "attempts"]),
    value=ADVERSARIAL,
)
def test_no_rejected_value_ever_reaches_the_report(field: str, value: object) -> None:
    import tempfile

    fields: dict[str, object] = {"lane": "public", "status": "ok", field: value}
    with tempfile.TemporaryDirectory() as tmp:
        path = write_lines(Path(tmp) / "x.jsonl", [line("pipeline_run", **fields)])
        for fmt in ("text", "json"):
            code, output = _run(path, "--format", fmt)
            assert code == 1
            rendered = json.dumps(value)
            assert rendered not in output
            if isinstance(value, str):
                assert value not in output


def test_time_is_not_required_inside_a_logentry(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "entries.jsonl", [json.dumps(entry("chat_turn", tier="public", kind="text"))]
    )
    # Cloud Logging lifted the line's time into the entry's timestamp.
    assert check_logs([path]).clean


def test_check_logs_needs_no_duckdb_or_sqlglot() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agent_telemetry.warehouse._checking.render\n"
        "print([m for m in ('duckdb', 'sqlglot', 'jinja2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lines_of_a_retired_version_are_checked_against_their_own_model(tmp_path: Path) -> None:
    from agent_telemetry.schema import PipelineRun
    from agent_telemetry.schema.versions import version_registry
    from tests.schema.copies import copy_model, models_with

    # v2 drops `attempts`; v1 (the real model) is kept as the retired version.
    v2 = copy_model(PipelineRun, version=2, drop=("attempts",))
    versions = version_registry(models_with(v2).values(), (PipelineRun,))
    v1_line = line("pipeline_run", lane="public", status="ok", attempts=1)
    v2_line = line("pipeline_run", lane="public", status="ok").replace(
        '"schema_version":1', '"schema_version":2'
    )
    v2_with_v1_field = v2_line.replace('"status":"ok"', '"status":"ok","attempts":1')
    unknown_version = v2_line.replace('"schema_version":2', '"schema_version":7')
    path = write_lines(
        tmp_path / "mixed.jsonl", [v1_line, v2_line, v2_with_v1_field, unknown_version]
    )

    check = check_logs([path], versions).events["pipeline_run"]

    assert (check.lines, check.valid) == (4, 2)
    assert check.violations == {
        (UNKNOWN_KEY, "unknown_keys"): 1,
        ("schema_version", "schema_version"): 1,
    }
    assert "attempts" not in check.coverage  # coverage is of the current version's fields


def test_valid_json_that_orjson_refuses_is_checked_not_counted_as_truncated(tmp_path: Path) -> None:
    overflow = line("pipeline_run", lane="public", status="ok").replace(
        '"status":"ok"', '"status":"ok","queue_wait_ms":1e400'
    )
    path = write_lines(tmp_path / "overflow.jsonl", [overflow])

    report = check_logs([path])

    assert report.files[0].truncated == 0
    assert report.events["pipeline_run"].violations == {("queue_wait_ms", "type"): 1}


def test_a_dropped_required_field_is_reported_once_as_dropped(tmp_path: Path) -> None:
    # The emitter dropped `lane` (required) and named it: one violation, not also `required`.
    path = write_lines(
        tmp_path / "dropped.jsonl",
        [line("pipeline_run", status="ok", invalid_fields=["lane"])],
    )
    run = check_logs([path]).events["pipeline_run"]
    assert dict(run.violations) == {("lane", "dropped"): 1}


def test_truncated_positions_are_capped_at_five(tmp_path: Path) -> None:
    good = line("chat_turn", tier="admin", kind="action")
    for count, shown in ((5, [2, 4, 6, 8, 10]), (6, [2, 4, 6, 8, 10])):
        path = write_lines(tmp_path / f"cut{count}.jsonl", [good, good[:-9]] * count)
        (checked,) = check_logs([path]).files
        assert checked.truncated == count
        assert checked.truncated_at == shown


def test_blank_lines_are_no_records_in_either_command(tmp_path: Path) -> None:
    from agent_telemetry.warehouse import Warehouse

    good = line("chat_turn", tier="admin", kind="action")
    path = tmp_path / "gaps.jsonl"
    path.write_bytes(f"\n{good}\n \n\t\r\n{good}\r\n\r\n\n".encode())
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    assert (loaded.records, loaded.loaded) == (checked.records, checked.telemetry) == (2, 2)
