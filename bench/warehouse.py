"""Local warehouse against DuckDB's own read_json, on 1,000,000 emitted lines.

    .venv/bin/python bench/warehouse.py [--lines N] [--rounds N] [--keep]

Ours: load the file into the sink-shaped table (``Warehouse.load``, materialised: what
``preview`` does, with or without ``--db``, before it runs its seventy-odd queries),
then run an aggregate over the generated ``pipeline_run`` view. Theirs: the same aggregate straight
over ``read_json`` of the same file (auto-detected columns, no sink table, no view).
Both produce the same rows (checked). Rounds alternate so both share the machine's
noise; the figure is the best round of each, and their ratio, in wall time and in
process CPU time (DuckDB's threads included; steadier on a shared machine). Creating
the views (transpiling the generated SQL) costs the same for any file size and is
shown apart.

The file is written in the emitter's line format with orjson (values drawn from the
models' own sets and bounds, a fixed seed), which is far faster than emitting a
million validated lines and gives the same bytes per line.

``--dedupe-cost``: what keeping one row per log entry costs, in this process, on one
loaded table: the same aggregate over ``pipeline_run`` generated with dedupe on and off
(``[source] dedupe``), rounds alternating, with the insert id NULL (emitter lines, as
loaded today) and filled with a distinct id per row (a sink's export: every row goes
through the window).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.schema import EVENTS, FieldSpec, event_spec
from agent_telemetry.warehouse import Warehouse, duckdb_query, local_views

# The mix of a busy day: mostly runs and renders, some chat, a few provider changes.
MIX = {"pipeline_run": 40, "pipeline_render": 35, "chat_turn": 23, "provider_status": 2}
POOL = 4096

QUERY = """
SELECT lane, status, count(*) AS runs,
       quantile_disc(queue_wait_ms, 0.5) AS p50_wait,
       quantile_disc(queue_wait_ms, 0.95) AS p95_wait,
       sum(duration_ms) AS total_ms
FROM {source}
GROUP BY ALL
ORDER BY ALL
"""
OURS = QUERY.format(source="pipeline_run")
THEIRS = QUERY.format(
    source="(SELECT * FROM read_json(?) WHERE event = 'pipeline_run' AND schema_version = 1)"
)


def _value(spec: FieldSpec, rnd: random.Random) -> Any:
    if spec.kind == "enum":
        return rnd.choice(spec.members)
    if spec.kind == "bool":
        return rnd.random() < 0.9
    assert spec.ge is not None
    assert spec.le is not None
    return min(spec.le, spec.ge + int(rnd.expovariate(1 / max(1, (spec.le - spec.ge) // 50))))


def _body(name: str, rnd: random.Random) -> bytes:
    """The fields part of one line: required fields always, optional ones mostly."""
    fields = {
        spec.name: _value(spec, rnd)
        for spec in event_spec(EVENTS[name]).fields
        if spec.required or rnd.random() < 0.7
    }
    return orjson.dumps(fields)[1:-1]


def write_lines(path: Path, count: int, seed: int = 5) -> None:
    rnd = random.Random(seed)
    pools = {name: [_body(name, rnd) for _ in range(POOL)] for name in MIX}
    heads = {
        name: b'{"event":"%s","schema_version":1,"severity":"INFO","time":"' % name.encode()
        for name in MIX
    }
    names = rnd.choices(list(MIX), weights=list(MIX.values()), k=count)
    start = datetime(2026, 5, 9, tzinfo=UTC)
    with path.open("wb") as out:
        chunk: list[bytes] = []
        for index, name in enumerate(names):
            when = start + timedelta(microseconds=index * 86_400)
            stamp = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ").encode()
            chunk.append(heads[name] + stamp + b'",' + pools[name][index % POOL] + b"}\n")
            if len(chunk) == 65_536:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk))


Times = tuple[float, float]  # (wall, cpu) seconds


def _clock() -> Times:
    return time.perf_counter(), time.process_time()


def _since(start: Times) -> Times:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def ours(path: Path) -> tuple[Times, Times, Times, list[tuple[Any, ...]]]:
    with Warehouse() as wh:
        started = _clock()
        wh.load([path])
        load = _since(started)
        started = _clock()
        wh.create_views()
        views = _since(started)
        started = _clock()
        rows = wh.rows(OURS)
        query = _since(started)
    return load, views, query, rows


def theirs(path: Path) -> tuple[Times, list[tuple[Any, ...]]]:
    with duckdb.connect() as con:
        started = _clock()
        rows = con.execute(THEIRS, [str(path)]).fetchall()
        return _since(started), rows


def _best(runs: list[Times]) -> Times:
    return min(r[0] for r in runs), min(r[1] for r in runs)


def _pipeline_run(wh: Warehouse, config: DeploymentConfig, name: str) -> None:
    """``pipeline_run`` as ``config`` generates it, created on ``wh``'s sink as ``name``."""
    view = next(v for v in local_views(config) if v.name == "pipeline_run")
    source = config.source
    sql = duckdb_query(
        view,
        (source.project, source.dataset, source.table_for("partitioned")),
        sink_table=wh.table,
        payload_column="jsonPayload",
        payload_fields=wh.sink.payload,
    )
    wh.rows(f"CREATE OR REPLACE VIEW {name} AS {sql}")


def dedupe_cost(path: Path, rounds: int) -> None:
    with Warehouse() as wh:
        on, off = (
            wh.config.model_copy(
                update={"source": wh.config.source.model_copy(update={"dedupe": dedupe})}
            )
            for dedupe in (True, False)
        )
        wh.load([path])
        _pipeline_run(wh, on, "with_dedupe")
        _pipeline_run(wh, off, "without_dedupe")
        queries = {name: QUERY.format(source=name) for name in ("with_dedupe", "without_dedupe")}
        (lines,) = wh.one(f'SELECT count(*) FROM "{wh.table}"')
        print(f"\ndedupe cost, {lines:,} lines, the pipeline_run aggregate, best of {rounds}:")
        for case in ("insert id NULL (emitter lines)", "insert id distinct per row (export)"):
            if "distinct" in case:
                wh.rows(
                    f'UPDATE "{wh.table}" SET insertId = substr(md5(CAST(rowid AS VARCHAR)), 1, 16)'
                )
            runs: dict[str, list[Times]] = {name: [] for name in queries}
            results = {}
            for _ in range(rounds):
                for name, query in queries.items():
                    started = _clock()
                    results[name] = wh.rows(query)
                    runs[name].append(_since(started))
            if results["with_dedupe"] != results["without_dedupe"]:
                raise SystemExit("dedupe changed the aggregate of a file without duplicates")
            with_, without = _best(runs["with_dedupe"]), _best(runs["without_dedupe"])
            print(
                f"  {case}: with {with_[0]:.3f} s / without {without[0]:.3f} s wall"
                f" = {with_[0] / without[0]:.2f}x; cpu {with_[1] / without[1]:.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated file")
    parser.add_argument(
        "--dedupe-cost",
        action="store_true",
        help="only time the pipeline_run aggregate with dedupe on against off",
    )
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agent-telemetry-bench-"))
    path = tmp / "telemetry.jsonl"
    started = time.perf_counter()
    write_lines(path, args.lines)
    size = path.stat().st_size
    print(
        f"wrote {args.lines:,} lines, {size / 1e6:,.0f} MB in {time.perf_counter() - started:.1f} s"
    )

    with Warehouse() as warm:  # generating the views' SQL is cached per process
        warm.views()
    if args.dedupe_cost:
        dedupe_cost(path, args.rounds)
        _clean(path, tmp, args.keep)
        return
    loads: list[Times] = []
    queries: list[Times] = []
    views: list[Times] = []
    totals: list[Times] = []
    baselines: list[Times] = []
    for round_number in range(1, args.rounds + 1):
        their, their_rows = theirs(path)
        load, view, query, our_rows = ours(path)
        if our_rows != their_rows:
            raise SystemExit("the view's aggregate differs from read_json's")
        loads.append(load)
        queries.append(query)
        views.append(view)
        totals.append((load[0] + query[0], load[1] + query[1]))
        baselines.append(their)
        print(
            f"round {round_number}: ours load {load[0]:.3f} s + query {query[0]:.3f} s "
            f"(views {view[0]:.3f} s) | read_json {their[0]:.3f} s"
        )
    load, query, total, base = _best(loads), _best(queries), _best(totals), _best(baselines)
    print(
        f"\nbest of {args.rounds}, {args.lines:,} lines ({size / 1e6:,.0f} MB), "
        "ours = Warehouse.load into the sink table (materialised, as preview) + view query:"
    )
    for label, index in (("wall", 0), ("cpu", 1)):
        print(
            f"  {label}: ours load {load[index]:.3f} s + pipeline_run query {query[index]:.3f} s"
            f" = {total[index]:.3f} s | read_json + same aggregate {base[index]:.3f} s"
            f" | ratio {total[index] / base[index]:.2f}x (target <= 1.5x)"
        )
    print(f"  creating the 5 views (transpile, size-independent): {_best(views)[0]:.3f} s wall")
    _clean(path, tmp, args.keep)


def _clean(path: Path, tmp: Path, keep: bool) -> None:
    if keep:
        print(f"kept {path}")
    else:
        path.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
