"""Local warehouse against DuckDB's own read_json, on 1,000,000 emitted lines.

    .venv/bin/python bench/warehouse.py [--lines N] [--rounds N] [--keep]

Ours: load the file into the sink-shaped table (``Warehouse.load``), then run an
aggregate over the generated ``pipeline_run`` view. Theirs: the same aggregate straight
over ``read_json`` of the same file (auto-detected columns, no sink table, no view).
Both produce the same rows (checked). Rounds alternate so both share the machine's
noise; the figure is the best round of each, and their ratio. Creating the views
(transpiling the generated SQL) costs the same for any file size and is shown apart.

The file is written in the emitter's line format with orjson (values drawn from the
models' own sets and bounds, a fixed seed), which is far faster than emitting a
million validated lines and gives the same bytes per line.
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

from agent_telemetry.schema import EVENTS, FieldSpec, event_spec
from agent_telemetry.views.warehouse import Warehouse

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


def ours(path: Path) -> tuple[float, float, float, list[tuple[Any, ...]]]:
    with Warehouse() as wh:
        started = time.perf_counter()
        wh.load([path])
        loaded = time.perf_counter()
        wh.create_views()
        viewed = time.perf_counter()
        rows = wh.rows(OURS)
        done = time.perf_counter()
    return loaded - started, viewed - loaded, done - viewed, rows


def theirs(path: Path) -> tuple[float, list[tuple[Any, ...]]]:
    with duckdb.connect() as con:
        started = time.perf_counter()
        rows = con.execute(THEIRS, [str(path)]).fetchall()
        return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated file")
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
    best_load = best_query = best_theirs = best_views = float("inf")
    for round_number in range(1, args.rounds + 1):
        their_s, their_rows = theirs(path)
        load_s, views_s, query_s, our_rows = ours(path)
        if our_rows != their_rows:
            raise SystemExit("the view's aggregate differs from read_json's")
        best_load, best_views = min(best_load, load_s), min(best_views, views_s)
        best_query, best_theirs = min(best_query, query_s), min(best_theirs, their_s)
        print(
            f"round {round_number}: ours load {load_s:.3f} s + query {query_s:.3f} s "
            f"(views {views_s:.3f} s) | read_json {their_s:.3f} s"
        )
    ours_s = best_load + best_query
    print(f"\nbest of {args.rounds}, {args.lines:,} lines ({size / 1e6:,.0f} MB):")
    print(
        f"  ours: load {best_load:.3f} s + pipeline_run query {best_query:.3f} s = {ours_s:.3f} s"
    )
    print(f"  read_json + same aggregate: {best_theirs:.3f} s")
    print(f"  ratio ours / read_json: {ours_s / best_theirs:.2f}x (target <= 1.5x)")
    print(f"  creating the 5 views (transpile, size-independent): {best_views:.3f} s")
    if args.keep:
        print(f"kept {path}")
    else:
        path.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
