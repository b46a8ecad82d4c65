"""The local views rank an entry's copies only when the sink holds copies
(``warehouse/_duckdb_views/dedupe.py``): every view answers exactly as the ranking BigQuery
runs, on any sink, with or without copies, and whatever was inserted after the views."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.views import ViewDefinition
from agent_telemetry.warehouse import Warehouse, duckdb_query

Row = tuple[str | None, str | None, dict[str, Any]]

T1, T2 = "2026-05-09 10:00:00+00", "2026-05-09 10:00:01+00"


def _warehouse(guarded: bool) -> Warehouse:
    """An empty sink with every view on it, guarded or as BigQuery runs them."""
    warehouse = Warehouse()
    warehouse.load([])
    for view in warehouse.views():  # in order: lane_health reads the event views
        sql = _sql(warehouse, view, guarded)
        warehouse.rows(f'CREATE OR REPLACE VIEW "{view.name}" AS {sql}')
    return warehouse


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[Warehouse, Warehouse]]:
    guarded, plain = _warehouse(guarded=True), _warehouse(guarded=False)
    yield guarded, plain
    guarded.close()
    plain.close()


@pytest.fixture
def wh(pair: tuple[Warehouse, Warehouse]) -> Warehouse:
    return pair[0]


def _insert(wh: Warehouse, rows: list[Row]) -> None:
    """(insert id, timestamp, payload) rows, straight into the sink table."""
    wh.rows(f'DELETE FROM "{wh.table}"')
    for entry_id, timestamp, payload in rows:
        record = {"schema_version": 1, **payload}
        struct = "{" + ", ".join(f"'{k}': {v!r}" for k, v in record.items()) + "}"
        wh.rows(
            f'INSERT INTO "{wh.table}" (timestamp, insertId, jsonPayload) '
            f"VALUES (?::TIMESTAMPTZ, ?, {struct})",
            [timestamp, entry_id],
        )


def _sql(wh: Warehouse, view: ViewDefinition, guarded: bool) -> str:
    source = wh.config.source
    return duckdb_query(
        view,
        (source.project, source.dataset, source.table_for("partitioned")),
        sink_table=wh.table,
        payload_column="jsonPayload",
        payload_fields=wh.sink.payload,
        guarded=guarded,
    )


def _answers(wh: Warehouse) -> dict[str, Any]:
    """Every view's rows."""
    return {v.name: sorted(wh.rows(f'SELECT * FROM "{v.name}"'), key=repr) for v in wh.views()}


def _same_answers(pair: tuple[Warehouse, Warehouse], rows: list[Row]) -> None:
    guarded, plain = pair
    _insert(guarded, rows)
    _insert(plain, rows)
    assert _answers(guarded) == _answers(plain)


RUN = {"event": "pipeline_run", "lane": "public", "status": "ok", "attempts": 1}
CASES: dict[str, list[Row]] = {
    "no copies": [("a", T1, RUN), ("b", T1, RUN), (None, T1, RUN)],
    "a copy alike": [("a", T1, RUN), ("a", T1, RUN), ("b", T2, RUN)],
    "copies that conflict": [("a", T1, RUN), ("a", T1, {**RUN, "lane": "admin"})],
    "one id at two times": [("a", T1, RUN), ("a", T2, {**RUN, "attempts": 9})],
    "no id, alike": [(None, T1, RUN), (None, T1, RUN)],
    "no timestamp, one id": [("a", None, RUN), ("a", None, {**RUN, "status": "failed"})],
    "copies of another event": [
        ("a", T1, {"event": "chat_turn"}),
        ("a", T1, {"event": "chat_turn", "tier": "free"}),
        ("b", T1, RUN),
    ],
}


@pytest.mark.parametrize("rows", CASES.values(), ids=CASES.keys())
def test_every_view_answers_as_the_ranking_does(
    pair: tuple[Warehouse, Warehouse], rows: list[Row]
) -> None:
    _same_answers(pair, rows)


_payloads = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["pipeline_run", "chat_turn", "provider_status"]),
        "lane": st.sampled_from(["public", "admin", "bogus"]),
        "attempts": st.sampled_from([0, 1, 9]),
    }
)
_rows = st.lists(
    st.tuples(st.sampled_from([None, "a", "b"]), st.sampled_from([None, T1, T2]), _payloads),
    max_size=8,
)


@settings(max_examples=25)
@given(rows=_rows)
def test_any_sink_gets_the_ranking_s_answer(
    pair: tuple[Warehouse, Warehouse], rows: list[Row]
) -> None:
    _same_answers(pair, rows)


def test_copies_inserted_after_the_views_are_ranked(wh: Warehouse) -> None:
    # The question is asked when the view is read, not when it is made.
    _insert(wh, [("a", T1, RUN)])
    assert wh.rows('SELECT count(*) FROM "pipeline_run"') == [(1,)]
    wh.rows(
        f'INSERT INTO "{wh.table}" (timestamp, insertId, jsonPayload) '
        f'SELECT timestamp, insertId, jsonPayload FROM "{wh.table}"'
    )
    assert wh.rows('SELECT count(*) FROM "pipeline_run"') == [(1,)]
    assert wh.rows('SELECT count(*) FROM "run_googleapis_com_stdout"') == [(2,)]


def test_every_event_view_is_guarded(wh: Warehouse) -> None:
    # Without the guard the window runs on every row: on 1,000,000 LogEntries most of a
    # query's time (bench/warehouse.py). A view the guard no longer recognises would
    # only be slow, so this says so. (telemetry_quality counts the copies, by windows
    # in its projection: it ranks every time; lane_health reads the event views.)
    events = [view for view in wh.views() if view.event is not None]
    assert {view.event for view in events} == {spec.name for spec in wh.catalogue.specs()}
    for view in events:
        guarded = _sql(wh, view, guarded=True)
        assert "UNION ALL" in guarded, view.name
        assert "EXISTS" in guarded, view.name
        assert "UNION ALL" not in _sql(wh, view, guarded=False), view.name


def test_a_ranking_by_another_partition_is_left_as_it_is(wh: Warehouse) -> None:
    # Ranked by insert id alone, one id at two times is one entry: no (id, timestamp)
    # copy exists, so a guard there would keep both rows where the ranking keeps one.
    view = next(v for v in wh.views() if v.name == "pipeline_run")
    key = "PARTITION BY sink.insertId, sink.timestamp"
    by_id = dataclasses.replace(view, query=view.query.replace(key, "PARTITION BY sink.insertId"))
    assert _sql(wh, by_id, guarded=True) == _sql(wh, by_id, guarded=False)
    _insert(wh, [("a", T1, RUN), ("a", T2, RUN)])
    wh.rows(f"CREATE OR REPLACE VIEW by_id AS {_sql(wh, by_id, guarded=True)}")
    assert wh.rows("SELECT count(*) FROM by_id") == [(1,)]
