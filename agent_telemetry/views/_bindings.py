"""Prove, from the SQL alone, that a view's columns are bound to the model's fields.

The generator is not trusted: the query is read back with sqlglot and every output
column's lineage is followed down to the sink table. A model field is bound when the
view has exactly one column of its name and that column's lineage reaches exactly
``<payload>.<field>`` (``jsonPayload.lane``, or ``json_payload`` for analytics) and
nothing else. Every other view column must be a declared envelope column with its own
expected source.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema, Schema

from agent_telemetry.config import Layout
from agent_telemetry.schema import EventSpec
from agent_telemetry.views._describe import VIEW_ENVELOPE_COLUMNS
from agent_telemetry.views._render import DIALECT, JSON_KEY_READS, json_path_key
from agent_telemetry.views._sink import PAYLOAD_COLUMN, SHARD_COLUMN, table_columns
from agent_telemetry.views._sql_error import sql_error_text


@dataclass(frozen=True, slots=True)
class BindingViolation:
    """One way a view column fails to be bound to its model field."""

    view: str
    column: str
    problem: str

    def __str__(self) -> str:
        return f"{self.view}.{self.column}: {self.problem}"


def _output_columns(tree: exp.Expr) -> list[str]:
    query = tree.expression if isinstance(tree, exp.Create) else tree
    if not isinstance(query, exp.Query):
        raise ValueError("not a query")
    return [name.lower() for name in query.named_selects]


def _payload_path(node: exp.Expr, payload: str) -> str | None:
    """``payload.key`` for a reference into the payload column, else None."""
    base = node.this if isinstance(node, (exp.Dot, *JSON_KEY_READS)) else None
    if not isinstance(base, exp.Column) or base.name.lower() != payload.lower():
        return None
    if isinstance(node, exp.Dot):
        return f"{payload}.{node.name.lower()}"
    key = json_path_key(node.expression)
    return f"{payload}.{key.lower()}" if key else f"{payload}.<unsupported path>"


def _reads(node: exp.Expr, payload: str, skip: frozenset[int] = frozenset()) -> set[str]:
    """Sink columns (and payload keys) one lineage step reads, e.g. {'jsonpayload.lane'};
    the columns whose ids are in ``skip`` are not the sink's and are left out."""
    found: set[str] = set()
    covered: set[int] = set(skip)
    for sub in node.walk():
        path = _payload_path(sub, payload)
        if path is not None and id(sub.this) not in skip:
            found.add(path)
            covered.update(id(c) for c in sub.find_all(exp.Column))
    for column in node.find_all(exp.Column):
        if id(column) in covered:
            continue
        if column.name.lower() == payload.lower():
            found.add(f"{payload}.<whole record>")
        else:
            found.add(column.name.lower())
    return found


def sources(column: str, scope: Scope, layout: Layout, schema: Schema) -> set[str]:
    """Everything in the sink that ``column`` of the (qualified) view is computed from.

    ``scope`` is the view's qualified tree, read once (``_prepare``); lineage walks it as
    it is. Without ``copy=False`` sqlglot would deep-copy the whole tree for every column
    (then walk the prepared scope anyway), and ``trim_selects`` would copy every SELECT
    it passes through just to label the nodes; neither changes what a column reaches.
    """
    payload = PAYLOAD_COLUMN[layout]
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
    reached: set[str] = set()
    for node in root.walk():
        if _across_rows(node.expression):
            reached.add(ACROSS_ROWS)
        if isinstance(node.source, exp.Unnest):
            # An element of an array the query unnests (``ARRAY(SELECT name FROM UNNEST(...)
            # WHERE ...)``): it is made of what the UNNEST reads from the sink table.
            reached.update(_unnest_reads(node.source, scope, payload))
            continue
        leaves = [d for d in node.downstream if isinstance(d.expression, exp.Table)]
        if not leaves:
            continue
        # The step that reads the sink table: what it references is what the column is
        # made of (references to CTE columns are followed by lineage as further nodes).
        expression = node.expression
        if isinstance(expression, exp.Alias):
            expression = expression.this
        reached.update(_reads(expression, payload))
    return reached


# What a column reaches when a step computes it from other lines than its own.
ACROSS_ROWS = "<other rows>"


def _across_rows(expression: exp.Expr) -> bool:
    """Whether a step may take its value from another line than the one it shows: a
    window (``LAG(...) OVER ()``), an aggregate, or a subquery that reads a table.

    Lineage names the key a column reads, not the row it reads it from; without this, a
    view showing the previous line's ``lane`` would pass for one bound to ``lane``.
    """
    for node in expression.walk():
        if isinstance(node, (exp.Window, exp.AggFunc)):
            return True
        if isinstance(node, exp.Select) and node.find(exp.Table) is not None:
            return True
    return False


def _unnest_reads(unnest: exp.Unnest, root: Scope, payload: str) -> set[str]:
    """What an UNNEST reads from the sink table itself.

    Each column is resolved where the UNNEST sits (its own scope, then outwards, as a
    correlated reference is). A column of a CTE or subquery is left out: lineage follows
    it as a node of its own, and counting its name here would take ``lines.timestamp``
    (maybe a constant) for the sink's ``timestamp``. A column that resolves nowhere reads
    as unresolved, so it can never pass for a field.
    """
    here = next((s for s in root.traverse() if s.expression is unnest), None)
    skip: set[int] = set()
    unresolved: set[str] = set()
    for column in unnest.find_all(exp.Column):
        origin = _origin(column.table, here)
        if isinstance(origin, exp.Table):
            continue
        skip.add(id(column))
        if origin is None:
            unresolved.add(f"<unresolved {column.sql(dialect=DIALECT)}>")
    return _reads(unnest, payload, frozenset(skip)) | unresolved


def _origin(table: str, scope: Scope | None) -> exp.Expr | Scope | None:
    """What the qualifier ``table`` names, seen from ``scope`` outwards."""
    while scope is not None:
        if table in scope.sources:
            source: exp.Expr | Scope = scope.sources[table]
            return source
        scope = scope.parent
    return None


class _Unreadable(Exception):
    """The SQL cannot be read back as a query over one sink table."""


def parse_view(query: str) -> exp.Expr:
    """A view's query (or its CREATE VIEW) as sqlglot reads it; raises SqlglotError."""
    return sqlglot.parse_one(query, dialect=DIALECT)


def _prepare(
    query: str | exp.Expr, layout: Layout, specs: tuple[EventSpec, ...] | None = None
) -> tuple[Scope, list[str], Schema]:
    """Parse and qualify a view's query (or its CREATE VIEW): scope, output names, schema.

    Qualified once here, so lineage does not re-qualify the whole query per column. A
    tree (``parse_view``) is qualified in place.
    """
    try:
        tree = parse_view(query) if isinstance(query, str) else query
        outputs = _output_columns(tree)
    except (SqlglotError, ValueError) as exc:
        raise _Unreadable(f"does not parse as a BigQuery query ({sql_error_text(exc)})") from None
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        tree = tree.expression
    table = _source_table(tree)
    if table is None:
        raise _Unreadable("does not read exactly one sink table")
    columns = table_columns(layout, specs)
    schema = MappingSchema({table[0]: {table[1]: {table[2]: columns}}}, dialect=DIALECT)
    try:
        qualified = qualify(
            tree, schema=schema, dialect=DIALECT, validate_qualify_columns=False, identify=False
        )
        scope = build_scope(qualified)
    except SqlglotError as exc:
        raise _Unreadable(
            f"does not qualify against the sink schema ({sql_error_text(exc)})"
        ) from None
    if scope is None:
        raise _Unreadable("is not a SELECT")
    return scope, outputs, schema


def column_lineage(query: str, layout: Layout, column: str) -> frozenset[str]:
    """What ``column`` of the view reads from the sink, e.g. ``{"jsonPayload.lane"}``."""
    scope, _, schema = _prepare(query, layout)
    return frozenset(sources(column, scope, layout, schema))


def view_lineage(query: str, layout: Layout) -> dict[str, frozenset[str]]:
    """``column_lineage`` of every output column, reading the query once."""
    scope, outputs, schema = _prepare(query, layout)
    return {c: frozenset(sources(c, scope, layout, schema)) for c in dict.fromkeys(outputs)}


def expected_sources(spec: EventSpec, layout: Layout) -> dict[str, frozenset[str]]:
    """View column -> the one thing in the sink it must read."""
    payload = PAYLOAD_COLUMN[layout]
    expected = {f: frozenset({f"{payload}.{f}"}) for f in spec.field_names}
    expected["timestamp"] = frozenset({"timestamp"})
    expected["schema_version"] = frozenset({f"{payload}.schema_version"})
    expected["invalid_fields"] = frozenset({f"{payload}.invalid_fields"})
    if layout == "sharded":  # the shard a date filter prunes by (views/_sink.py)
        expected[SHARD_COLUMN] = frozenset({"_table_suffix"})
    return expected


def envelope_columns(layout: Layout) -> tuple[str, ...]:
    """The columns an event view of ``layout`` has besides its fields."""
    shard = (SHARD_COLUMN,) if layout == "sharded" else ()
    return (*VIEW_ENVELOPE_COLUMNS, *shard)


def binding_violations(
    query: str | exp.Expr,
    spec: EventSpec,
    layout: Layout,
    view: str | None = None,
    specs: tuple[EventSpec, ...] | None = None,
) -> list[BindingViolation]:
    """Every way ``query`` fails to bind ``spec``'s fields; empty when the view is sound.

    ``query`` may be the SELECT or the whole ``CREATE VIEW`` (a committed file), as text
    or as the tree ``parse_view`` read from that text (the check parses each committed
    file once for all its stages); a tree is qualified in place. ``spec`` is the one
    event version the view shows; ``specs`` (default: every registered version) types
    the sink table.
    """
    name = view or spec.name
    try:
        scope, outputs, schema = _prepare(query, layout, specs)
    except _Unreadable as exc:
        return [BindingViolation(name, "*", str(exc))]
    counts = Counter(outputs)
    fields = spec.field_names
    problems: list[BindingViolation] = []
    for column, count in counts.items():
        if column not in fields and column not in envelope_columns(layout):
            problems.append(
                BindingViolation(name, column, "is neither a model field nor an envelope column")
            )
        if count > 1:
            problems.append(BindingViolation(name, column, f"appears {count} times"))
    expected = expected_sources(spec, layout)
    for column in (*fields, *envelope_columns(layout)):
        if counts[column] == 0:
            kind = "model field" if column in fields else "envelope column"
            problems.append(BindingViolation(name, column, f"{kind} has no column in the view"))
            continue
        if counts[column] > 1:
            continue
        try:
            reached = sources(column, scope, layout, schema)
        except SqlglotError as exc:
            problems.append(
                BindingViolation(name, column, f"lineage failed ({sql_error_text(exc)})")
            )
            continue
        want = expected[column]
        if reached != want:
            shown = ", ".join(sorted(reached)) or "nothing in the sink"
            problems.append(
                BindingViolation(
                    name,
                    column,
                    f"lineage reaches {shown}; expected exactly {', '.join(sorted(want))}",
                )
            )
    return problems


def _source_table(tree: exp.Expr) -> tuple[str, str, str] | None:
    """The one fully qualified table the query reads (project, dataset, table)."""
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables = {
        (t.catalog, t.db, t.name)
        for t in tree.find_all(exp.Table)
        if t.name.lower() not in cte_names or t.db
    }
    return next(iter(tables)) if len(tables) == 1 else None
