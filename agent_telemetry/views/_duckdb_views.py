"""The generated BigQuery views, transpiled by sqlglot to run on the local DuckDB sink.

One SQL source: each view's BigQuery query is parsed, its sink table reference is
rewritten to the local table (an expression transform, never a string replace) and
DuckDB SQL is generated from it. A payload field the local sink table does not have
(a sink that never saw the field has no column for it) reads as NULL.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from agent_telemetry.views._duckdb_types import quote_identifier
from agent_telemetry.views._load_sql import sql_string

if TYPE_CHECKING:
    import duckdb

    from agent_telemetry.views._render import ViewDefinition

# (project, dataset, table) of the BigQuery sink table the generated SQL reads.
SourceTable = tuple[str, str, str]


class TranspileError(Exception):
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
) -> str:
    """The view's query in DuckDB SQL, reading ``sink_table`` instead of the BigQuery sink."""
    return _transpile(view, source, sink_table, payload_column, frozenset(payload_fields))


@functools.cache
def _transpile(
    view: ViewDefinition,
    source: SourceTable,
    sink_table: str,
    payload_column: str,
    present: frozenset[str],
) -> str:
    tree = sqlglot.parse_one(view.query, read="bigquery")
    rewritten = 0

    def rewrite(node: exp.Expression) -> exp.Expression:
        nonlocal rewritten
        if isinstance(node, exp.Table) and _is_source(node, source):
            rewritten += 1
            local = exp.Table(this=exp.to_identifier(sink_table, quoted=True))
            alias = node.args.get("alias")
            if alias is not None:
                local.set("alias", alias.copy())
            return local
        if isinstance(node, exp.Column) and _reads_missing_field(node, payload_column, present):
            return exp.Null()
        return node

    local_tree = tree.transform(rewrite)
    if rewritten == 0:
        raise TranspileError(f"view {view.name}: no reference to the sink table {'.'.join(source)}")
    return local_tree.sql(dialect="duckdb", pretty=True)


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
    names = []
    for view in views:
        query = duckdb_query(
            view,
            source,
            sink_table=sink_table,
            payload_column=payload_column,
            payload_fields=fields,
        )
        name = quote_identifier(view.name)
        con.execute(f"CREATE OR REPLACE VIEW {name} AS\n{query}")
        con.execute(f"COMMENT ON VIEW {name} IS {sql_string(view.description)}")
        for column in view.columns:
            con.execute(
                f"COMMENT ON COLUMN {name}.{quote_identifier(column.name)} "
                f"IS {sql_string(column.description)}"
            )
        names.append(view.name)
    return tuple(names)
