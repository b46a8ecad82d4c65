"""A seeded corpus of every input format the local warehouse reads, with the truth.

Each file is generated from records whose meaning the generator decides first (which
event, which fields valid or not, which JSON spelling of each value), then written in
one format: the emitter's lines (LF and CRLF, with a UTF-8 BOM), Cloud Storage sink
hourly files (one LogEntry per line, gzipped too), ``gcloud logging read --format=json``
arrays (pretty, doubles for numbers; UTF-8 BOM, UTF-16LE with BOM and CRLF as Windows
PowerShell writes it, UTF-16BE gzipped), UTF-32 lines, exports holding duplicates,
BigQuery read-backs (``bq query --format=json``: one line, every value a string;
``bq extract``: NDJSON, integers as strings), Log Analytics ``_AllLogs`` rows
(``json_payload`` as JSON text or as an object) and hostile records (too deep,
oversized, undecodable). The truth is counted while writing, never by the code under
test.
"""

from __future__ import annotations

import codecs
import gzip
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_telemetry.schema import EventSpec, FieldSpec, catalogue
from agent_telemetry.schema.capacity import round_significant
from agent_telemetry.warehouse._reading.records import MAX_DEPTH
from agent_telemetry.warehouse._reading.source import MAX_RECORD

SPECS = {spec.name: spec for spec in catalogue()}
START = datetime(2026, 5, 9, 7, 0, tzinfo=UTC)

# How a file spells values: as the emitter does, as Cloud Logging's doubles, as
# BigQuery read-backs' strings (bq query: every value; bq extract: integers only).
NATIVE, DOUBLES, MIXED, STRINGS, INT_STRINGS = "native", "doubles", "mixed", "strings", "ints"


@dataclass
class Truth:
    """What a file holds, by the generator's own account."""

    records: int = 0
    telemetry: int = 0
    text: int = 0
    other_json: int = 0
    truncated: int = 0
    oversized: int = 0
    too_deep: int = 0
    undecodable: int = 0
    duplicates: int = 0
    conflicting: int = 0  # of the duplicates, copies whose payload differs from the kept one
    lines: Counter[str] = field(default_factory=Counter)  # check-logs lines per event
    rows: Counter[str] = field(default_factory=Counter)  # view rows (schema_version 1)
    valid: Counter[tuple[str, str]] = field(default_factory=Counter)  # (event, field)
    coerced: Counter[str] = field(default_factory=Counter)  # lines per coercion


@dataclass
class Event:
    """One telemetry record's meaning: its payload as written and what it is worth."""

    name: str
    payload: dict[str, Any]
    known: bool  # an event the models define (not unknown, not telemetry_rejected)
    version_one: bool  # schema_version reads as 1: the view shows the line
    valid: list[str]  # fields holding a valid value
    coerced: set[str]  # coercions check-logs counts for the line
    when: datetime


def _int_spelling(value: int, style: str, rnd: random.Random) -> tuple[object, str | None]:
    if style == MIXED:
        style = rnd.choice([NATIVE, DOUBLES, STRINGS])
    if style == DOUBLES:
        return float(value), "integral_doubles"
    if style in (STRINGS, INT_STRINGS):
        return str(value), "numbers_as_strings"
    return value, None


def _bool_spelling(value: bool, style: str, rnd: random.Random) -> tuple[object, str | None]:
    if style == STRINGS or (style == MIXED and rnd.random() < 0.3):
        return ("true" if value else "false"), "booleans_as_strings"
    return value, None


def _field(spec: FieldSpec, style: str, rnd: random.Random) -> tuple[object, bool, str | None]:
    """(value as written, valid, coercion) for one field."""
    roll = rnd.random()
    if spec.kind == "enum":
        if roll < 0.8:
            return rnd.choice(spec.members), True, None
        if roll < 0.9 or style == STRINGS:
            return "zz_not_a_member", False, None
        return rnd.choice([5, True, ["x"]]), False, None  # a JSON type no enum reads
    if spec.kind == "bool":
        if roll < 0.85:
            value, how = _bool_spelling(rnd.random() < 0.5, style, rnd)
            return value, True, how
        return rnd.choice(["yes", 1] if style != STRINGS else ["yes", "1"]), False, None
    assert spec.ge is not None
    assert spec.le is not None
    if roll < 0.75:
        chosen = rnd.choice([spec.ge, spec.le, rnd.randint(spec.ge, spec.le)])
        if spec.precision is not None:  # the emitter rounds: only the grid is valid
            chosen = round_significant(chosen, spec.precision)
        value, how = _int_spelling(chosen, style, rnd)
        return value, True, how
    if roll < 0.87:  # out of bounds, or off the precision's grid, in any spelling
        outside = [spec.ge - 1, spec.le + 1]
        if spec.precision is not None and 10**spec.precision + 1 <= spec.le:
            outside.append(10**spec.precision + 1)  # 1001 at 3 digits: refused by precision
        value, how = _int_spelling(rnd.choice(outside), style, rnd)
        return value, False, how
    wrong: list[object] = ["1.5", "abc", "1e999"] if style == STRINGS else [1.5, "abc", True, None]
    value = rnd.choice(wrong)
    if value is None:  # null: the field is absent
        return None, False, None
    return value, False, None


def make_event(style: str, rnd: random.Random, when: datetime) -> Event:
    roll = rnd.random()
    if roll < 0.05:
        payload: dict[str, Any] = {"event": "cache_lookup", "schema_version": 1}
        return Event("cache_lookup", payload, False, False, [], set(), when)
    if roll < 0.08:
        payload = {"event": "telemetry_rejected", "schema_version": 1, "reason": "unknown_event"}
        return Event("telemetry_rejected", payload, False, False, [], set(), when)
    spec: EventSpec = rnd.choice(list(SPECS.values()))
    coerced: set[str] = set()
    version: object = 1
    if rnd.random() < 0.08:
        version = 7  # no registered version: counted by check-logs, in no view
    elif style in (STRINGS, INT_STRINGS):
        version, how = _int_spelling(1, style, rnd)
        coerced.add(how or "")
    elif style in (DOUBLES, MIXED) and rnd.random() < 0.5:
        version, how = _int_spelling(1, DOUBLES, rnd)
        coerced.add(how or "")
    payload = {"event": spec.name, "schema_version": version}
    valid: list[str] = []
    for spec_field in spec.fields:
        if not spec_field.required and rnd.random() < 0.3:
            continue
        value, ok, how = _field(spec_field, style, rnd)
        if value is None:
            continue
        payload[spec_field.name] = value
        if ok:
            valid.append(spec_field.name)
        if how is not None:
            coerced.add(how)
    coerced.discard("")
    return Event(spec.name, payload, True, version != 7, valid, coerced, when)


def count_event(truth: Truth, event: Event, *, duplicate: bool = False) -> None:
    truth.records += 1
    truth.telemetry += 1
    if duplicate:
        truth.duplicates += 1
        return
    if not event.known:
        return
    truth.lines[event.name] += 1
    truth.coerced.update(event.coerced)
    if event.version_one:
        truth.rows[event.name] += 1
        truth.valid.update((event.name, name) for name in event.valid)


# -- spellings of one record ---------------------------------------------------------------


def rfc3339(when: datetime, digits: int = 6) -> str:
    fraction = f"{when.microsecond:06d}{when.microsecond % 1000:03d}"[:digits]
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if digits else "") + "Z"


def emitter_line(event: Event) -> dict[str, Any]:
    payload = dict(event.payload)
    head = {
        "event": payload.pop("event"),
        "schema_version": payload.pop("schema_version"),
        "severity": "INFO",
        "time": rfc3339(event.when),
    }
    return {**head, **payload}


def log_entry(event: Event, entry_id: str, rnd: random.Random) -> dict[str, Any]:
    """A LogEntry as a sink's Cloud Storage file or gcloud writes it."""
    return {
        "insertId": entry_id,
        "jsonPayload": event.payload,
        "labels": {"instanceId": "00f4b2"},
        "logName": "projects/p/logs/run.googleapis.com%2Fstdout",
        "receiveTimestamp": rfc3339(event.when + timedelta(seconds=1), 9),
        "resource": {"type": "cloud_run_revision", "labels": {"service_name": "agent"}},
        "severity": "INFO",
        "timestamp": rfc3339(event.when, rnd.choice([0, 3, 6, 9])),
    }


def bq_row(event: Event, entry_id: str, *, extract: bool) -> dict[str, Any]:
    """A sink table row as ``bq query --format=json`` (or ``bq extract``) writes it."""
    payload: dict[str, Any] = {name: None for spec in SPECS.values() for name in spec.field_names}
    payload.update({"time": None, "invalid_fields": [], "unknown_fields": None})
    payload.update(event.payload)
    if extract:
        stamp = event.when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    else:
        stamp = event.when.strftime("%Y-%m-%d %H:%M:%S")  # bq prints whole seconds
    return {
        "insertId": entry_id,
        "jsonPayload": payload,
        "logName": "projects/p/logs/run.googleapis.com%2Fstdout",
        "severity": "INFO",
        "textPayload": None,
        "timestamp": stamp,
    }


def all_logs_row(event: Event, entry_id: str, *, as_text: bool) -> dict[str, Any]:
    """A Log Analytics ``_AllLogs`` row: ``json_payload`` as JSON text (bq query) or object."""
    return {
        "timestamp": event.when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"),
        "log_id": "run.googleapis.com/stdout",
        "insert_id": entry_id,
        "severity": "INFO",
        "json_payload": json.dumps(event.payload) if as_text else event.payload,
        "text_payload": None,
    }


# -- non-telemetry and hostile records -------------------------------------------------------

TEXT_LINES = ("2026-05-09 07:00:01 INFO uvicorn running on http://0.0.0.0:8080", "Traceback:")
OTHER_JSON = (
    {"event": "request finished", "level": "info", "path": "/healthz"},
    {"textPayload": "GET /healthz 200", "timestamp": "2026-05-09T07:00:00Z"},
    {"httpRequest": {"status": 200, "requestMethod": "GET"}, "timestamp": "2026-05-09T07:00:00Z"},
    {"jsonPayload": {"event": "request finished"}, "timestamp": "2026-05-09T07:00:00Z"},
)


def deep_record() -> bytes:
    """A LogEntry-shaped record nested one level deeper than MAX_DEPTH."""
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    return ('{"labels": {"x": ' + inner + "}}").encode()  # object, object, arrays


def oversized_record() -> bytes:
    """A LogEntry one byte over MAX_RECORD."""
    head = b'{"textPayload": "'
    return head + b"x" * (MAX_RECORD + 1 - len(head) - 2) + b'"}'


def lone_surrogate_entry(event: Event, entry_id: str, rnd: random.Random) -> bytes:
    """A telemetry LogEntry whose labels hold a lone surrogate escape."""
    entry = log_entry(event, entry_id, rnd)
    entry["labels"] = {"instanceId": "\\ud800"}
    return json.dumps(entry).replace("\\\\ud800", "\\ud800").encode()


# -- files ------------------------------------------------------------------------------------


@dataclass
class CorpusFile:
    name: str
    data: bytes
    truth: Truth
    duplicates: bool = False  # the views de-duplicate (SQL from branch dedupe-views)


class _Writer:
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.truth = Truth()
        self.when = START
        self.ids = 0

    def event(self, style: str) -> Event:
        self.when += timedelta(
            seconds=self.rnd.randint(1, 90), microseconds=self.rnd.randint(0, 999_999)
        )
        return make_event(style, self.rnd, self.when)

    def entry_id(self) -> str:
        self.ids += 1
        return f"{self.ids:012x}"

    def noise(self, *, lines: bool) -> bytes | None:
        """A non-telemetry record (None: a blank line), counted."""
        roll = self.rnd.random()
        truth = self.truth
        if lines and roll < 0.1:
            return None
        truth.records += 1
        if lines and roll < 0.35:
            truth.text += 1
            return self.rnd.choice(TEXT_LINES).encode()
        if lines and roll < 0.5:
            truth.truncated += 1
            return json.dumps(self.rnd.choice(OTHER_JSON)).encode()[:-7]
        truth.other_json += 1
        return json.dumps(self.rnd.choice(OTHER_JSON)).encode()


def _lines(records: list[bytes | None], newline: bytes = b"\n") -> bytes:
    return b"".join((record or b"") + newline for record in records)


def emitter_file(seed: int, *, crlf: bool = False, bom: bool = False) -> tuple[bytes, Truth]:
    w = _Writer(seed)
    records: list[bytes | None] = []
    for _ in range(60):
        if w.rnd.random() < 0.7:
            event = w.event(MIXED if not crlf else NATIVE)
            count_event(w.truth, event)
            records.append(json.dumps(emitter_line(event)).encode())
        else:
            records.append(w.noise(lines=True))
    if bom:  # the first record is telemetry: a BOM must not hide it
        event = w.event(NATIVE)
        count_event(w.truth, event)
        records.insert(0, json.dumps(emitter_line(event)).encode())
    data = _lines(records, b"\r\n" if crlf else b"\n")
    return (codecs.BOM_UTF8 + data if bom else data), w.truth


def entries(
    w: _Writer, count: int, style: str, *, lines: bool, dup: float = 0.0
) -> list[bytes | None]:
    records: list[bytes | None] = []
    written: list[bytes] = []
    for _ in range(count):
        if written and w.rnd.random() < dup:  # the same entry exported again
            records.append(w.rnd.choice(written))
            w.truth.records += 1
            w.truth.telemetry += 1
            w.truth.duplicates += 1
        elif w.rnd.random() < 0.75:
            event = w.event(style)
            count_event(w.truth, event)
            record = json.dumps(log_entry(event, w.entry_id(), w.rnd), indent=None if lines else 2)
            records.append(record.encode())
            written.append(record.encode())
        else:
            records.append(w.noise(lines=lines))
    return records


def array(records: list[bytes | None]) -> bytes:
    return b"[\n" + b",\n".join(r for r in records if r is not None) + b"\n]\n"


def readback_file(seed: int, *, extract: bool) -> tuple[bytes, Truth]:
    w = _Writer(seed)
    style = INT_STRINGS if extract else STRINGS
    rows = []
    for _ in range(50):
        if w.rnd.random() < 0.8:
            event = w.event(style)
            count_event(w.truth, event)
            rows.append(bq_row(event, w.entry_id(), extract=extract))
        else:  # a row of the sink table that is no telemetry (a service's other line)
            w.truth.records += 1
            w.truth.other_json += 1
            rows.append({"insertId": w.entry_id(), "jsonPayload": None, "textPayload": "hi"})
    if extract:
        return b"".join(json.dumps(row).encode() + b"\n" for row in rows), w.truth
    return json.dumps(rows, separators=(",", ":")).encode() + b"\n", w.truth


def all_logs_file(seed: int, *, as_text: bool) -> tuple[bytes, Truth]:
    w = _Writer(seed)
    rows = []
    for _ in range(50):
        if w.rnd.random() < 0.8:
            event = w.event(MIXED)
            count_event(w.truth, event)
            rows.append(all_logs_row(event, w.entry_id(), as_text=as_text))
        else:
            w.truth.records += 1
            w.truth.other_json += 1
            rows.append({"insert_id": w.entry_id(), "json_payload": None, "text_payload": "hi"})
    if as_text:
        return json.dumps(rows).encode(), w.truth
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows), w.truth


def hostile_lines(seed: int) -> tuple[bytes, Truth]:
    w = _Writer(seed)
    records: list[bytes | None] = []
    for number in range(40):
        if number % 10 == 3:
            w.truth.records += 1
            kind = number // 10
            if kind == 0:
                w.truth.too_deep += 1
                records.append(deep_record())
            elif kind == 1:
                w.truth.oversized += 1
                records.append(oversized_record())
            elif kind == 2:
                w.truth.undecodable += 1
                records.append(lone_surrogate_entry(w.event(NATIVE), w.entry_id(), w.rnd))
            else:
                w.truth.undecodable += 1
                records.append(b'{"event": "pipeline_run", "schema_version": 1, "lane": "\xff"}')
        elif w.rnd.random() < 0.7:
            event = w.event(DOUBLES)
            count_event(w.truth, event)
            records.append(json.dumps(log_entry(event, w.entry_id(), w.rnd)).encode())
        else:
            records.append(w.noise(lines=True))
    return _lines(records), w.truth


def hostile_array(seed: int) -> tuple[bytes, Truth]:
    w = _Writer(seed)
    records: list[bytes | None] = entries(w, 20, DOUBLES, lines=False)
    w.truth.records += 2
    w.truth.too_deep += 1
    w.truth.undecodable += 1
    records.insert(5, deep_record())
    records.insert(9, lone_surrogate_entry(w.event(NATIVE), w.entry_id(), w.rnd))
    return array(records), w.truth


def _pipeline_run(lane: str, **fields: Any) -> Event:
    payload = {"event": "pipeline_run", "schema_version": 1, "lane": lane, "status": "ok"}
    payload.update(fields)
    valid = ["lane", "status"] + (["attempts"] if fields.get("attempts") in (0, 1, 2) else [])
    return Event("pipeline_run", payload, True, True, valid, set(), START)


def conflicts_file(seed: int) -> tuple[bytes, Truth]:
    """LogEntries exported twice whose copies disagree, each case with the copy the views
    keep decided here by the rule (docs/design.md: every payload column in the sink's
    order, NULL first, ascending), never by the code under test; copies of one entry
    written with a UTC offset; and copies whose timestamp does not read, never merged."""
    w = _Writer(seed)
    records: list[bytes | None] = []

    def entry(event: Event, entry_id: str, stamp: str) -> bytes:
        record = log_entry(event, entry_id, w.rnd)
        record["timestamp"] = stamp
        return json.dumps(record).encode()

    def conflict(kept: Event, other: Event, *, kept_first: bool) -> None:
        entry_id, stamp = w.entry_id(), rfc3339(w.event(NATIVE).when)
        pair = [entry(kept, entry_id, stamp), entry(other, entry_id, stamp)]
        records.extend(pair if kept_first else pair[::-1])
        count_event(w.truth, kept)
        count_event(w.truth, other, duplicate=True)
        w.truth.conflicting += 1

    tier_is_a_name = Event(
        "chat_turn",
        {"event": "chat_turn", "schema_version": 1, "tier": "jane_doe", "kind": "text"},
        True,
        True,
        ["kind"],
        set(),
        START,
    )
    # The case: a valid pipeline_run, then a chat_turn with a name for a tier,
    # under one key. 'chat_turn' < 'pipeline_run': the chat_turn is the entry, and it is
    # invalid (first or second in the file alike).
    conflict(tier_is_a_name, _pipeline_run("public"), kept_first=False)
    conflict(tier_is_a_name, _pipeline_run("admin"), kept_first=True)
    # One event, one field apart: 'admin' < 'public'; an absent field (NULL) comes first.
    conflict(_pipeline_run("admin"), _pipeline_run("public"), kept_first=False)
    conflict(_pipeline_run("public"), _pipeline_run("public", attempts=2), kept_first=False)
    # A value the views refuse (NULL) ranks before a valid one.
    conflict(
        _pipeline_run("public", attempts="many"),
        _pipeline_run("public", attempts=1),
        kept_first=False,
    )
    # Alike copies beside them: plain duplicates, no conflict.
    same = _pipeline_run("premium")
    entry_id, stamp = w.entry_id(), rfc3339(w.event(NATIVE).when)
    records += [entry(same, entry_id, stamp), entry(same, entry_id, stamp)]
    count_event(w.truth, same)
    count_event(w.truth, same, duplicate=True)
    # One entry exported once in UTC and once with an offset: the same instant, the same
    # entry, even across midnight (2026-05-10T01:00:00.5+02:00 is 2026-05-09T23:00:00.5Z).
    for utc, offset in (
        ("2026-05-09T23:00:00.500000Z", "2026-05-10T01:00:00.5+02:00"),
        ("2026-05-09T21:15:00Z", "2026-05-09T16:15:00-05:00"),
    ):
        event = _pipeline_run("admin", attempts=0)
        entry_id = w.entry_id()
        records += [entry(event, entry_id, utc), entry(event, entry_id, offset)]
        count_event(w.truth, event)
        count_event(w.truth, event, duplicate=True)
    # Two copies whose timestamp does not read: no entry key, so never merged (both are
    # checked, and each is a row), even with one insertId and differing payloads.
    entry_id = w.entry_id()
    for event in (_pipeline_run("public"), _pipeline_run("premium")):
        records.append(entry(event, entry_id, "yesterday at noon"))
        count_event(w.truth, event)
    return _lines(records), w.truth


def corpus(seed: int = 20260509) -> list[CorpusFile]:
    """Every format, each file with its truth."""
    files: list[CorpusFile] = []

    def add(name: str, make: Callable[[], tuple[bytes, Truth]], **flags: bool) -> None:
        data, truth = make()
        files.append(CorpusFile(name, data, truth, **flags))

    def sink_hourly(s: int, dup: float = 0.0) -> tuple[bytes, Truth]:
        w = _Writer(s)
        return _lines(entries(w, 60, MIXED, lines=True, dup=dup)), w.truth

    def gcloud(s: int) -> tuple[bytes, Truth]:
        w = _Writer(s)
        return array(entries(w, 40, DOUBLES, lines=False)), w.truth

    def encoded(
        make: Callable[[], tuple[bytes, Truth]], codec: str, *, crlf: bool = False, gz: bool = False
    ) -> Callable[[], tuple[bytes, Truth]]:
        def build() -> tuple[bytes, Truth]:
            data, truth = make()
            text = data.decode("utf-8")
            if crlf:
                text = text.replace("\n", "\r\n")
            body = text.encode(codec)
            if codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
                bom = {
                    "utf-16-le": codecs.BOM_UTF16_LE,
                    "utf-16-be": codecs.BOM_UTF16_BE,
                    "utf-32-le": codecs.BOM_UTF32_LE,
                    "utf-32-be": codecs.BOM_UTF32_BE,
                }[codec]
                body = bom + body
            return (gzip.compress(body) if gz else body), truth

        return build

    add("emitter.jsonl", lambda: emitter_file(seed))
    add("emitter-crlf.jsonl", lambda: emitter_file(seed + 1, crlf=True))
    add("emitter-bom.jsonl", lambda: emitter_file(seed + 2, bom=True))
    add("sink-hourly.json", lambda: sink_hourly(seed + 3))
    add("sink-hourly.json.gz", lambda: (lambda d, t: (gzip.compress(d), t))(*sink_hourly(seed + 4)))
    add("gcloud.json", lambda: gcloud(seed + 5))
    add("gcloud-bom.json", lambda: (lambda d, t: (codecs.BOM_UTF8 + d, t))(*gcloud(seed + 6)))
    add("gcloud-powershell.json", encoded(lambda: gcloud(seed + 7), "utf-16-le", crlf=True))
    add("gcloud-utf16be.json.gz", encoded(lambda: gcloud(seed + 8), "utf-16-be", gz=True))
    add("emitter-utf32.jsonl", encoded(lambda: emitter_file(seed + 9), "utf-32-le"))
    add("sink-duplicates.json", lambda: sink_hourly(seed + 10, dup=0.25), duplicates=True)
    add("bq-query.json", lambda: readback_file(seed + 11, extract=False))
    add("bq-extract.json", lambda: readback_file(seed + 12, extract=True))
    add("alllogs-query.json", lambda: all_logs_file(seed + 13, as_text=True))
    add("alllogs-objects.jsonl", lambda: all_logs_file(seed + 14, as_text=False))
    add("hostile.jsonl", lambda: hostile_lines(seed + 15))
    add("hostile-array.json", lambda: hostile_array(seed + 16))
    add("sink-conflicts.json", lambda: conflicts_file(seed + 17))
    return files
