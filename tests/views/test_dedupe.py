"""The dedupe form of the generated views, proved from the SQL (``dedupe_violations``).

What the views keep is run on DuckDB (tests/warehouse/test_dedupe.py) and on the BigQuery
emulator (tests/deploy/bigquery/test_dedupe.py); here, the SQL itself: every layout's
views have the form docs/design.md promises, the proof fails on each way to break it,
and with dedupe off the views are what they were before dedupe existed.
"""

from __future__ import annotations

import dataclasses

import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout, parse_config
from agent_telemetry.schema import version_catalogue
from agent_telemetry.views import (
    LANE_VIEW,
    QUALITY_VIEW,
    ViewDefinition,
    dedupe_violations,
    generate_views,
    lane_violations,
    sink_schema,
)


def deployment(dedupe: bool) -> DeploymentConfig:
    return parse_config(
        {
            "source": {"project": "acme-agents-prod", "dataset": "logs", "dedupe": dedupe},
            "target": {"project": "acme-agents-prod", "dataset": "telemetry"},
        }
    )


@pytest.fixture(scope="module")
def views() -> dict[tuple[bool, Layout], tuple[ViewDefinition, ...]]:
    return {
        (dedupe, layout): generate_views(deployment(dedupe), layout)
        for dedupe in (True, False)
        for layout in LAYOUTS
    }


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dedupe", [True, False])
def test_every_generated_view_has_the_form_its_switch_asks_for(
    views: dict[tuple[bool, Layout], tuple[ViewDefinition, ...]], layout: Layout, dedupe: bool
) -> None:
    for view in views[dedupe, layout]:
        if view.reads:  # lane_health reads the event views, which keep one row per entry
            assert view.name == LANE_VIEW
            assert lane_violations(view.query, deployment(dedupe), version_catalogue()) == []
            continue
        assert dedupe_violations(view.query, layout, dedupe) == [], view.name
        assert dedupe_violations(view.ddl, layout, dedupe) == [], view.name
        # The other switch's form is refused: the proof tells them apart.
        assert dedupe_violations(view.query, layout, not dedupe), view.name


def _without_dedupe(query: str) -> str:
    tree = sqlglot.parse_one(query, dialect="bigquery")
    for select in tree.find_all(exp.Select):
        select.set("qualify", None)
    return tree.sql("bigquery")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_with_dedupe_off_an_event_view_is_the_dedupe_view_without_its_qualify(
    views: dict[tuple[bool, Layout], tuple[ViewDefinition, ...]], layout: Layout
) -> None:
    # Dedupe adds one QUALIFY per sink read and changes nothing else: with it off, the
    # event views are exactly what they were before (rows, columns, SQL).
    on, off = views[True, layout], views[False, layout]
    events_on = [v for v in on if v.event is not None]
    events_off = [v for v in off if v.event is not None]
    for with_dedupe, without in zip(events_on, events_off, strict=True):
        assert with_dedupe.query != without.query
        assert _without_dedupe(with_dedupe.query) == _without_dedupe(without.query)
        assert sqlglot.parse_one(without.query, dialect="bigquery").find(exp.Window) is None
        assert with_dedupe.columns == without.columns
    # telemetry_quality keeps its columns either way: duplicate_entries is NULL when off.
    quality_on, quality_off = on[len(events_on)], off[len(events_off)]
    assert quality_on.name == quality_off.name == QUALITY_VIEW
    assert quality_on.columns == quality_off.columns
    assert "duplicate_entries" in [c.name for c in quality_on.columns]


RANKED = "ORDER BY sink.jsonPayload.event, sink.jsonPayload.lane"
QUALIFY = (
    "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
    f"(PARTITION BY sink.insertId, sink.timestamp {RANKED}) = 1"
)
BROKEN = {
    "no dedupe": "",
    "key without timestamp (no pruning)": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER (PARTITION BY sink.insertId) = 1"
    ),
    "key with a payload key": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp, sink.jsonPayload.lane) = 1"
    ),
    "lines without an insert id merged": (
        "QUALIFY ROW_NUMBER() OVER (PARTITION BY sink.insertId, sink.timestamp) = 1"
    ),
    "a copy other than one kept": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp) = 2"
    ),
    "ranked by a column that is no payload key": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp ORDER BY sink.severity) = 1"
    ),
    "copies in no order (the engine's choice)": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp) = 1"
    ),
    "a payload key the view reads left out of the order": (
        "QUALIFY sink.insertId IS NULL OR ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp ORDER BY sink.jsonPayload.event) = 1"
    ),
    "ranked by a payload key before event (copies of two events ranked apart by views)": (
        QUALIFY.replace(RANKED, "ORDER BY sink.jsonPayload.lane, sink.jsonPayload.event")
    ),
    "a key read for one event's copies compared to a column, not a name": QUALIFY.replace(
        "sink.jsonPayload.lane",
        "IF(sink.jsonPayload.event = sink.jsonPayload.status, sink.jsonPayload.lane, NULL)",
    ),
    "a key read for one event's copies reading two keys": QUALIFY.replace(
        "sink.jsonPayload.lane",
        "IF(sink.jsonPayload.event = 'pipeline_run', "
        "CONCAT(sink.jsonPayload.lane, sink.jsonPayload.status), NULL)",
    ),
    "a key read for one event's copies, else another key": QUALIFY.replace(
        "sink.jsonPayload.lane",
        "IF(sink.jsonPayload.event = 'pipeline_run', sink.jsonPayload.lane, "
        "sink.jsonPayload.status)",
    ),
    "descending": QUALIFY.replace("jsonPayload.lane", "jsonPayload.lane DESC"),
    "NULL last": QUALIFY.replace("jsonPayload.lane", "jsonPayload.lane NULLS LAST"),
    "a frame": QUALIFY.replace(RANKED, RANKED + " ROWS BETWEEN CURRENT ROW AND CURRENT ROW"),
    # The other branch must be exactly `insertId IS NULL`: anything else keeps copies.
    "TRUE OR": QUALIFY.replace("sink.insertId IS NULL OR", "TRUE OR"),
    "timestamp IS NULL OR": QUALIFY.replace(
        "sink.insertId IS NULL OR", "sink.timestamp IS NULL OR"
    ),
    "insertId IS NOT NULL OR": QUALIFY.replace(
        "sink.insertId IS NULL OR", "sink.insertId IS NOT NULL OR"
    ),
    "a third branch": QUALIFY.replace(
        "sink.insertId IS NULL OR", "sink.insertId IS NULL OR sink.timestamp IS NULL OR"
    ),
    "NULL insert ids kept, the rest dropped": (
        "QUALIFY sink.insertId IS NULL AND ROW_NUMBER() OVER "
        "(PARTITION BY sink.insertId, sink.timestamp) = 1"
    ),
}


def _with_qualify(qualify: str, extra: str = "") -> str:
    return (
        "WITH lines AS (SELECT sink.timestamp AS timestamp, sink.jsonPayload.lane AS lane"
        f"{extra} FROM `p.d.run_googleapis_com_stdout` AS sink "
        f"WHERE sink.jsonPayload.event = 'pipeline_run' {qualify}) "
        "SELECT lines.timestamp AS timestamp, lines.lane AS lane FROM lines AS lines"
    )


def test_the_hand_written_form_passes() -> None:
    assert dedupe_violations(_with_qualify(QUALIFY), "partitioned", True) == []
    # A key read only for one event's copies (telemetry_quality's form) ranks that key.
    masked = QUALIFY.replace(
        "sink.jsonPayload.lane",
        "IF(sink.jsonPayload.event = 'pipeline_run', sink.jsonPayload.lane, NULL)",
    )
    assert dedupe_violations(_with_qualify(masked), "partitioned", True) == []
    assert dedupe_violations(_with_qualify(""), "partitioned", False) == []


@pytest.mark.parametrize("breakage", list(BROKEN))
def test_each_way_to_break_the_dedupe_is_found(breakage: str) -> None:
    broken = BROKEN[breakage]
    assert broken != QUALIFY
    problems = dedupe_violations(_with_qualify(broken), "partitioned", True)
    assert problems, breakage


def test_windows_that_rank_copies_differently_are_found() -> None:
    # Counting the copies alike to the kept one needs the kept one's order.
    extra = (
        ", COUNT(*) OVER (PARTITION BY sink.insertId, sink.timestamp "
        "ORDER BY sink.jsonPayload.event, sink.jsonPayload.status, sink.jsonPayload.lane) AS alike"
    )
    problems = dedupe_violations(_with_qualify(QUALIFY, extra), "partitioned", True)
    assert problems == ["the windows rank an entry's copies in different orders"]


def test_a_window_over_another_key_is_found_even_with_the_right_qualify() -> None:
    # A column counting copies by insert id alone would mix entries and defeat pruning.
    extra = ", COUNT(*) OVER (PARTITION BY sink.insertId) AS copies"
    (problem,) = dedupe_violations(_with_qualify(QUALIFY, extra), "partitioned", True)
    assert "partitioned by sink.insertId;" in problem
    assert "keeps partition pruning" in problem


def test_with_dedupe_off_a_view_that_drops_rows_is_found() -> None:
    (problem,) = dedupe_violations(_with_qualify(QUALIFY), "partitioned", False)
    assert "dedupe is off" in problem


def test_the_analytics_layout_is_held_to_insert_id() -> None:
    analytics = (
        "SELECT sink.timestamp AS timestamp FROM `p.d._AllLogs` AS sink WHERE TRUE QUALIFY "
        "sink.insert_id IS NULL OR ROW_NUMBER() OVER (PARTITION BY sink.insert_id, "
        "sink.timestamp ORDER BY JSON_VALUE(sink.json_payload, '$.event')) = 1"
    )
    assert dedupe_violations(analytics, "analytics", True) == []
    camel = analytics.replace("insert_id", "insertId")
    assert dedupe_violations(camel, "analytics", True)


@pytest.mark.parametrize("layout", ["partitioned", "sharded"])
def test_the_sink_schema_has_the_key_the_views_read(layout: Layout) -> None:
    fields = {f["name"]: f for f in sink_schema(layout)}
    assert fields["insertId"]["type"] == "STRING"
    assert fields["timestamp"]["type"] == "TIMESTAMP"


def test_a_sharded_window_without_the_shard_suffix_is_found() -> None:
    # A filter on the shard column prunes shards only if the window keeps whole shards.
    sharded = QUALIFY.replace("sink.timestamp", "sink.timestamp, sink._TABLE_SUFFIX")
    assert dedupe_violations(_with_qualify(sharded), "sharded", True) == []
    (problem,) = dedupe_violations(_with_qualify(QUALIFY), "sharded", True)
    assert "_TABLE_SUFFIX shard pruning" in problem
    # The partitioned layout has no shards: the suffix there is a wrong key.
    assert dedupe_violations(_with_qualify(sharded), "partitioned", True)


def _rank_keys(view: ViewDefinition) -> list[str]:
    tree = sqlglot.parse_one(view.query, dialect="bigquery")
    orders = {
        w.args["order"].sql("bigquery"): w.args["order"]
        for w in tree.find_all(exp.Window)
        if w.args.get("order")
    }
    (order,) = orders.values()
    return [key.this.sql("bigquery") for key in order.expressions]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_view_ranks_copies_by_event_first_then_its_own_columns_only(
    views: dict[tuple[bool, Layout], tuple[ViewDefinition, ...]], layout: Layout
) -> None:
    """The cross-view promise (docs/design.md, "One row per log entry"): every view's
    first rank key is the same `event` read, so two copies naming two events are ordered
    alike by every view and only one event's view keeps the entry; each event view reads
    no other event's columns; telemetry_quality ranks one event's copies as its view."""
    from agent_telemetry.views import ENVELOPE_KEYS, event_payload_keys, payload_fields

    owners = event_payload_keys()
    every = {f.name for f in payload_fields()}
    ranked = {v.name: _rank_keys(v) for v in views[True, layout] if not v.reads}
    firsts = {keys[0] for keys in ranked.values()}
    assert len(firsts) == 1, firsts
    assert "event" in next(iter(firsts))
    envelope = len(ENVELOPE_KEYS)
    heads = {tuple(keys[:envelope]) for keys in ranked.values()}
    assert len(heads) == 1, "the views rank the envelope differently"
    for view in views[True, layout]:
        if view.event is None:
            continue
        own = set(owners[view.event])
        others = every - own - set(ENVELOPE_KEYS)
        read = {
            c.name.lower()
            for c in sqlglot.parse_one(view.query, dialect="bigquery").find_all(exp.Column)
        }
        read |= {
            str(lit.this).removeprefix("$.")
            for lit in sqlglot.parse_one(view.query, dialect="bigquery").find_all(exp.Literal)
            if str(lit.this).startswith("$.")
        }
        assert not (read & others), (view.name, sorted(read & others))
        assert len(ranked[view.name]) == envelope + len(own), view.name
    # telemetry_quality: the envelope, then each event's own keys read for its copies only.
    quality = ranked[QUALITY_VIEW]
    assert len(quality) == envelope + sum(len(keys) for keys in owners.values())
    for event, keys in owners.items():
        view_keys = ranked[event][envelope:]
        masked = [k for k in quality[envelope:] if f"= '{event}'" in k]
        assert len(masked) == len(keys) == len(view_keys)
        for plain, inside in zip(view_keys, masked, strict=True):
            assert plain in inside, (event, plain, inside)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_service_catalogue_ranks_its_own_events_copies_by_their_own_keys(
    layout: Layout,
) -> None:
    # A service's catalogue has events this package does not: each view ranks its copies
    # by the catalogue it is built from, not by the package's.
    chat = next(s for s in version_catalogue() if s.name == "chat_turn")
    specs = (*version_catalogue(), dataclasses.replace(chat, name="support_turn"))
    views = {v.name: v for v in generate_views(deployment(True), layout, specs)}
    assert _rank_keys(views["support_turn"]) == _rank_keys(views["chat_turn"])
    quality = _rank_keys(views[QUALITY_VIEW])
    support = [k for k in quality if "= 'support_turn'" in k]
    assert support
    assert support == [
        k.replace("= 'chat_turn'", "= 'support_turn'") for k in quality if "= 'chat_turn'" in k
    ]
