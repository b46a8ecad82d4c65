"""Why the local load cannot reach 0.7x of DuckDB's own materialisation, measured.

    .venv/bin/python bench/warehouse_floor.py [--lines N]

The warehouse promises one judgement of every value (``warehouse/_judging/python.py``): ``preview``
shows a value exactly when ``check-logs`` calls it valid. This prints, on one generated
file (``bench/warehouse.py``'s lines) in one process:

1. the baseline, ``CREATE TABLE AS read_json_auto(file)``;
2. DuckDB's typed reader given the sink's own column types: as cheap as the baseline,
   but it converts values the judgement refuses (shown live, last table);
3. the judgement done exactly in SQL: every value read as a JSON fragment, then judged
   by SQL expressions, plus one regex scan for what DuckDB's JSON parser accepts and
   the judgement refuses (NaN, Infinity, trailing commas). The scan only flags
   candidates, so this is a lower bound;
4. ours (``Warehouse.load``: orjson and ``SinkPayload`` in Python, then DuckDB);
5. the Python floor of any loader that judges in Python: split, ``orjson.loads``, one
   dict comprehension over the values, ``orjson.dumps`` to hand rows to DuckDB, per line.

Each figure is wall and process CPU, best of ``--rounds`` (interleaved).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
from warehouse import Times, clock, materialised, ours, since, write_lines

from agent_telemetry.warehouse import Warehouse
from agent_telemetry.warehouse._judging.python import (
    _NUMBER,
    INVALID,
    PAYLOAD_KINDS,
    READERS,
    read_timestamp,
)

DUCKDB_TYPE = {"int": "BIGINT", "string": "VARCHAR", "bool": "BOOLEAN", "strings": "VARCHAR[]"}
SINK_COLUMNS = {
    key: "TIMESTAMPTZ" if key == "time" else DUCKDB_TYPE[kind]
    for key, kind in PAYLOAD_KINDS.items()
}
# Values a careless producer or a read-back writes, per kind: the judgement's cases.
PROBES = {
    "int": ["5", "5.0", "5.5", '"5"', '" 5"', '"0x10"', "true", "4.999999999999999999", '"1_000"'],
    "string": ['"public"', "1", "true", "5.0"],
    "bool": ["true", '"true"', '"t"', '"yes"', "1", '"TRUE"'],
    "strings": ['["lane"]', '["lane", 1, true]'],
    "timestamp": ['"2026-05-09T07:35:25.5Z"', '"2026-05-09T24:00:00Z"', '"2026-02-30T00:00:00Z"'],
}


def _timed(action: Callable[[], object]) -> Times:
    started = clock()
    action()
    return since(started)


def _struct(columns: dict[str, str]) -> str:
    return "{" + ", ".join(f"'{key}': '{kind}'" for key, kind in columns.items()) + "}"


def typed_read(path: Path) -> Times:
    """DuckDB's reader converts each value to the sink column's type itself."""
    with duckdb.connect() as con:
        return _timed(
            lambda: con.execute(
                "CREATE TABLE typed AS SELECT * FROM read_json(?, format='newline_delimited', "
                f"columns={_struct(SINK_COLUMNS)})",
                [str(path)],
            )
        )


def _integral(text: str) -> str:
    """SQL: the integer a JSON number's text holds, NULL when it is not integral."""
    double = f"TRY_CAST({text} AS DOUBLE)"
    return (
        f"(CASE WHEN regexp_full_match({text}, '-?[0-9]+') THEN TRY_CAST({text} AS BIGINT) "
        f"WHEN regexp_full_match({text}, '{_NUMBER.pattern}') AND isfinite({double}) "
        f"AND {double} = trunc({double}) THEN TRY_CAST({double} AS BIGINT) END)"
    )


def _judge_sql(key: str, kind: str) -> str:
    """SQL for ``READERS[kind]`` over a value read as a JSON fragment."""
    fragment = f'CAST("{key}" AS VARCHAR)'
    quoted = f"{fragment}[1] = '\"'"
    if kind == "int":
        inner = f"json_extract_string({fragment}, '$')"
        return f"(CASE WHEN {quoted} THEN {_integral(inner)} ELSE {_integral(fragment)} END)"
    if kind == "string":
        return f"(CASE WHEN {quoted} THEN json_extract_string({fragment}, '$') END)"
    if kind == "bool":
        return (
            f"(CASE {fragment} WHEN 'true' THEN true WHEN 'false' THEN false "
            "WHEN '\"true\"' THEN true WHEN '\"false\"' THEN false END)"
        )
    return (
        f"(CASE WHEN {fragment}[1] = '[' THEN list_transform(list_filter("
        f"json_extract({fragment}, '$[*]'), lambda x: x[1] = '\"'), "
        "lambda x: json_extract_string(x, '$')) END)"
    )


def judged_in_sql(path: Path) -> Times:
    fragments = dict.fromkeys(PAYLOAD_KINDS, "JSON")
    payload = ", ".join(
        f'"{key}" := {_judge_sql(key, kind)}'
        for key, kind in PAYLOAD_KINDS.items()
        if key != "time"
    )
    scan = (
        r"SELECT count(*) FILTER (regexp_matches(line, '(?i)[:,\[]\s*[-+]?(nan|inf)|,\s*[}\]]')) "
        "FROM read_csv(?, columns={'line': 'VARCHAR'}, header=false, auto_detect=false, "
        "delim='\\x01', quote='', escape='', new_line='\\n')"
    )
    with duckdb.connect() as con:
        started = clock()
        con.execute(
            "CREATE TEMP TABLE fragments AS SELECT * FROM read_json(?, "
            f"format='newline_delimited', columns={_struct(fragments)})",
            [str(path)],
        )
        con.execute(
            f"CREATE TABLE judged AS SELECT struct_pack({payload}) AS jsonPayload, "
            "CAST(json_extract_string(time, '$') AS TIMESTAMPTZ) AS timestamp FROM fragments"
        )
        con.execute(scan, [str(path)]).fetchall()
        return since(started)


def python_floor(path: Path, lines: int) -> dict[str, float]:
    """CPU microseconds per line of each step a Python judge cannot skip."""
    with path.open("rb") as source:
        data = b"".join(source.readline() for _ in range(lines))
    natives = {"int": int, "string": str, "bool": bool, "strings": list}
    plan = {key: natives[kind] for key, kind in PAYLOAD_KINDS.items()}
    steps: dict[str, float] = {}

    def step(name: str, action: Callable[[], Any]) -> Any:
        started = time.process_time()
        result = action()
        steps[name] = (time.process_time() - started) / lines * 1e6
        return result

    split = step("split lines", lambda: data.splitlines())
    records = step("orjson.loads", lambda: [orjson.loads(line) for line in split])
    rows = step(
        "keep values of their type",
        lambda: [{k: v for k, v in r.items() if type(v) is plan.get(k)} for r in records],
    )
    step("orjson.dumps (rows to DuckDB)", lambda: [orjson.dumps(row) for row in rows])
    return steps


def _duckdb_reads(con: duckdb.DuckDBPyConnection, column_type: str, text: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as probe:
        probe.write(f'{{"x": {text}}}\n')
    try:
        (value,) = con.execute(
            "SELECT x FROM read_json(?, format='newline_delimited', "
            f"columns={{'x': '{column_type}'}})",
            [probe.name],
        ).fetchone() or (None,)
    except duckdb.Error:
        return "error (line refused)"
    finally:
        Path(probe.name).unlink()
    if isinstance(value, datetime):  # in the judgement's own form, to compare instants
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return "NULL" if value is None else repr(value)


def _we_read(kind: str, text: str) -> str:
    value = orjson.loads(text)
    if kind == "timestamp":
        read = read_timestamp(value)
        return "NULL" if read is None else read
    reading = READERS[kind](value)[0]
    return "NULL" if reading is INVALID else repr(reading)


def conversions() -> None:
    """Where DuckDB's typed reader and the judgement part: live, on this DuckDB."""
    print(f"\nDuckDB {duckdb.__version__} typed read_json vs the judgement (differences only):")
    print(f"  {'kind':<10} {'JSON value':<24} {'DuckDB reads':<28} we read")
    types = {**DUCKDB_TYPE, "timestamp": "TIMESTAMPTZ"}
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        for kind, texts in PROBES.items():
            for text in texts:
                theirs, mine = _duckdb_reads(con, types[kind], text), _we_read(kind, text)
                if theirs != mine:
                    print(f"  {kind:<10} {text:<24} {theirs:<28} {mine}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--floor-lines", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-telemetry-bench-") as tmp:
        path = Path(tmp) / "telemetry.jsonl"
        write_lines(path, args.lines)
        with Warehouse() as warm:  # generating the views' SQL is cached per process
            warm.views()
        runs: dict[str, list[Times]] = {}
        for _ in range(args.rounds):
            runs.setdefault("CREATE TABLE AS read_json_auto", []).append(materialised(path)[0])
            runs.setdefault("typed read_json, sink types", []).append(typed_read(path))
            runs.setdefault("exact judgement in SQL (lower bound)", []).append(judged_in_sql(path))
            runs.setdefault("ours: Warehouse.load", []).append(ours(path).load)
        best = {name: (min(t[0] for t in ts), min(t[1] for t in ts)) for name, ts in runs.items()}
        base = best["CREATE TABLE AS read_json_auto"]
        print(f"{args.lines:,} lines, best of {args.rounds}; ratio against the baseline")
        for name, (wall, cpu) in best.items():
            print(
                f"  {name:<38} wall {wall:6.3f} s ({wall / base[0]:4.2f}x)"
                f"  cpu {cpu:6.3f} s ({cpu / base[1]:4.2f}x)"
            )
        ours_load = best["ours: Warehouse.load"][1] / args.lines * 1e6
        floor = python_floor(path, args.floor_lines)
        print(f"\nPython floor, CPU per line over {args.floor_lines:,} lines:")
        for name, micros in floor.items():
            print(f"  {name:<30} {micros:5.2f} us")
        print(f"  {'sum':<30} {sum(floor.values()):5.2f} us  (ours: {ours_load:.2f} us)")
        print(f"  the baseline's whole load:     {base[1] / args.lines * 1e6:5.2f} us")
    conversions()


if __name__ == "__main__":
    main()
