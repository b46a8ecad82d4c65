"""A value off its field's precision grid is out of domain on every path (issue 38).

``queue_wait_ms`` keeps 3 significant digits: the emitter writes 1_234_567 as 1_230_000,
so a line holding 1_234_567 (a service in another language that forgot to round) is
refused like a value outside the bounds: check-logs counts it (``precision``) in both
modes and on both of its paths, the load and the views show NULL and telemetry_quality
counts it.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from agent_telemetry.config import load_config
from agent_telemetry.views import QUALITY_VIEW
from agent_telemetry.warehouse import Warehouse, check_logs
from tests.warehouse.lines import entry, line, write_lines

OFF_GRID = (1_234_567, 1001, 3_599_999)  # 7, 4 and 7 significant digits
ON_GRID = (1_230_000, 1000, 999, 0, 3_600_000)


def _lines() -> list[str]:
    values = (*OFF_GRID, *ON_GRID)
    return [line("pipeline_run", lane="public", status="ok", queue_wait_ms=v) for v in values]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("fast", [False, True])
def test_check_logs_counts_a_value_off_the_grid(tmp_path: Path, strict: bool, fast: bool) -> None:
    path = write_lines(tmp_path / "grid.jsonl", _lines())
    report = check_logs([path], strict_types=strict, fast=fast, sql_from=0)
    run = report.events["pipeline_run"]
    assert (run.lines, run.valid) == (len(OFF_GRID) + len(ON_GRID), len(ON_GRID))
    assert dict(run.violations) == {("queue_wait_ms", "precision"): len(OFF_GRID)}
    assert (run.coverage["queue_wait_ms"].low, run.coverage["queue_wait_ms"].high) == (0, 3_600_000)


def test_a_logentry_off_the_grid_is_counted_on_the_sql_path(tmp_path: Path) -> None:
    records = [
        entry("pipeline_run", lane="public", status="ok", duration_ms=value)
        for value in (12_345, 12_300)
    ]
    path = write_lines(tmp_path / "entries.jsonl", [json.dumps(r) for r in records])
    report = check_logs([path], fast=True, sql_from=0)
    assert dict(report.events["pipeline_run"].violations) == {("duration_ms", "precision"): 1}


def test_the_views_show_null_off_the_grid_and_count_it(tmp_path: Path) -> None:
    wh = Warehouse(config=load_config("telemetry.toml"))
    wh.load([write_lines(tmp_path / "grid.jsonl", _lines())])
    wh.create_views()
    shown = sorted(
        r[0] for r in wh.rows("SELECT queue_wait_ms FROM pipeline_run") if r[0] is not None
    )
    assert shown == sorted(ON_GRID)
    nulls = wh.rows("SELECT count(*) FROM pipeline_run WHERE queue_wait_ms IS NULL")
    assert nulls == [(len(OFF_GRID),)]
    quality = wh.rows(
        f"SELECT day, out_of_domain_values FROM {QUALITY_VIEW} "
        "WHERE event = 'pipeline_run' AND field = 'queue_wait_ms'"
    )
    assert quality == [(date(2026, 5, 9), len(OFF_GRID))]
