"""Prove, from the SQL alone, that a date filter on a view prunes what BigQuery reads.

BigQuery skips a partition only for a filter on the partitioning column (``timestamp``)
and a shard of a wildcard table only for a filter on ``_TABLE_SUFFIX``, and only when the
filter reaches the table's scan (docs/views.md, "A date filter prunes"). A filter on a
view's column reaches the scan when every step between them passes that column through
as it is: no join, no computed value, no GROUP BY the column is not a key of, and no
window it does not partition (a filter below a window would change the window's rows).

``pushed_to_scan(query, names)`` follows a filter on output columns ``names`` of
``query`` down to the sink and returns the sink columns it becomes, or None where it
stops; ``pruning_violations(query, layout)`` holds an event view to the rule: its
``timestamp`` (and a sharded view's shard column) reach the scan as the sink's own.
``one_day_query(view, views)`` is the query of one day of a view that ``views plan``
dry-runs next to the whole view.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent_telemetry.config import Layout
from agent_telemetry.views._inline import inlined_query
from agent_telemetry.views._render import DIALECT, ViewDefinition
from agent_telemetry.views._sink import SHARD_COLUMN
from agent_telemetry.views._sql_error import sql_error_text

TIMESTAMP = "timestamp"
TABLE_SUFFIX = "_table_suffix"


def _sources(select: exp.Select) -> dict[str, exp.Expr]:
    """Alias -> what ``select``'s FROM names by it: a subquery's or a CTE's query (CTEs of
    this SELECT and of every query around it), or a table."""
    ctes: dict[str, exp.Expr] = {}
    node: exp.Expr | None = select
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if with_ is not None:
            for cte in with_.expressions:
                ctes.setdefault(cte.alias_or_name.lower(), cte.this)
        node = node.parent
    source = select.args.get("from_")
    item = source.this if source is not None else None
    if isinstance(item, exp.Subquery):
        return {item.alias_or_name.lower(): item.this}
    if isinstance(item, exp.Table):
        named = ctes.get(item.name.lower()) if not item.db else None
        return {item.alias_or_name.lower(): named if named is not None else item}
    return {}


def _own_windows(select: exp.Select) -> list[exp.Window]:
    return [w for w in select.find_all(exp.Window) if w.find_ancestor(exp.Select) is select]


def pushed_to_scan(query: exp.Expr, names: set[str]) -> set[str] | None:
    """The sink columns a filter on ``query``'s output columns ``names`` becomes at the
    sink's scan, or None when a step between blocks it (see the module's rule)."""
    if isinstance(query, exp.Union):
        left = pushed_to_scan(query.left, names)
        right = pushed_to_scan(query.right, names)
        return None if left is None or right is None else left | right
    if isinstance(query, exp.Subquery):
        return pushed_to_scan(query.this, names)
    if not isinstance(query, exp.Select) or query.args.get("joins"):
        return None
    outputs = {e.alias_or_name.lower(): e for e in query.expressions}
    keys = [{k.sql(DIALECT) for k in w.args.get("partition_by") or []} for w in _own_windows(query)]
    group = query.args.get("group")
    groups = {k.sql(DIALECT) for k in group.expressions} if group is not None else None
    sources = _sources(query)
    reached: set[str] = set()
    for name in names:
        projection = outputs.get(name.lower())
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(value, exp.Column):
            return None  # absent, or computed: a filter on it is not one on the column
        if any(value.sql(DIALECT) not in window for window in keys):
            return None
        if groups is not None and value.sql(DIALECT) not in groups:
            return None
        source = sources.get(value.table.lower())
        if isinstance(source, exp.Table):
            reached.add(value.name.lower())
            continue
        below = None if source is None else pushed_to_scan(source, {value.name})
        if below is None:
            return None
        reached |= below
    return reached


def _query(sql: str | exp.Expr) -> exp.Expr:
    tree = sql if isinstance(sql, exp.Expr) else sqlglot.parse_one(sql, dialect=DIALECT)
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        return tree.expression
    return tree


def pruning_violations(sql: str | exp.Expr, layout: Layout) -> list[str]:
    """Every date filter of an event view (``sql``: its query or CREATE VIEW) that would
    not reach the sink's scan as a filter BigQuery prunes by; empty when all do."""
    try:
        tree = _query(sql)
    except SqlglotError as exc:
        return [f"does not parse as a BigQuery query ({sql_error_text(exc)})"]
    wanted = {TIMESTAMP: TIMESTAMP}
    if layout == "sharded":
        wanted[SHARD_COLUMN] = TABLE_SUFFIX
    problems = []
    for column, sink in wanted.items():
        reached = pushed_to_scan(tree, {column})
        if reached != {sink}:
            shown = "nothing" if reached is None else ", ".join(sorted(reached)) or "nothing"
            problems.append(
                f"a filter on {column} reaches {shown} at the sink's scan, not the sink's "
                f"{sink}: it would not prune (every step must pass it through as it is)"
            )
    return problems


def one_day_filter(columns: Sequence[str]) -> str:
    """The filter of a query of one day (today, UTC) of a view with ``columns``, alias
    ``v``, in the form that prunes where the view allows it (docs/views.md)."""
    today = "CURRENT_DATE()"
    if SHARD_COLUMN in columns:
        return (
            f"v.{SHARD_COLUMN} >= FORMAT_DATE('%Y%m%d', {today}) "
            f"AND v.{TIMESTAMP} >= TIMESTAMP({today})"
        )
    if TIMESTAMP in columns:
        return f"v.{TIMESTAMP} >= TIMESTAMP({today})"
    if "day" in columns:  # telemetry_quality
        return f"v.day = {today}"
    if "window_start" in columns:  # lane_health
        return f"v.window_start >= TIMESTAMP({today})"
    raise ValueError("the view has no date column")


def one_day_query(view: ViewDefinition, views: Sequence[ViewDefinition]) -> str:
    """A query of one day of ``view`` (the views it reads written in, as ``views plan``
    dry-runs the whole view): its dry run is what a day's question costs."""
    where = one_day_filter([c.name for c in view.columns])
    return f"SELECT *\nFROM (\n{inlined_query(view, views).rstrip()}\n) AS v\nWHERE {where}\n"
