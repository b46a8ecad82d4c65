"""A date filter on a view prunes what BigQuery reads, proved on the generated SQL.

docs/views.md ("A date filter prunes"): a filter on an event view's ``timestamp`` (a
sharded view's ``table_suffix`` too) must reach the sink's scan as a filter on the
sink's own column, through the one-row-per-entry window. Each way to lose it is found.
"""

from __future__ import annotations

import re

import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, Layout, load_config
from agent_telemetry.views import generate_views, pruning_violations, pushed_to_scan
from tests.conftest import EXAMPLE_CONFIG, REPO


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_generated_event_view_prunes_by_its_date_columns(layout: Layout) -> None:
    views = [v for v in generate_views(load_config(EXAMPLE_CONFIG), layout) if v.event is not None]
    assert views
    for view in views:
        assert pruning_violations(view.query, layout) == [], view.name
        assert pruning_violations(view.ddl, layout) == [], view.name


def test_the_committed_sharded_views_show_the_shard_suffix() -> None:
    sharded = [
        v for v in generate_views(load_config(EXAMPLE_CONFIG), "sharded") if v.event is not None
    ]
    for view in sharded:
        assert "table_suffix" in [c.name for c in view.columns], view.name


def _sharded(view_name: str = "pipeline_run") -> str:
    (view,) = [
        v for v in generate_views(load_config(EXAMPLE_CONFIG), "sharded") if v.name == view_name
    ]
    return view.query


def _edit(sql: str, change: object) -> str:
    tree = sqlglot.parse_one(sql, dialect="bigquery")
    return tree.transform(change).sql("bigquery")  # type: ignore[arg-type]


def test_a_sharded_view_without_its_suffix_column_is_found() -> None:
    def drop_suffix(node: exp.Expr) -> exp.Expr | None:
        if isinstance(node, exp.Alias) and node.alias == "table_suffix":
            return None
        return node

    (problem,) = pruning_violations(_edit(_sharded(), drop_suffix), "sharded")
    assert "a filter on table_suffix reaches nothing" in problem
    # The partitioned layout has no shards: no suffix is asked of it.
    assert pruning_violations(_edit(_sharded(), drop_suffix), "partitioned") == []


def test_a_suffix_left_out_of_the_window_is_found() -> None:
    def unkey(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Window):
            keys = node.args.get("partition_by") or []
            node.set("partition_by", [k for k in keys if k.name.lower() != "_table_suffix"])
        return node

    problems = pruning_violations(_edit(_sharded(), unkey), "sharded")
    assert [p.split(" reaches")[0] for p in problems] == ["a filter on table_suffix"]


def test_a_computed_or_windowed_timestamp_is_found() -> None:
    def truncate(node: exp.Expr) -> exp.Expr:
        if (
            isinstance(node, exp.Alias)
            and node.alias == "timestamp"
            and isinstance(node.this, exp.Column)
            and node.this.table == "sink"
        ):
            return exp.alias_(
                exp.func("TIMESTAMP_TRUNC", node.this.copy(), exp.var("SECOND")), "timestamp"
            )
        return node

    problems = pruning_violations(_edit(_sharded(), truncate), "sharded")
    assert [p.split(" reaches")[0] for p in problems] == ["a filter on timestamp"]

    def rekey(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Window):
            keys = node.args.get("partition_by") or []
            node.set("partition_by", [k for k in keys if k.name.lower() != "timestamp"])
        return node

    problems = pruning_violations(_edit(_sharded(), rekey), "sharded")
    assert [p.split(" reaches")[0] for p in problems] == ["a filter on timestamp"]


def test_a_join_or_a_group_blocks_the_filter() -> None:
    joined = sqlglot.parse_one(
        "SELECT a.timestamp AS timestamp FROM `p.d.t` AS a JOIN `p.d.u` AS b ON TRUE",
        dialect="bigquery",
    )
    assert pushed_to_scan(joined, {"timestamp"}) is None
    grouped = sqlglot.parse_one(
        "SELECT a.timestamp AS timestamp, COUNT(*) AS n FROM `p.d.t` AS a GROUP BY a.lane",
        dialect="bigquery",
    )
    assert pushed_to_scan(grouped, {"timestamp"}) is None
    keyed = sqlglot.parse_one(
        "SELECT a.timestamp AS timestamp, COUNT(*) AS n FROM `p.d.t` AS a GROUP BY a.timestamp",
        dialect="bigquery",
    )
    assert pushed_to_scan(keyed, {"timestamp"}) == {"timestamp"}


def test_the_example_service_views_prune_too() -> None:
    root = REPO / "examples" / "service" / "telemetry" / "views"
    files = sorted((root / "partitioned").glob("*.sql"))
    assert files
    for path in files:
        if path.stem in ("telemetry_quality", "lane_health"):
            continue
        assert pruning_violations(path.read_text(), "partitioned") == [], path.name


def _doc_queries() -> dict[str, str]:
    """The captioned SQL blocks of docs/views.md's "A date filter prunes"."""
    text = (REPO / "docs" / "views.md").read_text()
    section = text.split("## A date filter prunes", 1)[1].split("\n## ", 1)[0]
    found = {}
    for caption, body in re.findall(r"`(\w+)\.sql`:\s*\n\s*```sql\n(.*?)```", section, re.S):
        found[caption] = body
    return found


def test_the_docs_date_filters_prune() -> None:
    """Each example's date filter reaches the sink's scan as one BigQuery prunes by,
    through the view it reads (the committed SQL of that layout, expanded)."""
    queries = _doc_queries()
    assert sorted(queries) == ["partitioned", "sharded"]
    for layout, sql in queries.items():
        views = {v.name: v for v in generate_views(load_config(EXAMPLE_CONFIG), layout)}
        tree = sqlglot.parse_one(sql, dialect="bigquery")
        table = tree.args["from_"].this
        view = views[table.name]
        wanted = "_table_suffix" if layout == "sharded" else "timestamp"
        where = tree.args["where"].this
        conditions = list(where.flatten()) if isinstance(where, exp.And) else [where]
        reached = [
            pushed_to_scan(sqlglot.parse_one(view.query, dialect="bigquery"), {c.this.name})
            for c in conditions
        ]
        assert {wanted} in reached, (layout, reached)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_plans_one_day_query_filters_in_the_pruning_form(layout: Layout) -> None:
    """`views plan` dry-runs `one_day_query` next to the whole view: for an event view
    its filter reaches the sink's scan as one that prunes."""
    from agent_telemetry.views import one_day_query

    views = generate_views(load_config(EXAMPLE_CONFIG), layout)
    wanted = "_table_suffix" if layout == "sharded" else "timestamp"
    for view in views:
        tree = sqlglot.parse_one(one_day_query(view, views), dialect="bigquery")
        if view.event is None:
            assert tree.args.get("where") is not None, view.name
            continue
        where = tree.args["where"].this
        conditions = list(where.flatten()) if isinstance(where, exp.And) else [where]
        inner = tree.args["from_"].this.this
        reached = [pushed_to_scan(inner, {c.this.name}) for c in conditions]
        assert {wanted} in reached, (view.name, reached)
