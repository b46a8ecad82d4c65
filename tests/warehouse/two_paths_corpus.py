"""Hostile JSON lines for the two judges of the load: DuckDB's SQL and Python's.

Every line is plain enough for DuckDB to read the file (valid UTF-8, LF only), so the
fast path takes it and decides, line by line, what it judges in SQL and what it leaves
to Python. Values are drawn from every spelling the judgement reads differently (native,
doubles, strings, overflowing integers, NaN, wrong types), and lines from every shape a
record comes in (emitter line, LogEntry, Log Analytics row, other JSON, text) and every
way a line can be odd (duplicate and unknown keys, escapes, trailing commas, nesting,
padding, a BOM, truncation, an oversized line).
"""

from __future__ import annotations

import json
import random
from typing import Any

from agent_telemetry.schema import catalogue
from agent_telemetry.schema.capacity import round_significant
from agent_telemetry.warehouse._reading.records import MAX_DEPTH
from agent_telemetry.warehouse._reading.source import MAX_RECORD

SPECS = list(catalogue())
RAW = object()  # marks a value written as raw JSON text

STRINGS: list[Any] = ["public", "zz_not_a_member", "", "é", "INFO", "a:nan", "1", 1, 1.5]
STRINGS += [True, None, {"a": 1}, ["x"], (RAW, "NaN"), (RAW, "-Infinity")]
INTS: list[Any] = [5, 0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**20, 5.0, 5.5]
INTS += [(RAW, "1e2"), (RAW, "1E400"), (RAW, "-0"), (RAW, "1.0e0"), "5", "5.0", " 5"]
INTS += ["0x10", "1_000", "-0", "1e2", True, None, {}, [], "abc", (RAW, "nan")]
BOOLS: list[Any] = [True, False, "true", "false", "t", "TRUE", 1, 0, None, [True]]
LISTS: list[Any] = [["lane"], ["lane", 1, True], "lane", [], None, [None]]
TIMES: list[Any] = [
    "2026-05-09T07:35:25.123456Z",
    "2026-02-30T07:35:25.123456Z",
    "2026-05-09T24:00:00.000000Z",
    "0000-05-09T07:35:25.123456Z",
    "2026-05-09T07:35:60.123456Z",
    "2026-05-09T07:35:25Z",
    "2026-05-09T07:35:25.1Z",
    "2026-05-09T07:35:25.123456789Z",
    "2026-05-09T09:35:25.5+02:00",
    "2026-05-09t07:35:25.123456z",
    "2026-05-09 07:35:25.123456 UTC",
    "2026-05-09 07:35:25",
    "\u0662\u0660\u0662\u0666-05-09T07:35:25.123456Z",
    "yesterday",
    5,
    None,
]
IDS: list[Any] = ["e1", "e2", "e3", 5, None, ""]


def _dump(value: Any) -> str:
    if isinstance(value, tuple) and value[0] is RAW:
        return str(value[1])
    return json.dumps(value, ensure_ascii=False)


def _object(pairs: list[tuple[str, Any]]) -> str:
    return "{" + ",".join(f"{json.dumps(k)}:{_dump(v)}" for k, v in pairs) + "}"


def _payload(rnd: random.Random) -> list[tuple[str, Any]]:
    spec = rnd.choice(SPECS)
    pairs: list[tuple[str, Any]] = [("event", spec.name), ("schema_version", 1)]
    if rnd.random() < 0.2:
        pairs[1] = ("schema_version", rnd.choice([1.0, "1", None, 2, True]))
    for field in spec.fields:
        if rnd.random() < 0.3:
            continue
        if rnd.random() < 0.85:  # a valid value, as the emitter writes it
            if field.kind == "enum":
                value: Any = rnd.choice(field.members)
            elif field.kind == "bool":
                value = rnd.random() < 0.5
            else:
                assert field.ge is not None
                value = field.ge
            pairs.append((field.name, value))
            continue
        pool = {"enum": STRINGS, "bool": BOOLS}.get(field.kind, INTS)
        pairs.append((field.name, rnd.choice(pool)))
    if rnd.random() < 0.1:
        pairs.append(("invalid_fields", rnd.choice(LISTS)))
    if rnd.random() < 0.1:
        pairs.append(("unknown_fields", rnd.choice(INTS)))
    return pairs


# Where a roll in [0, 1) lands: below EMITTER an emitter line, below ENTRY a LogEntry,
# else a Log Analytics row.
SHAPES = {"mixed": (0.5, 0.9), "emitter": (0.9, 0.9), "entries": (0.0, 1.0)}


def _telemetry(rnd: random.Random, shapes: str) -> str:
    payload = _payload(rnd)
    shape = rnd.random()
    emitter, entry = SHAPES[shapes]
    if shape < emitter:  # the emitter's line
        time = TIMES[0] if rnd.random() < 0.6 else rnd.choice(TIMES)
        pairs = [*payload[:2], ("severity", "INFO"), ("time", time), *payload[2:]]
    elif shape < entry:  # a LogEntry
        stamp = rnd.choice(TIMES[:8]) if rnd.random() < 0.7 else rnd.choice(TIMES)
        if rnd.random() < 0.3:
            payload.append(("time", rnd.choice(TIMES)))
        pairs = [
            ("insertId", rnd.choice(IDS)),
            ("jsonPayload", (RAW, _object(payload))),
            ("logName", "projects/p/logs/run.googleapis.com%2Fstdout"),
            ("resource", {"type": "cloud_run_revision", "labels": {"service_name": "a"}}),
            ("severity", "INFO"),
            ("timestamp", stamp),
        ]
    else:  # a Log Analytics row
        as_text = rnd.random() < 0.5
        inner = _object(payload)
        pairs = [
            ("timestamp", rnd.choice(TIMES)),
            ("insert_id", rnd.choice(IDS)),
            ("json_payload", inner if as_text else (RAW, inner)),
        ]
    return _odd(pairs, rnd)


def _odd(pairs: list[tuple[str, Any]], rnd: random.Random) -> str:
    """The record as one line, now and then written oddly."""
    roll = rnd.random()
    if roll < 0.05 and pairs:  # a key written twice (orjson keeps the last)
        key, _value = rnd.choice(pairs)
        pairs = [*pairs, (key, rnd.choice(STRINGS + INTS))]
    elif roll < 0.08:
        pairs = [*pairs, ("service_field", "x")]  # a key the judgement does not know
    elif roll < 0.10:
        pairs = [*pairs, ("extra", (RAW, rnd.choice(["NaN", "Infinity", "-inf", "nan"])))]
    line = _object(pairs)
    roll = rnd.random()
    if roll < 0.02:
        line = line[:-1] + ",}"  # trailing comma
    elif roll < 0.04:
        line = "  " + line + "  "
    elif roll < 0.05:
        line = "\t" + line
    elif roll < 0.06:
        line = line + "\x0c"
    elif roll < 0.07:
        line = line.replace('"event"', '"ev\\u0065nt"', 1)  # an escaped key
    elif roll < 0.08:
        line = line[: len(line) // 2]  # truncated
    elif roll < 0.09:
        line = line.replace(":", ": ", 3).replace(",", " , ", 2)  # spaced out
    return line


def _noise(rnd: random.Random) -> str:
    return rnd.choice(
        [
            "",
            "   ",
            "\x0b",
            "2026-05-09 07:00:01 INFO uvicorn running on http://0.0.0.0:8080",
            "Traceback (most recent call last):",
            "5",
            '"a string"',
            "[1, 2]",
            "[]",
            "\ufeff" + _object([("event", "chat_turn"), ("schema_version", 1)]),
            '{"event": "request finished", "level": "info"}',
            '{"event": null, "schema_version": 1}',
            '{"event": "chat_turn", "schema_version": null}',
            '{"jsonPayload": "text", "event": "chat_turn", "schema_version": 1}',
            '{"jsonPayload": {"event": "x"}, "event": "chat_turn", "schema_version": 1}',
            '{"jsonPayload": null, "event": "chat_turn", "schema_version": 1, "tier": "admin"}',
            '{"json_payload": null, "event": "chat_turn", "schema_version": 1, "kind": "text"}',
            '{"event": "chat_turn", "schema_version": 1, "tier": "\\ud800"}',
            '{"event": "chat_turn", "schema_version": 1, "tier": "a\\u0000b"}',
            '{"event": "chat_turn", "schema_version": 1, "tier": "a\x01b"}',
            '{"event": "chat_turn", "schema_version": 1, "tier": "\u2028"}',
            '{"event":"chat_turn","schema_version":1,"event":null}',
            '{"event":null,"schema_version":1,"event":"chat_turn","tier":"admin"}',
            '{"a": [1, 2,]}',
            '{"a": 1e400, "event": "chat_turn", "schema_version": 1}',
            '{"event": "chat_turn" "schema_version": 1}',
            "{",
            "{}",
            '{"event": "' + "x" * 3000 + '", "schema_version": 1}',
            '{"a":' * (MAX_DEPTH + 5) + "1" + "}" * (MAX_DEPTH + 5),
            '{"a":' * (MAX_DEPTH - 5) + "1" + "}" * (MAX_DEPTH - 5),
            "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        ]
    )


def hostile_lines(seed: int, count: int, shapes: str = "mixed", noise: float = 0.15) -> bytes:
    """``count`` lines, telemetry of ``shapes`` (a key of SHAPES) and a share ``noise``
    of other lines; one oversized line; LF only."""
    rnd = random.Random(seed)
    lines = [_noise(rnd) if rnd.random() < noise else _telemetry(rnd, shapes) for _ in range(count)]
    lines.insert(count // 2, '{"event": "' + "x" * (MAX_RECORD + 10) + '", "schema_version": 1}')
    return ("\n".join(lines) + "\n").encode("utf-8")


def duplicated_entries(seed: int, count: int) -> bytes:
    """Plain LogEntries exported twice and more: for the duplicate counts."""
    rnd = random.Random(seed)
    lines = []
    for index in range(count):
        entry = index if rnd.random() < 0.7 else rnd.randrange(max(1, index))
        pairs = [
            ("insertId", f"id{entry}"),
            ("jsonPayload", (RAW, _object([("event", "chat_turn"), ("schema_version", 1)]))),
            ("timestamp", f"2026-05-09T07:00:{entry % 60:02d}.{entry:06d}Z"),
        ]
        lines.append(_object(pairs))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _valid(spec: Any, rnd: random.Random) -> Any:
    if spec.kind == "enum":
        return rnd.choice(spec.members)
    if spec.kind == "bool":
        return rnd.random() < 0.5
    value = rnd.choice([spec.ge, spec.le, rnd.randint(spec.ge, spec.le)])
    # The emitter rounds to the field's precision: only its grid is valid.
    return value if spec.precision is None else round_significant(value, spec.precision)


def valid_lines(seed: int, count: int, *, entries: bool = True) -> bytes:
    """Lines the emitter writes, mostly valid: every member, both booleans and both
    bounds turn up; some as LogEntries with insert ids (a few exported twice), a few
    with one value out of place."""
    rnd = random.Random(seed)
    lines = []
    for number in range(count):
        spec = rnd.choice(SPECS)
        payload: dict[str, Any] = {"event": spec.name, "schema_version": 1}
        for field in spec.fields:
            if field.required or rnd.random() < 0.7:
                payload[field.name] = _valid(field, rnd)
        if spec.fields and rnd.random() < 0.05:  # one value out of its set or bounds
            field = rnd.choice(spec.fields)
            payload[field.name] = {"enum": "zzz", "bool": "true", "int": 10**12}[field.kind]
        time = f"2026-05-09T07:{number // 60 % 60:02d}:{number % 60:02d}.{number:06d}Z"
        roll = rnd.random() if entries else 0.0
        if roll < 0.6:
            lines.append(json.dumps({**payload, "severity": "INFO", "time": time}))
        else:
            entry_id = f"id-{rnd.randrange(count * 2) if roll < 0.7 else number}"
            entry = {"insertId": entry_id, "timestamp": time[:-8] + "Z", "jsonPayload": payload}
            if roll < 0.8:
                entry["resource"] = {"type": "cloud_run_revision"}
            lines.append(json.dumps(entry))
    return ("\n".join(lines) + "\n").encode()
