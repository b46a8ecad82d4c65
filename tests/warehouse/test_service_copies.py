"""Copies of one entry that differ only in a field of a service's own event.

A service's catalogue (issue 24) adds payload keys the package's catalogue does not have.
The views rank an entry's copies by every payload column of the sink the service's
catalogue generates, so check-logs must rank them by those columns too: otherwise it keeps
another copy than the views show, and counts two different copies as alike.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, ClassVar

import duckdb
import pytest
from pydantic import Field

from agent_telemetry.schema import EVENTS, TelemetryEvent, count, event_spec
from agent_telemetry.schema.catalogue import Catalogue, load_catalogue
from agent_telemetry.schema.spec import CardinalityWaiver
from agent_telemetry.views import QUALITY_VIEW
from agent_telemetry.warehouse import Warehouse, check_logs
from agent_telemetry.warehouse._checking.fast import FastCheck, FileCounts
from agent_telemetry.warehouse._judging.python import payload_kinds
from agent_telemetry.warehouse._reading.source import LogInput
from tests.warehouse.lines import entry, line


class ShelfResult(StrEnum):
    HIT = "hit"
    MISS = "miss"


class ShelfLookup(TelemetryEvent):
    """One line per shelf lookup (a service's own event)."""

    event_name: ClassVar[str] = "shelf_lookup"
    schema_version: ClassVar[int] = 1

    result: ShelfResult = Field(description="What the lookup found.")
    shelf_ms: int | None = count(0, 10_000, "Lookup wall time in milliseconds.")


CATALOGUE = load_catalogue({**EVENTS, ShelfLookup.event_name: ShelfLookup})
STAMP = "2026-05-09T07:35:25.123456Z"


@pytest.mark.parametrize("fast", [True, False], ids=["sql path", "python path"])
@pytest.mark.parametrize("order", ["slow copy first", "quick copy first"])
def test_copies_that_differ_in_a_service_field_conflict_and_the_views_copy_is_checked(
    tmp_path: Path, order: str, fast: bool
) -> None:
    quick = entry("shelf_lookup", insert_id="k1", timestamp=STAMP, result="hit", shelf_ms=5)
    slow = entry("shelf_lookup", insert_id="k1", timestamp=STAMP, result="hit", shelf_ms=700)
    copies = (slow, quick) if order == "slow copy first" else (quick, slow)
    path = tmp_path / "export.json"
    path.write_text("".join(json.dumps(c) + "\n" for c in copies))

    report = check_logs([path], CATALOGUE.versions, fast=fast, sql_from=0)
    assert (report.duplicates, report.conflicting) == (1, 1)
    coverage = report.events["shelf_lookup"].coverage["shelf_ms"]
    # The views keep the copy ranked first by every payload column: shelf_ms 5 < 700.
    assert (coverage.low, coverage.high, coverage.valid) == (5, 5, 1)

    with Warehouse(catalogue=CATALOGUE) as wh:
        load = wh.load([path])
        wh.create_views()
        assert wh.rows("SELECT shelf_ms FROM shelf_lookup") == [(5,)]
        assert wh.one(
            f"SELECT sum(conflicting_duplicates) FROM {QUALITY_VIEW} "
            "WHERE event = 'shelf_lookup' AND field = 'shelf_ms'"
        ) == (1,)
    assert load.conflicting == report.conflicting


def _sql_counts(catalogue: Catalogue, path: Path) -> tuple[FileCounts, int]:
    """What check-logs' SQL path counts of ``path`` for ``catalogue``, and how many lines
    it leaves to Python."""
    kinds = payload_kinds(catalogue.version_specs())
    current = {name: (1, event_spec(model)) for name, model in catalogue.events.items()}
    check = FastCheck(current, kinds)
    try:
        with LogInput(path) as log:
            counts = check.check(log)
            assert counts is not None
            return counts, sum(1 for _ in check.rest(log))
    finally:
        check.close()


def _service_lines(count: int) -> str:
    """Emitter lines of the service's own event, mostly valid, every tenth one bent: a
    member not in the set, an int out of bounds, a double, a numeric string."""
    bent: list[dict[str, object]] = [
        {"result": "jane_doe"},
        {"result": "hit", "shelf_ms": 20_000},
        {"result": "miss", "shelf_ms": 5.5},
        {"result": "hit", "shelf_ms": " 5"},
    ]
    lines = []
    for n in range(count):
        fields = bent[n // 10 % len(bent)] if n % 10 == 0 else {"result": "miss", "shelf_ms": n}
        lines.append(line("shelf_lookup", **fields))
    return "".join(f"{text}\n" for text in lines)


def test_a_services_own_event_is_counted_in_sql_and_reported_alike(tmp_path: Path) -> None:
    # check-logs' SQL path read the package's sink columns only, so every line of a
    # service's own event went to Python: correct, but the SQL path never served services.
    path = tmp_path / "service.jsonl"
    path.write_text(_service_lines(2000))
    fast = check_logs([path], CATALOGUE.versions, fast=True, sql_from=0).as_dict()
    assert fast == check_logs([path], CATALOGUE.versions, fast=False).as_dict()
    assert fast["events"]["shelf_lookup"]["lines"] == 2000

    counts, rest = _sql_counts(CATALOGUE, path)
    assert counts.clean["shelf_lookup"].lines == 1800
    assert rest == 200


# A set wider than the 64 bits check-logs' SQL path gathers members in.
Aisle = StrEnum("Aisle", {f"A{n:03d}": f"a{n:03d}" for n in range(100)})  # type: ignore[misc]


class ShelfVisit(TelemetryEvent):
    """One line per aisle a picker visits (a service's own event)."""

    event_name: ClassVar[str] = "shelf_visit"
    schema_version: ClassVar[int] = 1

    aisle: Annotated[Aisle, CardinalityWaiver("a warehouse's aisles name no one")] = Field(
        description="The aisle visited."
    )
    result: ShelfResult | None = Field(default=None, description="What the lookup found.")


@pytest.mark.parametrize("width", [2, 80], ids=["a narrow set", "a set past one mask"])
def test_the_members_clean_lines_show_are_gathered_in_sql(tmp_path: Path, width: int) -> None:
    # Both coverage roads of the SQL path: members as bits of one mask (ShelfResult,
    # booleans) and, for a set wider than a mask, the distinct members themselves.
    catalogue = load_catalogue({**EVENTS, ShelfVisit.event_name: ShelfVisit})
    path = tmp_path / "visits.jsonl"
    aisles = [f"a{n % width:03d}" for n in range(3000)]
    path.write_text(
        "".join(
            line("shelf_visit", aisle=aisle, result=("hit", "miss")[n % 2]) + "\n"
            for n, aisle in enumerate(aisles)
        )
    )
    fast = check_logs([path], catalogue.versions, fast=True, sql_from=0)
    assert fast.as_dict() == check_logs([path], catalogue.versions, fast=False).as_dict()
    coverage = fast.events["shelf_visit"].coverage
    assert coverage["aisle"].members == set(aisles)
    assert coverage["result"].members == {"hit", "miss"}

    counts, _ = _sql_counts(catalogue, path)
    assert counts.clean["shelf_visit"].lines == 3000  # counted in SQL, not by Python
    assert sorted(counts.clean["shelf_visit"].fields["aisle"][1]) == sorted(set(aisles))


def test_a_services_own_event_loads_alike_in_sql_and_in_python(tmp_path: Path) -> None:
    """The load's SQL path judges a service's own fields by the service's catalogue (its
    kinds), as Python does: the stored rows are the same, bent values NULL in both."""
    from agent_telemetry.views import event_payload_keys, sink_fields
    from agent_telemetry.warehouse._loading.fast import STAGED
    from agent_telemetry.warehouse._loading.load import SINK_TABLE, create_sink, load_logs
    from agent_telemetry.warehouse._loading.staging import Staging

    path = tmp_path / "service.jsonl"
    path.write_text(_service_lines(200))
    specs = CATALOGUE.version_specs()
    stored = {}
    for fast in (True, False):
        with duckdb.connect() as con:
            con.execute("SET TimeZone = 'UTC'")
            load_logs(
                con,
                [path],
                schema=sink_fields("partitioned", specs),
                kinds=payload_kinds(specs),
                owners=event_payload_keys(specs),
                fast=fast,
                sql_from=0,
            )
            stored[fast] = sorted(
                con.execute(
                    f"SELECT jsonPayload.result, jsonPayload.shelf_ms FROM {SINK_TABLE}"
                ).fetchall(),
                key=repr,
            )
    assert stored[True] == stored[False]
    assert len(stored[True]) == 200
    assert (None, None) not in stored[True]
    # And the SQL path serves it: all but the lines it cannot judge exactly (10 of the 20
    # bent ones) are judged in SQL. By the package's kinds, every line would go to Python.
    with duckdb.connect() as con, LogInput(path) as log:
        sink = create_sink(
            con,
            schema=sink_fields("partitioned", specs),
            kinds=payload_kinds(specs),
            owners=event_payload_keys(specs),
        )
        staging = Staging(con, SINK_TABLE, sink, fast=True, fresh=True)
        assert staging.fast is not None
        staging.fast.stage(con, log, reset=staging.reset)
        staged = con.execute(f"SELECT kind, count(*) FROM {STAGED} GROUP BY kind").fetchall()
    assert sorted(staged) == [("python", 10), ("telemetry", 190)]


def test_an_appended_load_reads_and_ranks_a_services_fields_by_its_catalogue(
    tmp_path: Path,
) -> None:
    # Appending (replace=False) builds the sink's columns apart from a fresh load: it
    # must still read the service's own fields (its kinds) and rank copies of its
    # events by them (its owners), or shelf_ms is dropped and two copies that differ
    # only there count as alike.
    first = tmp_path / "07.jsonl"
    first.write_text(
        json.dumps(entry("shelf_lookup", insert_id="k1", timestamp=STAMP, result="hit", shelf_ms=5))
        + "\n"
    )
    later = tmp_path / "08.jsonl"
    later.write_text(
        "".join(
            json.dumps(record) + "\n"
            for record in (
                entry("shelf_lookup", insert_id="k1", timestamp=STAMP, result="hit", shelf_ms=700),
                entry("shelf_lookup", insert_id="k2", timestamp=STAMP, result="miss", shelf_ms=42),
            )
        )
    )
    with Warehouse(catalogue=CATALOGUE) as wh:
        assert wh.load([first]).conflicting == 0
        report = wh.load([later], replace=False)
        stored = wh.rows(
            "SELECT insertId, jsonPayload.result, jsonPayload.shelf_ms "
            "FROM run_googleapis_com_stdout ORDER BY ALL"
        )
    assert stored == [("k1", "hit", 5), ("k1", "hit", 700), ("k2", "miss", 42)]
    assert (report.loaded, report.conflicting) == (2, 1)
