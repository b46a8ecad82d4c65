"""One judgement: for any JSON value in any field, check-logs reports the value valid
exactly when the view shows it (non-NULL), and as a coercion exactly when it was not
written in the emitter's own JSON type."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_telemetry.cli import main
from agent_telemetry.schema import catalogue
from agent_telemetry.warehouse import Warehouse, check_logs
from tests.warehouse.lines import entry, line, write_lines

SPECS = {spec.name: spec for spec in catalogue()}
FIELDS = [(spec.name, f) for spec in SPECS.values() for f in spec.fields if not f.required]
START = datetime(2026, 5, 9, tzinfo=UTC)


def _interesting(spec: Any) -> st.SearchStrategy[Any]:
    bounds = [spec.ge, spec.le, spec.ge - 1, spec.le + 1] if spec.kind == "int" else [5]
    near = st.sampled_from([*bounds, 0, 1])
    return st.one_of(
        near,
        near.map(float),
        near.map(str),
        near.map(lambda n: f"{n}.0"),
        near.map(lambda n: f"{n}e0"),
        st.sampled_from(["true", "false", "True", "", " 5", "05", "5.5", "1e999", "-0", "0x1"]),
        st.sampled_from(list(spec.members) or ["x"]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(-(2**70), 2**70),
        st.booleans(),
        st.lists(st.integers(0, 3), max_size=2),
        st.dictionaries(st.sampled_from(["a"]), st.integers(0, 1), max_size=1),
    )


@st.composite
def cases(draw: st.DrawFn) -> list[tuple[str, str, Any]]:
    picked = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=12))
    return [(event, f.name, draw(_interesting(f))) for event, f in picked]


@pytest.fixture(scope="module")
def views() -> Iterator[Warehouse]:
    with Warehouse() as wh:
        wh.load([])
        wh.create_views()  # views read the sink table by name: each load refills it
        yield wh


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=cases())
def test_a_value_is_valid_in_check_logs_exactly_when_the_view_shows_it(
    views: Warehouse, values: list[tuple[str, str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for number, (event, name, value) in enumerate(values):
            required = {f.name: f.members[0] for f in SPECS[event].fields if f.required}
            when = (START + timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            record = {"event": event, "schema_version": 1, "time": when, **required, name: value}
            paths.append(write_lines(Path(tmp) / f"{number}.jsonl", [json.dumps(record)]))
        views.load(paths)
        for number, (event, name, value) in enumerate(values):
            (shown,) = views.one(
                f'SELECT count("{name}") FROM {event} WHERE timestamp = ?',
                [START + timedelta(seconds=number)],
            )
            check = check_logs([paths[number]]).events[event]
            broken = {rule for (field, rule) in check.violations if field == name}
            assert (not broken) == (shown == 1), (name, value, broken)


def test_coercions_are_counted_apart_and_the_lines_stay_valid(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "readback.jsonl",
        [
            line("pipeline_run", lane="public", status="ok", queue_wait_ms="5"),
            line("pipeline_run", lane="public", status="ok", attempts=1.0, model_calls="7"),
            line("pipeline_render", theme="dark", render_lane="run", passed="true"),
            line("pipeline_run", lane="public", status="ok", queue_wait_ms=5),
        ],
    )
    report = check_logs([path])
    assert report.clean
    assert {c.value: n for c, n in report.coerced.items() if n} == {
        "numbers_as_strings": 2,
        "integral_doubles": 1,
        "booleans_as_strings": 1,
    }
    result = CliRunner().invoke(main, ["check-logs", str(path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "numbers arrived as strings: 2 lines" in result.output
    assert "integers arrived as doubles (1.0): 1 lines" in result.output
    assert "booleans arrived as strings: 1 lines" in result.output


def test_strict_types_makes_coercions_violations(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "service.jsonl",
        [
            line("pipeline_run", lane="public", status="ok", queue_wait_ms="5"),
            line("pipeline_run", lane="public", status="ok", attempts=1.0),
            line("pipeline_render", theme="dark", render_lane="run", passed="true"),
            line("pipeline_run", lane="public", status="ok").replace(
                '"schema_version":1', '"schema_version":"1"'
            ),
            line("pipeline_run", lane="public", status="ok", time="2026-05-09T07:35:25Z"),
            line("pipeline_run", lane="public", status="ok"),
        ],
    )
    report = check_logs([path], strict_types=True)
    assert not report.coerced
    assert dict(report.events["pipeline_run"].violations) == {
        ("queue_wait_ms", "type"): 1,
        ("attempts", "type"): 1,
        ("schema_version", "schema_version"): 1,
        ("time", "time"): 1,
    }
    assert dict(report.events["pipeline_render"].violations) == {("passed", "type"): 1}
    assert check_logs([path]).clean  # the views read every one of them
    result = CliRunner().invoke(main, ["check-logs", "--strict-types", str(path)])
    assert result.exit_code == 1


def test_an_emitter_lines_time_must_be_rfc3339_but_a_read_backs_timestamp_may_be_bigquerys(
    tmp_path: Path,
) -> None:
    naive = "2026-05-09 07:35:25"
    raw = write_lines(
        tmp_path / "raw.jsonl", [line("chat_turn", time=naive, tier="public", kind="text")]
    )
    row = entry("chat_turn", timestamp=naive, tier="public", kind="text")
    readback = write_lines(tmp_path / "row.jsonl", [json.dumps(row)])
    # Cloud Logging lifts only RFC 3339 from a line; bq prints TIMESTAMP this way.
    assert check_logs([raw]).events["chat_turn"].violations == {("time", "time"): 1}
    assert check_logs([readback]).clean
    with Warehouse() as wh:
        wh.load([raw, readback])
        wh.create_views()
        times = wh.rows("SELECT timestamp FROM chat_turn ORDER BY timestamp NULLS FIRST")
    assert times == [(None,), (datetime(2026, 5, 9, 7, 35, 25, tzinfo=UTC),)]
