"""What typical analyst queries cost in BigQuery, computed from the committed view SQL.

BigQuery bills a query by the bytes of the columns it reads, in the partitions or shards
it reads, after views are expanded. For each layout this takes five analyst queries,
expands the views they read (the committed SQL of a git revision, or of the work tree),
and, with sqlglot's optimizer (``qualify``, then ``pushdown_projections``: a column no
one uses is dropped from every CTE and subquery, as BigQuery's planner drops it):

- lists the sink columns the query still reads (payload keys by name);
- the minimum: the same query over the views without their one-row-per-entry QUALIFY
  (what ``dedupe = false`` generates), i.e. what the answer itself needs;
- whether the query's date filter reaches the sink's scan in a form that prunes
  (``agent_telemetry.views.pushed_to_scan``), hence how many of the 90 days it reads;
- the bytes at 10,000,000 lines a day, 90 days kept, and the on-demand price.

Widths per column: BigQuery's logical sizes (STRING 2 bytes + its UTF-8 length, INT64 and
FLOAT64 and TIMESTAMP 8, BOOL 1, NULL 0; https://cloud.google.com/bigquery/pricing), each
payload key averaged over the lines of the demo's simulated morning (its event mix and
values; a key the demo never writes: its schema's width, on 1 line in 8). ``insertId`` is
taken as 24 characters. The Log Analytics layout reads ``json_payload``, a JSON column:
billed here as its whole serialized payload per line (the demo's average), so its bytes
move only with pruning.

Usage: ``python bench/bigquery_cost.py [--before REV] [--after REV]`` (default: c028ceb
against the work tree); prints a markdown table per revision and the column lists.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify

from agent_telemetry.views import pushed_to_scan

ROOT = Path(__file__).resolve().parent.parent
DIALECT = "bigquery"
LINES_PER_DAY = 10_000_000
DAYS_KEPT = 90
PRICE_PER_TIB = 6.25  # USD, on-demand, https://cloud.google.com/bigquery/pricing
TIB = 2**40
QUERIES_A_MONTH = 60 * 24 * 30  # a dashboard asking once a minute
INSERT_ID_CHARS = 24
LAYOUTS = ("partitioned", "sharded", "analytics")
PACKAGE = ("agent_telemetry/views/generated/{layout}", "acme-agents-prod.agent_telemetry")
SERVICE = ("examples/service/telemetry/views/{layout}", "acme-myservice-prod.myservice_telemetry")
PAYLOAD = {"partitioned": "jsonpayload", "sharded": "jsonpayload", "analytics": "json_payload"}
SHARD = "table_suffix"
TODAY = "CURRENT_DATE()"
WEEK = "DATE_SUB(CURRENT_DATE(), INTERVAL 6 DAY)"


@dataclass(frozen=True)
class Query:
    label: str
    views: tuple[str, str]  # (folder, dataset) of the catalogue it reads
    view: str
    days: int  # the days its date filter keeps
    sql: str  # {v}: the view; {when}: its date filter on alias v


QUERIES = (
    Query(
        "runs per lane today",
        PACKAGE,
        "pipeline_run",
        1,
        "SELECT v.lane, COUNT(*) AS runs FROM {v} AS v WHERE {when} GROUP BY v.lane",
    ),
    Query(
        "p95 queue wait per lane this week",
        PACKAGE,
        "pipeline_run",
        7,
        "SELECT v.lane, APPROX_QUANTILES(v.queue_wait_ms, 100)[OFFSET(95)] AS p95 "
        "FROM {v} AS v WHERE {when} GROUP BY v.lane",
    ),
    Query(
        "last hour of lane_health",
        PACKAGE,
        "lane_health",
        1,
        "SELECT * FROM {v} AS v WHERE {when}",
    ),
    Query(
        "telemetry_quality today",
        PACKAGE,
        "telemetry_quality",
        1,
        "SELECT * FROM {v} AS v WHERE {when}",
    ),
    Query(
        "cache hits per tier today (examples/service)",
        SERVICE,
        "cache_lookup",
        1,
        "SELECT v.tier, COUNTIF(v.result = 'hit') AS hits FROM {v} AS v WHERE {when} "
        "GROUP BY v.tier",
    ),
)


def date_filter(query: Query, columns: set[str]) -> str:
    """The filter an analyst writes for the query's days, in the form that prunes when
    the view allows it (docs/views.md, "A date filter prunes")."""
    since = TODAY if query.days == 1 else WEEK
    if query.view == "telemetry_quality":
        return f"v.day >= {since}"
    if query.view == "lane_health":
        return "v.window_start >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)"
    when = f"v.timestamp >= TIMESTAMP({since})"
    if SHARD in columns:
        when += f" AND v.{SHARD} >= FORMAT_DATE('%Y%m%d', {since})"
    return when


# -- the committed SQL ---------------------------------------------------------------


def read_views(rev: str | None, folder: str) -> dict[str, exp.Query]:
    """View name -> its query, from ``folder`` at ``rev`` (None: the work tree)."""
    if rev is None:
        files = {p.stem: p.read_text() for p in sorted((ROOT / folder).glob("*.sql"))}
    else:
        listing = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{rev}:{folder}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        files = {
            Path(name).stem: subprocess.run(
                ["git", "show", f"{rev}:{folder}/{name}"],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            for name in listing
            if name.endswith(".sql")
        }
    views = {}
    for name, text in files.items():
        tree = sqlglot.parse_one(text, dialect=DIALECT)
        assert isinstance(tree, exp.Create), name
        query = tree.expression
        assert isinstance(query, exp.Query), name
        views[name] = query
    return views


def expanded(sql: str, views: dict[str, exp.Query], dataset: str, dedupe: bool) -> exp.Expr:
    """``sql`` with every view it reads (and they read) written in, qualified, with the
    columns no one uses pushed out; without ``dedupe``, every QUALIFY removed."""
    project, name = dataset.split(".")

    def inline(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and node.catalog == project and node.db == name:
            inner = views[node.name].copy().transform(inline)
            return exp.Subquery(this=inner, alias=node.args.get("alias"))
        return node

    tree = sqlglot.parse_one(sql, dialect=DIALECT).transform(inline)
    if not dedupe:
        for select in tree.find_all(exp.Select):
            select.set("qualify", None)
    tree = qualify(tree, dialect=DIALECT, validate_qualify_columns=False, identify=False)
    return pushdown_projections(tree)


# -- what a query reads --------------------------------------------------------------


def _scan_alias(select: exp.Select) -> str | None:
    source = select.args.get("from_")
    table = source.this if source is not None else None
    if isinstance(table, exp.Table) and table.db:
        return table.alias_or_name.lower()
    return None


def sink_reads(tree: exp.Expr, layout: str) -> set[str]:
    """The sink columns the query reads: top-level names, payload keys as ``payload.key``
    (the analytics payload, a JSON column, as itself)."""
    payload = PAYLOAD[layout]
    aliases = {a for s in tree.find_all(exp.Select) if (a := _scan_alias(s)) is not None}
    reads: set[str] = set()
    for column in tree.find_all(exp.Column):
        if column.table.lower() not in aliases:
            continue
        name = column.name.lower()
        parent = column.parent
        if name == payload and isinstance(parent, exp.Dot) and parent.this is column:
            reads.add(f"{payload}.{parent.name.lower()}")  # sink.payload.key
        else:
            reads.add(name)
    return reads


def pruned(tree: exp.Expr, layout: str) -> bool:
    """Whether the outer query's date filter reaches the sink's scan as a filter on what
    prunes it: ``timestamp`` (partitioned, analytics) or the shard suffix (sharded)."""
    assert isinstance(tree, exp.Select)
    where = tree.args.get("where")
    if where is None:
        return False
    wanted = "_table_suffix" if layout == "sharded" else "timestamp"
    for condition in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        if not isinstance(condition, exp.GT | exp.GTE | exp.EQ | exp.LT | exp.LTE):
            continue
        column = condition.this
        if not isinstance(column, exp.Column) or condition.expression.find(exp.Column):
            continue
        source = tree.args["from_"].this  # the expanded view, a subquery
        if not isinstance(source, exp.Subquery) or source.alias_or_name != column.table:
            continue
        reached = pushed_to_scan(source.this, {column.name})
        if reached == {wanted}:
            return True
    return False


# -- bytes ---------------------------------------------------------------------------


def _width(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, int | float):
        return 8
    if isinstance(value, list):
        return sum(_width(v) for v in value)
    return 2 + len(str(value).encode())


def demo_widths() -> tuple[dict[str, float], float]:
    """Average logical bytes per line of each payload key in the demo's lines (keys
    Cloud Logging lifts out of the payload excluded), and of the whole JSON payload."""
    from agent_telemetry.demo import SEED
    from agent_telemetry.demo._sim import Simulation, emitting_at
    from agent_telemetry.demo._workload import START, run_workload

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "telemetry.jsonl"
        sim = Simulation(START)
        with log.open("wb") as stream, emitting_at(sim, stream):
            run_workload(sim, SEED)
        lines = [json.loads(line) for line in log.read_text().splitlines()]
    totals: Counter[str] = Counter()
    whole = 0
    for line in lines:
        payload = {k: v for k, v in line.items() if k not in ("time", "severity")}
        whole += len(json.dumps(payload, separators=(",", ":")).encode())
        for key, value in payload.items():
            totals[key] += _width(value)
    return {k: v / len(lines) for k, v in totals.items()}, whole / len(lines)


SCHEMA_WIDTHS = {"STRING": 8, "INTEGER": 8, "FLOAT": 8, "BOOLEAN": 1}  # one line in 8


def bytes_per_line(reads: set[str], layout: str, widths: dict[str, float], whole: float) -> float:
    payload = PAYLOAD[layout]
    total = 0.0
    for column in reads:
        if column == "timestamp":
            total += 8
        elif column in ("insertid", "insert_id"):
            total += 2 + INSERT_ID_CHARS
        elif column == "log_id":
            total += 2 + len("run.googleapis.com/stdout")
        elif column == payload and layout == "analytics":
            total += whole
        elif column.startswith(f"{payload}."):
            key = column.split(".", 1)[1]
            total += widths.get(key, 8 / 8)
        # _table_suffix is a pseudo-column: not stored, not billed
    return total


# -- the table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    reads: set[str]
    minimum: set[str]
    days: int
    tib: float

    @property
    def usd(self) -> float:
        return self.tib * PRICE_PER_TIB


def cost(
    query: Query,
    rev: str | None,
    layout: str,
    widths: dict[str, float],
    whole: float,
) -> Cost | None:
    folder, dataset = query.views
    try:
        views = read_views(rev, folder.format(layout=layout))
    except subprocess.CalledProcessError:
        return None
    if query.view not in views:
        return None
    columns = {e.alias_or_name.lower() for e in views[query.view].selects}
    sql = query.sql.format(v=f"`{dataset}.{query.view}`", when=date_filter(query, columns))
    tree = expanded(sql, views, dataset, dedupe=True)
    reads = sink_reads(tree, layout)
    minimum = sink_reads(expanded(sql, views, dataset, dedupe=False), layout)
    days = query.days if pruned(tree, layout) else DAYS_KEPT
    per_line = bytes_per_line(reads, layout, widths, whole)
    return Cost(reads, minimum, days, per_line * LINES_PER_DAY * days / TIB)


def _payload_keys(columns: set[str], layout: str) -> int:
    return sum(1 for c in columns if c.startswith(f"{PAYLOAD[layout]}."))


def report(revs: dict[str, str | None]) -> str:
    widths, whole = demo_widths()
    out = [
        f"Scale: {LINES_PER_DAY:,} lines a day, {DAYS_KEPT} days kept; "
        f"${PRICE_PER_TIB}/TiB on demand. Demo payload: {whole:.0f} bytes a line as JSON.",
        "Keys: payload keys the query reads (the minimum its answer needs); days: of the "
        f"{DAYS_KEPT} kept, those it reads; GiB: one run; $/month: one run a minute.",
        "",
        "| query | layout | "
        + " | ".join(f"{name}: keys (min) · days · GiB · $/month" for name in revs)
        + " |",
        "|---|---|" + "---|" * len(revs),
    ]
    details = []
    for query in QUERIES:
        for layout in LAYOUTS:
            cells = []
            for name, rev in revs.items():
                found = cost(query, rev, layout, widths, whole)
                if found is None:
                    cells.append("n/a")
                    continue
                keys = _payload_keys(found.reads, layout)
                least = _payload_keys(found.minimum, layout)
                gib = found.tib * 1024
                month = found.usd * QUERIES_A_MONTH
                cells.append(f"{keys} ({least}) · {found.days} · {gib:,.2f} · {month:,.0f}")
                details.append(f"{name} {layout} {query.label}: {', '.join(sorted(found.reads))}")
            if all(c == "n/a" for c in cells):
                continue
            out.append(f"| {query.label} | {layout} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n\nColumns read:\n" + "\n".join(details) + "\n"


def event_view_keys(rev: str | None, folder: str, layout: str) -> dict[str, list[str]]:
    """Per event view: the payload keys ``SELECT COUNT(*) FROM view`` reads."""
    _, dataset = PACKAGE if folder.startswith("agent") else SERVICE
    views = read_views(rev, folder.format(layout=layout))
    found = {}
    for name in views:
        if name in ("telemetry_quality", "lane_health"):
            continue
        tree = expanded(f"SELECT COUNT(*) AS n FROM `{dataset}.{name}` AS v", views, dataset, True)
        found[name] = sorted(c.split(".", 1)[1] for c in sink_reads(tree, layout) if "." in c)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="c028ceb")
    parser.add_argument("--after", default=None, help="a revision (default: the work tree)")
    args = parser.parse_args(argv)
    revs = {
        f"before ({args.before})": args.before,
        f"after ({args.after or 'work tree'})": args.after,
    }
    print(report(revs))
    print("Payload keys `SELECT COUNT(*)` over each event view reads:")
    for name, rev in revs.items():
        for folder in (PACKAGE[0], SERVICE[0]):
            for layout in ("partitioned", "sharded"):
                try:
                    keys = event_view_keys(rev, folder, layout)
                except subprocess.CalledProcessError:
                    continue
                for view, read in keys.items():
                    where = folder.split("/")[0]
                    print(f"{name} {where} {layout} {view}: {len(read)} keys: {', '.join(read)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
