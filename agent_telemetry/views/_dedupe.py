"""Prove, from the SQL alone, that a view keeps one row per log entry, and still prunes.

The bindings proof follows what each column reads; it cannot see which rows a view keeps.
This reads the query back with sqlglot and holds it to the form docs/design.md ("Views")
promises. With dedupe on, every SELECT that reads the sink table keeps its rows with
exactly

    QUALIFY sink.<insert id> IS NULL
      OR ROW_NUMBER() OVER (PARTITION BY sink.<insert id>, sink.timestamp[, sink._TABLE_SUFFIX]
                            ORDER BY sink.<payload>.event ASC NULLS FIRST, ...) = 1

(the other branch exactly ``sink.<insert id> IS NULL``, nothing else), and every window
in the query is partitioned by exactly those sink columns (``_TABLE_SUFFIX`` in the
sharded layout only), with no frame: the key is the LogEntry's, rows without an insert
id are never merged, and a filter on ``timestamp`` (or the shard) keeps or drops whole
windows, so it can still be applied below them and prune partitions (or shards).

A window that ranks copies orders them by ``event`` first, then by every payload key the
query reads anywhere, each ascending with NULL first (a key may be read only for copies
of one event, ``IF(event = '<name>', <key>, NULL)``), and every ranking window orders
alike: copies the order cannot tell apart show the same values, so the copy kept is one
rule, not the engine's choice. ``event`` first is what makes the views agree with each
other: copies of two events differ in the first key, so every view orders them alike
and keeps the same event's copy (docs/design.md, "One row per log entry"). With dedupe
off, there is no QUALIFY and no window.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent_telemetry.config import Layout
from agent_telemetry.views._render import DIALECT, JSON_KEY_READS, json_path_key
from agent_telemetry.views._sink import INSERT_ID_COLUMN, PAYLOAD_COLUMN
from agent_telemetry.views._sql_error import sql_error_text

TIMESTAMP = "timestamp"
TABLE_SUFFIX = "_TABLE_SUFFIX"
EVENT = "event"


def _query(sql: str | exp.Expr) -> exp.Expr:
    tree = sql if isinstance(sql, exp.Expr) else sqlglot.parse_one(sql, dialect=DIALECT)
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        return tree.expression
    return tree


def _sink_reads(tree: exp.Expr) -> list[tuple[exp.Select, str]]:
    """Each SELECT whose FROM is a real table (not a CTE), with the alias it reads it by."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    found = []
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_")
        table = source.this if source is not None else None
        if isinstance(table, exp.Table) and (table.db or table.name.lower() not in ctes):
            found.append((select, table.alias_or_name))
    return found


def _is_sink_column(node: exp.Expr, alias: str, name: str) -> bool:
    return (
        isinstance(node, exp.Column)
        and node.table.lower() == alias.lower()
        and node.name.lower() == name.lower()
    )


def entry_keys(layout: Layout) -> tuple[str, ...]:
    """The sink columns every window partitions by: the entry's key, and what a date
    filter is written on (a sharded sink's shard suffix)."""
    keys = (INSERT_ID_COLUMN[layout], TIMESTAMP)
    return (*keys, TABLE_SUFFIX) if layout == "sharded" else keys


def _window_problem(window: exp.Window, alias: str, layout: Layout) -> str | None:
    """Why ``window`` is not exactly ``OVER (PARTITION BY <entry keys>)``."""
    keys = window.args.get("partition_by") or []
    wanted = entry_keys(layout)
    names = [k.name.lower() for k in keys if isinstance(k, exp.Column)]
    sink_keys = all(_is_sink_column(k, alias, k.name) for k in keys)
    if len(keys) != len(wanted) or not sink_keys or set(names) != {k.lower() for k in wanted}:
        shown = ", ".join(k.sql(DIALECT) for k in keys) or "nothing"
        return (
            f"a window is partitioned by {shown}; expected exactly the sink's "
            f"{', '.join(wanted)} (the entry's key; {TIMESTAMP} keeps partition pruning"
            f"{f', {TABLE_SUFFIX} shard pruning' if layout == 'sharded' else ''})"
        )
    if window.args.get("spec"):
        return "a window frames its rows; only the default frame counts an entry's copies"
    return None


def _payload_keys(node: exp.Expr, payload: str) -> set[str]:
    """The payload keys read anywhere under ``node`` (``payload.key`` or a JSON path)."""
    keys: set[str] = set()
    for column in node.find_all(exp.Column):
        if column.table.lower() == payload.lower():  # sink.payload.key, as parsed
            keys.add(column.name.lower())
            continue
        if column.name.lower() != payload.lower():
            continue
        parent = column.parent
        if isinstance(parent, exp.Dot) and parent.this is column:
            keys.add(parent.name.lower())
        elif isinstance(parent, JSON_KEY_READS) and parent.this is column:
            key = json_path_key(parent.expression)
            keys.add("<any path>" if key is None else key.lower())
        else:
            keys.add("<the whole payload>")
    return keys


def _masked_key(key: exp.Expr, payload: str) -> set[str] | None:
    """The payload key of ``IF(<event> = '<name>', <one key>, NULL)``: a key read only for
    copies of one event (telemetry_quality); None for any other form."""
    if not isinstance(key, exp.If) or not isinstance(key.args.get("false"), exp.Null):
        return None
    test = _unparen(key.this)
    if not (isinstance(test, exp.EQ) and isinstance(test.expression, exp.Literal)):
        return None
    if not test.expression.is_string or _payload_keys(test.this, payload) != {EVENT}:
        return None
    read = _payload_keys(key.args["true"], payload)
    return read if len(read) == 1 else None


def _order_problems(tree: exp.Expr, layout: Layout) -> list[str]:
    """Why the windows that rank copies do not rank them by one total rule, `event`
    first (so every view orders the copies of two events alike)."""
    payload = PAYLOAD_COLUMN[layout]
    orders = {
        window.args["order"].sql(DIALECT)
        for window in tree.find_all(exp.Window)
        if window.args.get("order")
    }
    problems = []
    if len(orders) > 1:
        problems.append("the windows rank an entry's copies in different orders")
    ranked: set[str] = set()
    for window in tree.find_all(exp.Window):
        order = window.args.get("order")
        if order is None:
            if isinstance(window.this, exp.RowNumber):
                problems.append(
                    "ROW_NUMBER() ranks an entry's copies in no order: which copy is kept "
                    "would be the engine's choice"
                )
            continue
        for place, key in enumerate(order.expressions):
            if not isinstance(key, exp.Ordered) or key.args.get("desc"):
                problems.append("copies are ranked in descending order; the rule is ascending")
            elif not key.args.get("nulls_first"):
                problems.append("copies are ranked with NULL last; the rule puts NULL first")
            read = _payload_keys(key, payload)
            if place == 0 and read != {EVENT}:
                problems.append(
                    "copies are not ranked by event first: two views could keep copies of "
                    "two events of one entry (the entry shown twice, or in no view)"
                )
            masked = _masked_key(key.this, payload) if isinstance(key, exp.Ordered) else None
            if masked is not None:
                read = masked
            elif len(read) != 1:
                problems.append("a rank key reads other than exactly one payload key")
            ranked |= read
    if orders:
        unranked = _payload_keys(tree, payload) - ranked
        if unranked:
            problems.append(
                "copies are not ranked by every payload key the view reads "
                f"(missing {', '.join(sorted(unranked))}): two copies could tie and differ"
            )
    return problems


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _keeps_first_copy(condition: exp.Expr, alias: str, insert_id: str) -> bool:
    """``<insert id> IS NULL OR ROW_NUMBER() OVER (...) = 1``, either way round."""
    condition = _unparen(condition)
    if not isinstance(condition, exp.Or):
        return False
    sides = [_unparen(condition.this), _unparen(condition.expression)]
    no_id = [
        s
        for s in sides
        if isinstance(s, exp.Is)
        and isinstance(s.expression, exp.Null)
        and _is_sink_column(s.this, alias, insert_id)
    ]
    first = [
        s
        for s in sides
        if isinstance(s, exp.EQ)
        and isinstance(s.this, exp.Window)
        and isinstance(s.this.this, exp.RowNumber)
        and isinstance(s.expression, exp.Literal)
        and s.expression.is_int
        and s.expression.this == "1"
    ]
    return len(no_id) == 1 and len(first) == 1


def dedupe_violations(sql: str | exp.Expr, layout: Layout, dedupe: bool) -> list[str]:
    """Every way ``sql`` (a view's query or its CREATE VIEW, as text or as parsed by
    ``parse_view``; the tree is only read) departs from the dedupe form ``dedupe`` asks
    for; empty when it keeps exactly the rows promised."""
    try:
        tree = _query(sql)
    except SqlglotError as exc:
        return [f"does not parse as a BigQuery query ({sql_error_text(exc)})"]
    insert_id = INSERT_ID_COLUMN[layout]
    reads = _sink_reads(tree)
    if not reads:
        return ["does not read the sink table"]
    problems: list[str] = []
    for select, alias in reads:
        qualify = select.args.get("qualify")
        windows = list(select.find_all(exp.Window))
        if not dedupe:
            if qualify is not None or windows:
                problems.append(
                    "dedupe is off in telemetry.toml, but the view filters rows with a window"
                )
            continue
        if qualify is None or not _keeps_first_copy(qualify.this, alias, insert_id):
            problems.append(
                f"does not keep one row per log entry: the sink read needs exactly "
                f"QUALIFY {alias}.{insert_id} IS NULL OR ROW_NUMBER() OVER "
                f"(PARTITION BY {', '.join(f'{alias}.{k}' for k in entry_keys(layout))} "
                "ORDER BY ...) = 1"
            )
        for window in windows:
            problem = _window_problem(window, alias, layout)
            if problem is not None:
                problems.append(problem)
    if dedupe:
        problems += _order_problems(tree, layout)
    # A window over a CTE's rows would not be held to the key above.
    held = {id(w) for select, _ in reads for w in select.find_all(exp.Window)}
    if any(id(w) not in held for w in tree.find_all(exp.Window)):
        problems.append("a window reads something other than the sink table")
    return list(dict.fromkeys(problems))
