"""A line whose ``schema_version`` is not a whole number belongs to no view.

On a sink BigQuery typed for itself, JSON numbers are FLOAT, so a line claiming version
1.5 (a bug or a forgery) keeps its fraction in the table. The views read the version
as FLOAT64 and compare it exactly: read as INT64 it would round (1.4 -> 1) and the line
would be shown and counted as version 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_telemetry.warehouse import Warehouse
from tests.warehouse.lines import line, write_lines
from tests.warehouse.test_type_drift import _guessed_schema

# Minutes of the line's time -> the schema_version it claims.
VERSIONS = {0: 1.0, 1: 1.5, 2: 1.4, 3: 0.6, 4: 1.000001, 5: 1}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    lines = [
        line(
            "pipeline_run",
            time=f"2026-05-09T07:{minute:02d}:00.000001Z",
            schema_version=version,
            lane="public",
            status="ok",
        )
        for minute, version in VERSIONS.items()
    ]
    path: Path = write_lines(tmp_path_factory.mktemp("fractional") / "lines.jsonl", lines)
    wh = Warehouse(schema=_guessed_schema())
    wh.load([path])
    wh.create_views()
    return wh


def test_the_sink_keeps_the_fraction(warehouse: Warehouse) -> None:
    ((payload_type,),) = warehouse.rows(
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_name = 'run_googleapis_com_stdout' AND column_name = 'jsonPayload'"
    )
    assert "schema_version DOUBLE" in payload_type


def test_only_whole_version_1_lines_are_in_the_v1_view(warehouse: Warehouse) -> None:
    rows = warehouse.rows(
        "SELECT EXTRACT(minute FROM timestamp), schema_version FROM pipeline_run ORDER BY 1"
    )
    assert rows == [(0, 1), (5, 1)]


def test_only_whole_version_1_lines_are_counted_in_telemetry_quality(
    warehouse: Warehouse,
) -> None:
    rows = warehouse.rows(
        "SELECT DISTINCT lines FROM telemetry_quality "
        "WHERE event = 'pipeline_run' AND schema_version = 1"
    )
    assert rows == [(2,)]
