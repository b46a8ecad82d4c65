"""The generated BigQuery views, transpiled by sqlglot to run on the local DuckDB sink.

One SQL source: each view's BigQuery query is parsed, its sink table reference is
rewritten to the local table (an expression transform, never a string replace) and
DuckDB SQL is generated from it. A payload field the local sink table does not have
(a sink that never saw the field has no column for it) reads as NULL.

A domain check ``x IN ('a', 'b', ...)`` becomes ``(x = 'a' OR x = 'b' ...)``, the same
truth value (NULL for a NULL ``x``): DuckDB plans an IN list of five or more constants
as a join, which its optimiser cannot drop when the column goes unused, so every query
of a view paid for every enum column's check (about half of a ``pipeline_run``
aggregate's time); comparisons are pruned with their column. For the same reason an
array filtered by a subquery (``ARRAY(SELECT name FROM UNNEST(a) AS name WHERE ...)``,
``EXISTS(SELECT 1 FROM UNNEST(a) AS name WHERE ...)``: the view keeps only field names in
``invalid_fields``) becomes DuckDB's ``list_filter``, not a correlated subquery.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.warehouse._duckdb_views.dedupe import guard_dedupe
from agent_telemetry.warehouse._sink.duckdb_types import duckdb_type, quote_identifier
from agent_telemetry.warehouse._sink.table import INSERT_ID, TIMESTAMP, sql_string

if TYPE_CHECKING:
    import duckdb

    from agent_telemetry.views import ViewDefinition

# (project, dataset, table) of the BigQuery sink table the generated SQL reads.
SourceTable = tuple[str, str, str]


class TranspileError(AgentTelemetryError):
    """A generated view that does not transpile to DuckDB as expected."""


def _is_source(table: exp.Table, source: SourceTable) -> bool:
    return (table.catalog, table.db, table.name) == source


def duckdb_query(
    view: ViewDefinition,
    source: SourceTable,
    *,
    sink_table: str,
    payload_column: str,
    payload_fields: Iterable[str],
    guarded: bool = True,
) -> str:
    """The view's query in DuckDB SQL, reading ``sink_table`` instead of the BigQuery sink.
    ``guarded``: the one-row-per-entry ranking runs only when the sink holds copies
    (``_duckdb_views.dedupe``); off, it runs as BigQuery runs it (the tests compare the two)."""
    fields = frozenset(payload_fields)
    return _transpile(view, source, sink_table, payload_column, fields, guarded)


@functools.cache
def _transpile(
    view: ViewDefinition,
    source: SourceTable,
    sink_table: str,
    payload_column: str,
    present: frozenset[str],
    guarded: bool,
) -> str:
    parsed = sqlglot.parse_one(view.query, read="bigquery")
    tree = parsed.transform(_as_list_filter).transform(json_type)
    rewritten = 0

    # A view of views (lane_health) reads the target dataset's views: here, the local
    # views of the same names, created before it.
    read_views = {(view.project, view.dataset, name): name for name in view.reads}

    def rewrite(node: exp.Expression) -> exp.Expression:
        nonlocal rewritten
        if isinstance(node, exp.Table):
            key = (node.catalog, node.db, node.name)
            local_name = sink_table if _is_source(node, source) else read_views.get(key)
            if local_name is None:
                return node
            rewritten += 1
            local = exp.Table(this=exp.to_identifier(local_name, quoted=True))
            alias = node.args.get("alias")
            if alias is not None:
                local.set("alias", alias.copy())
            return local
        if isinstance(node, exp.Column) and _reads_missing_field(node, payload_column, present):
            return exp.Null()
        if isinstance(node, exp.Column) and node.name.lower() == SHARD_PSEUDO_COLUMN:
            return shard_of(node.table)
        if isinstance(node, exp.In) and _is_constant_list(node):
            return _as_comparisons(node)
        return node

    local_tree = tree.transform(rewrite)
    if rewritten == 0:
        what = "the views it reads" if view.reads else f"the sink table {'.'.join(source)}"
        raise TranspileError(f"view {view.name}: no reference to {what}")
    final = guard_dedupe(local_tree, sink_table, INSERT_ID, TIMESTAMP) if guarded else local_tree
    return _typed(view, final.sql(dialect="duckdb", pretty=True))


# A sharded sink's `_TABLE_SUFFIX`: the local sink is one table; the shard a sink writes a
# row to is the UTC day of its timestamp (the oracle holds BigQuery's to the same).
SHARD_PSEUDO_COLUMN = "_table_suffix"


def shard_of(alias: str) -> exp.Expression:
    column = exp.column(TIMESTAMP, table=alias or None, quoted=True)
    utc = exp.Anonymous(this="TIMEZONE", expressions=[exp.Literal.string("UTC"), column])
    return exp.Anonymous(this="STRFTIME", expressions=[utc, exp.Literal.string("%Y%m%d")])


def _typed(view: ViewDefinition, query: str) -> str:
    """The query with each column cast to the type BigQuery gives it: DuckDB types some
    results its own way (a literal ``1`` is INTEGER, not BIGINT; sqlglot's COUNTIF is a
    SUM, HUGEINT), and a local view must answer with BigQuery's types."""
    casts = ",\n  ".join(
        f"CAST({quote_identifier(c.name)} AS {duckdb_type(c.schema_field())}) "
        f"AS {quote_identifier(c.name)}"
        for c in view.columns
    )
    return f"SELECT\n  {casts}\nFROM (\n{query}\n) AS {quote_identifier(view.name)}"


# DuckDB's json_type names DuckDB's types; BigQuery's JSON_TYPE names JSON's.
_JSON_TYPES = {
    "VARCHAR": "string",
    "BOOLEAN": "boolean",
    "BIGINT": "number",
    "UBIGINT": "number",
    "DOUBLE": "number",
    "ARRAY": "array",
    "OBJECT": "object",
    "NULL": "null",
}


def json_type(node: exp.Expr) -> exp.Expr:
    """BigQuery's ``JSON_TYPE(x)`` (``x`` a JSON value, or ``payload.key`` of one) as
    DuckDB's ``json_type`` with BigQuery's names; a missing key stays NULL."""
    if not isinstance(node, exp.JSONType):
        return node
    target = node.this
    if isinstance(target, exp.Column) and target.args.get("db") is not None:
        payload = f"{quote_identifier(target.db)}.{quote_identifier(target.table)}"
        value = f"json_extract({payload}, {sql_string('$.' + target.name)})"
    else:
        value = target.sql(dialect="duckdb")
    cases = " ".join(f"WHEN {sql_string(k)} THEN {sql_string(v)}" for k, v in _JSON_TYPES.items())
    return sqlglot.parse_one(f"CASE json_type({value}) {cases} END", read="duckdb")


def _unnest_filter(query: exp.Expression, element: bool) -> exp.Expression | None:
    """``SELECT name FROM UNNEST(a) AS name WHERE c`` (``element``: the projection is the
    element) -> ``list_filter(a, LAMBDA name: c)``; None for any other query."""
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        return None
    source = query.args.get("from_")
    unnest = source.this if source is not None else None
    if not isinstance(unnest, exp.Unnest) or len(unnest.expressions) != 1:
        return None
    if any(query.args.get(arg) for arg in ("joins", "group", "having", "order", "limit")):
        return None
    alias = unnest.args.get("alias")
    names = alias.columns if alias is not None else []
    where = query.args.get("where")
    if len(names) != 1 or where is None:
        return None
    projection = query.expressions[0].unalias()
    if element and not (isinstance(projection, exp.Column) and projection.name == names[0].name):
        return None
    body = exp.Lambda(this=where.this.copy(), expressions=[names[0].copy()])
    return exp.ArrayFilter(this=unnest.expressions[0].copy(), expression=body)


def _as_list_filter(node: exp.Expression) -> exp.Expression:
    """BigQuery's ARRAY / EXISTS over a filtered UNNEST as a ``list_filter``; a NULL
    array is an empty one, as in BigQuery."""
    if isinstance(node, exp.Array) and len(node.expressions) == 1:
        filtered = _unnest_filter(node.expressions[0], element=True)
        if filtered is not None:
            return exp.Coalesce(this=filtered, expressions=[exp.Array()])
    if isinstance(node, exp.Exists):
        filtered = _unnest_filter(node.this, element=False)
        if filtered is not None:
            size = exp.GT(this=exp.ArraySize(this=filtered), expression=exp.Literal.number(0))
            return exp.Coalesce(this=size, expressions=[exp.false()])
    return node


def _is_constant_list(node: exp.In) -> bool:
    """``x IN (literal, ...)``: not a subquery, UNNEST or a list holding NULL."""
    if any(node.args.get(arg) for arg in ("query", "unnest", "field")):
        return False
    members = node.expressions
    return bool(members) and all(isinstance(m, exp.Literal) for m in members)


def _as_comparisons(node: exp.In) -> exp.Expression:
    value = node.this
    return exp.paren(
        exp.or_(*(exp.EQ(this=value.copy(), expression=m.copy()) for m in node.expressions)),
        copy=False,
    )


def _reads_missing_field(column: exp.Column, payload_column: str, present: frozenset[str]) -> bool:
    """``<alias>.jsonPayload.<field>`` for a field the local payload struct lacks."""
    parts = [part.name for part in column.parts]
    if payload_column not in parts[:-1]:
        return False
    field = parts[parts.index(payload_column) + 1]
    return field not in present


def create_duckdb_views(
    con: duckdb.DuckDBPyConnection,
    views: Sequence[ViewDefinition],
    source: SourceTable,
    *,
    sink_table: str,
    payload_column: str,
    payload_fields: Iterable[str],
) -> tuple[str, ...]:
    """Create (or replace) every view under its BigQuery name, with its descriptions."""
    fields = tuple(payload_fields)
    statements, names = [], []
    for view in views:
        query = duckdb_query(
            view,
            source,
            sink_table=sink_table,
            payload_column=payload_column,
            payload_fields=fields,
        )
        name = quote_identifier(view.name)
        statements.append(f"CREATE OR REPLACE VIEW {name} AS\n{query}")
        statements.append(f"COMMENT ON VIEW {name} IS {sql_string(view.description)}")
        statements += [
            f"COMMENT ON COLUMN {name}.{quote_identifier(column.name)} "
            f"IS {sql_string(column.description)}"
            for column in view.columns
        ]
        names.append(view.name)
    # One call: about a hundred statements, each a round trip of its own otherwise.
    con.execute(";\n".join(statements))
    return tuple(names)
