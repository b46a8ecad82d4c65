"""The views' one-row-per-entry ranking, run in DuckDB only when the sink holds copies.

Every event view keeps one row per log entry the BigQuery way (docs/design.md, "One
row per log entry"): ``QUALIFY insertId IS NULL OR ROW_NUMBER() OVER (PARTITION BY
insertId, timestamp ORDER BY <every payload column>) = 1``. DuckDB computes that window
for every row whatever its outcome: on 1,000,000 LogEntries with distinct insert ids it
was 90% of a ``pipeline_run`` aggregate (1.2 s of 1.3 s).

Locally such a SELECT becomes two branches of one ``UNION ALL``, guarded by one question,
whether any two rows of the sink share an insert id and timestamp:

- no: the rows as they are, without the window (every partition holds one row, which
  ``ROW_NUMBER() = 1`` keeps);
- yes: the original SELECT, window and all, unchanged.

Exactly one branch yields rows, so the view's answer is the ranking's on every sink. A
WHERE stays in both branches (the question is asked of the whole table: no copies there,
none among the rows kept). A SELECT in any other form (another partition, a window or
aggregate in its projection, a join) is left as it is: slower, never different.
``tests/warehouse/test_duckdb_dedupe.py`` holds both forms equal on sinks with copies.
"""

from __future__ import annotations

from sqlglot import exp


def _is_column(node: exp.Expr, table: str, name: str) -> bool:
    return isinstance(node, exp.Column) and node.table == table and node.name == name


def _ranks_copies(select: exp.Select, sink_table: str, insert_id: str, timestamp: str) -> bool:
    """Whether ``select`` reads the sink alone and keeps one row per entry by the views'
    ranking, in the form above."""
    source = select.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or table.name != sink_table or table.db:
        return False
    if any(select.args.get(arg) for arg in ("joins", "group", "having", "distinct", "limit")):
        return False
    if any(p.find(exp.Window, exp.AggFunc) for p in select.expressions):
        return False
    qualify = select.args.get("qualify")
    keep = qualify.this if qualify is not None else None
    alias = table.alias_or_name
    if not (isinstance(keep, exp.Or) and isinstance(keep.this, exp.Is)):
        return False
    no_id = keep.this
    if not (_is_column(no_id.this, alias, insert_id) and isinstance(no_id.expression, exp.Null)):
        return False
    ranked = keep.expression
    if not (isinstance(ranked, exp.EQ) and isinstance(ranked.this, exp.Window)):
        return False
    window, first = ranked.this, ranked.expression
    if not (isinstance(window.this, exp.RowNumber) and first == exp.Literal.number(1)):
        return False
    partition = window.args.get("partition_by") or []
    return len(partition) == 2 and (
        _is_column(partition[0], alias, insert_id) and _is_column(partition[1], alias, timestamp)
    )


def _has_copies(sink_table: str, insert_id: str, timestamp: str) -> exp.Expr:
    """Whether two rows of the sink share an insert id and timestamp (NULL timestamps
    alike, as the window's partitions have them)."""
    key = [exp.column(insert_id, quoted=True), exp.column(timestamp, quoted=True)]
    copies = (
        exp.select("1")
        .from_(exp.Table(this=exp.to_identifier(sink_table, quoted=True)))
        .where(exp.column(insert_id, quoted=True).is_(exp.null()).not_())
        .group_by(*key)
        .having("count(*) > 1")
    )
    return exp.Exists(this=copies)


def guard_dedupe(tree: exp.Expr, sink_table: str, insert_id: str, timestamp: str) -> exp.Expr:
    """``tree`` with every SELECT that ranks the sink's copies guarded (see above)."""

    def guard(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Select):
            return node
        if not _ranks_copies(node, sink_table, insert_id, timestamp):
            return node
        copies = _has_copies(sink_table, insert_id, timestamp)
        plain = node.copy()
        plain.set("qualify", None)
        ranked = node.copy()
        return exp.union(
            plain.where(exp.not_(copies.copy()), copy=False),
            ranked.where(copies, copy=False),
            distinct=False,
        )

    return tree.transform(guard)
