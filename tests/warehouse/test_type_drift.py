"""A sink table BigQuery made for itself still gives the right values in the views.

A sink that creates its own table types JSON numbers as FLOAT, a field first logged as
a string as STRING, and has no column for a field never logged. The same lines loaded
into such a table must read exactly as they do from the pinned sink schema.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.schema import catalogue
from agent_telemetry.views import sink_schema
from agent_telemetry.warehouse import Warehouse
from tests.warehouse.lines import line, write_lines

NEVER_LOGGED = "retry_after_s"
AS_STRING = {"queue_position", "slot_wait_ms", "passed"}


def _sample_value(spec: Any, index: int) -> Any:
    if spec.kind == "enum":
        return spec.members[index % len(spec.members)]
    if spec.kind == "bool":
        return index % 2 == 0
    return (spec.ge, spec.le, (spec.ge + spec.le) // 2, spec.ge + 1)[index % 4]


def _lines() -> list[str]:
    lines = []
    for spec in catalogue():
        for index in range(6):
            fields = {
                f.name: _sample_value(f, index) for f in spec.fields if f.name != NEVER_LOGGED
            }
            time = f"2026-05-09T07:{index:02d}:{len(lines) % 60:02d}.000001Z"
            lines.append(line(spec.name, time=time, **fields))
    return lines


def _guessed_schema() -> list[dict[str, Any]]:
    """What a self-made sink would have: FLOAT numbers, some STRINGs, a missing column."""
    schema = copy.deepcopy(sink_schema("partitioned"))
    payload = next(f for f in schema if f["name"] == "jsonPayload")
    fields = []
    for field in payload["fields"]:
        if field["name"] == NEVER_LOGGED:
            continue
        if field["name"] in AS_STRING:
            field["type"] = "STRING"
        elif field["type"] == "INTEGER":
            field["type"] = "FLOAT"
        fields.append(field)
    payload["fields"] = fields
    return schema


def _views(wh: Warehouse, path: Path) -> dict[str, list[tuple[Any, ...]]]:
    wh.load([path])
    wh.create_views()
    return {
        view.name: sorted(wh.rows(f"SELECT * FROM {view.name}"), key=repr) for view in wh.views()
    }


@pytest.fixture(scope="module")
def pinned_and_guessed(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, list[tuple[Any, ...]]], Warehouse]:
    path = write_lines(tmp_path_factory.mktemp("drift") / "lines.jsonl", _lines())
    with Warehouse() as pinned:
        expected = _views(pinned, path)
    guessed = Warehouse(schema=_guessed_schema())
    return expected, _views(guessed, path), guessed


def test_the_guessed_table_really_is_typed_differently(
    pinned_and_guessed: tuple[Any, Any, Warehouse],
) -> None:
    wh = pinned_and_guessed[2]
    ((payload_type,),) = wh.rows(
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_name = 'run_googleapis_com_stdout' AND column_name = 'jsonPayload'"
    )
    assert "queue_wait_ms DOUBLE" in payload_type
    assert "queue_position VARCHAR" in payload_type
    assert "passed VARCHAR" in payload_type
    assert NEVER_LOGGED not in payload_type


@pytest.mark.parametrize("view", [*(spec.name for spec in catalogue()), "telemetry_quality"])
def test_every_view_gives_the_same_rows_on_a_guessed_sink(
    pinned_and_guessed: tuple[dict[str, Any], dict[str, Any], Warehouse], view: str
) -> None:
    expected, got, _wh = pinned_and_guessed
    assert got[view] == expected[view]
    assert got[view], "the sample has lines for every view"


def test_the_values_are_the_logged_integers_not_floats(
    pinned_and_guessed: tuple[Any, Any, Warehouse],
) -> None:
    wh = pinned_and_guessed[2]
    rows = wh.rows("SELECT DISTINCT queue_wait_ms, queue_position FROM pipeline_run ORDER BY 1")
    assert rows == [(0, 0), (1, 1), (1_800_000, 30), (3_600_000, 60)]
    assert all(type(v) is int for row in rows for v in row)
