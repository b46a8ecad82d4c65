"""Prove, from the SQL alone, that ``lane_health`` reads only the event views' columns,
each column exactly the ones it says.

The sink proof (``_bindings``) follows every column of an event view down to one payload
key. An aggregate cannot be held to that: a count reads many lines. What it is held to
instead, read back from the committed SQL with sqlglot and never from the generator:
- it reads no table but the two event views in the target dataset (no sink, no other
  view, no other dataset), so every value passed the event views' checks and dedupe;
- every column it reads exists in those views (qualified against their columns, which
  come from the models);
- its columns are the declared ones, in order, once each;
- each column's lineage reaches exactly the event-view columns ``LaneColumn.reads``
  declares (``runs_stalled`` reads ``pipeline_run.reason`` and nothing else).
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.schema import EventSpec
from agent_telemetry.views._bindings import BindingViolation, parse_view
from agent_telemetry.views._lanes import LANE_VIEW, foreign_tables, lane_plan, read_views_schema
from agent_telemetry.views._render import DIALECT
from agent_telemetry.views._sql_error import sql_error_text


def _query(query: str | exp.Expr) -> exp.Query:
    tree = parse_view(query) if isinstance(query, str) else query
    if isinstance(tree, exp.Create):
        tree = tree.expression
    if not isinstance(tree, exp.Query):
        raise ValueError("not a query")
    return tree


def column_reads(column: str, scope: Scope, schema: dict[str, object]) -> frozenset[str]:
    """The event-view columns (``view.column``) ``column`` of the view is computed from."""
    root = lineage(
        column,
        scope.expression,
        schema=schema,
        dialect=DIALECT,
        scope=scope,
        trim_selects=False,
        copy=False,
    )
    assert isinstance(root, Node)
    return frozenset(
        f"{node.expression.name}.{node.name.split('.')[-1]}"
        for node in root.walk()
        if isinstance(node.expression, exp.Table)
    )


def lane_violations(
    query: str | exp.Expr, config: DeploymentConfig, specs: tuple[EventSpec, ...]
) -> list[BindingViolation]:
    """Every way ``query`` (the SELECT or the whole CREATE VIEW, text or a parsed tree,
    qualified in place) fails the proof above; empty when it holds."""
    plan = lane_plan(specs)
    if plan is None:
        return [BindingViolation(LANE_VIEW, "*", "the catalogue has no events it can read")]
    try:
        tree = _query(query)
    except (SqlglotError, ValueError) as exc:
        problem = f"does not parse as a BigQuery query ({sql_error_text(exc)})"
        return [BindingViolation(LANE_VIEW, "*", problem)]
    foreign = foreign_tables(tree, config, plan)
    if foreign:
        shown = ", ".join(sorted(set(foreign)))
        return [BindingViolation(LANE_VIEW, "*", f"reads {shown}, not only the event views")]
    schema = read_views_schema(config, plan, specs)
    try:
        qualified = qualify(
            tree, schema=schema, dialect=DIALECT, validate_qualify_columns=True, identify=False
        )
        scope = build_scope(qualified)
    except SqlglotError as exc:
        problem = f"reads a column the event views do not have ({sql_error_text(exc)})"
        return [BindingViolation(LANE_VIEW, "*", problem)]
    if scope is None:
        return [BindingViolation(LANE_VIEW, "*", "is not a SELECT")]
    outputs = [name.lower() for name in qualified.named_selects]
    declared = {c.name: c.reads for c in plan.columns}
    problems: list[BindingViolation] = []
    counts = Counter(outputs)
    for column, count in counts.items():
        if column not in declared:
            problems.append(BindingViolation(LANE_VIEW, column, "is not a lane_health column"))
        elif count > 1:
            problems.append(BindingViolation(LANE_VIEW, column, f"appears {count} times"))
    if [c for c in outputs if c in declared] != [c for c in declared if c in counts]:
        problems.append(BindingViolation(LANE_VIEW, "*", "columns are not in the declared order"))
    for column, want in declared.items():
        if counts[column] != 1:
            if counts[column] == 0:
                problems.append(BindingViolation(LANE_VIEW, column, "has no column in the view"))
            continue
        try:
            reached = column_reads(column, scope, schema)
        except SqlglotError as exc:
            problem = f"lineage failed ({sql_error_text(exc)})"
            problems.append(BindingViolation(LANE_VIEW, column, problem))
            continue
        if reached != want:
            shown = ", ".join(sorted(reached)) or "no event-view column"
            expected = ", ".join(sorted(want)) or "no event-view column"
            problems.append(
                BindingViolation(
                    LANE_VIEW, column, f"lineage reaches {shown}; expected exactly {expected}"
                )
            )
    return problems
