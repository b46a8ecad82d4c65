"""Every record of a log file, classified once: the reader ``preview`` and ``check-logs`` share.

A record is a line of a JSON-lines file or an element of a JSON array. Each is one of:
blank, plain text, truncated JSON, other JSON, telemetry (in the emitter's shape, inside
a Cloud Logging ``LogEntry`` or a BigQuery read-back of the sink table, or in a Log
Analytics ``_AllLogs`` row), or hostile: longer than ``MAX_RECORD`` (oversized), nested
deeper than ``MAX_DEPTH`` (too deep), or not valid Unicode (undecodable: invalid UTF-8,
or a lone surrogate escape such as ``\\ud800`` anywhere in it). Hostile records are
counted, never parsed into memory or recursed into.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from agent_telemetry._parse import MAX_NESTING
from agent_telemetry.warehouse._reading.source import MAX_RECORD, LogInput
from agent_telemetry.warehouse._reading.structure import ArraySplitter, Broken, nesting

# The package's one nesting limit (``_parse``), far below orjson's own (1,024 levels): a
# value orjson returns is walked again afterwards (the copies' spool pickles it), and
# Python's recursion limit is 1,000 frames. orjson, the array reader and the fallback
# parser apply it alike, so a record is too deep the same way everywhere.
MAX_DEPTH = MAX_NESTING
# A record with no more brackets than this cannot nest past MAX_DEPTH: only one with
# more is measured (two counts in C per record, no Python loop).
_DEEP_BRACKETS = MAX_DEPTH
_BOM = codecs.BOM_UTF8
_JSON_START = (b"{", b"[")


class Shape(StrEnum):
    """Where a telemetry record keeps its payload, time and insert id."""

    EMITTER = "emitter"  # the emitter's own line: payload keys at the top, `time`
    ENTRY = "entry"  # a LogEntry, or a sink table row read back: `jsonPayload`, `timestamp`
    ANALYTICS = "analytics"  # a Log Analytics _AllLogs row: `json_payload`, `insert_id`


class Kind(StrEnum):
    """What one line or array element is."""

    BLANK = "blank"
    TEXT = "text"  # not JSON at all: a service's plain log line
    MALFORMED = "malformed"  # starts like JSON but does not parse: truncated
    OTHER_JSON = "other_json"  # JSON, but not a telemetry record
    TELEMETRY = "telemetry"
    OVERSIZED = "oversized"  # longer than MAX_RECORD bytes
    TOO_DEEP = "too_deep"  # nested deeper than MAX_DEPTH
    UNDECODABLE = "undecodable"  # invalid UTF-8, or a lone surrogate escape


HOSTILE = (Kind.OVERSIZED, Kind.TOO_DEEP, Kind.UNDECODABLE)


@dataclass(slots=True)  # not frozen: built once per record, and frozen costs per field
class Telemetry:
    """A telemetry record's parts, as written (the judgement reads them: ``_judging.python``)."""

    shape: Shape
    payload: dict[str, Any]  # the emitter's keys: event, schema_version, fields, ...
    time: object  # the line's `time`, or the entry's / row's `timestamp`
    insert_id: object  # the entry's `insertId` / row's `insert_id`; None for emitter lines


@dataclass(slots=True)
class Record:
    """One line or array element."""

    kind: Kind
    telemetry: Telemetry | None
    position: int  # 1-based line number, or element number in an array
    cut: bool = False  # the MALFORMED tail of a gzip stream that broke off (cut or corrupt)
    count: int = 1  # a run of plain-text lines is one record of kind TEXT (many lines)


def _is_envelope(record: dict[str, Any]) -> bool:
    return record.get("event") is not None and record.get("schema_version") is not None


def telemetry_of(value: object) -> tuple[Kind, Telemetry | None]:
    """Whether a decoded record is telemetry, and its parts.

    Telemetry means the emitter's envelope: a non-null ``event`` and ``schema_version``,
    inside a LogEntry's ``jsonPayload``, an ``_AllLogs`` row's ``json_payload`` (an
    object, or JSON text holding one), or at the top of the line. A service's own
    structlog lines have an ``event`` too, but no ``schema_version``.
    """
    if type(value) is not dict:
        return Kind.OTHER_JSON, None
    assert isinstance(value, dict)
    get = value.get
    payload = get("jsonPayload")
    if payload is not None:
        if type(payload) is dict and _is_envelope(payload):
            return Kind.TELEMETRY, Telemetry(
                Shape.ENTRY, payload, get("timestamp"), get("insertId")
            )
    else:
        payload = get("json_payload")
        if type(payload) is str:
            kind, payload = classify(payload.encode("utf-8"))
            if kind in HOSTILE:
                return kind, None
        if type(payload) is dict and _is_envelope(payload):
            return Kind.TELEMETRY, Telemetry(
                Shape.ANALYTICS, payload, get("timestamp"), get("insert_id")
            )
    if get("event") is not None and get("schema_version") is not None:
        return Kind.TELEMETRY, Telemetry(Shape.EMITTER, value, get("time"), None)
    return Kind.OTHER_JSON, None


def classify(raw: bytes, *, element: bool = False) -> tuple[Kind, Any]:
    """Kind of one record (without its newline) and its decoded value when it is JSON
    (kind OTHER_JSON here: ``telemetry_of`` tells telemetry from the rest). A line is
    plain text unless it starts like an object or array; an array ``element`` is JSON
    of any kind."""
    text = raw.strip()
    if not text:
        return Kind.BLANK, None
    if text[:1] not in _JSON_START and not element:
        if not text.startswith(_BOM):  # a BOM inside the file: files concatenated
            return Kind.TEXT, None
        return classify(text[len(_BOM) :])
    if len(text) > MAX_RECORD:
        return Kind.OVERSIZED, None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _refused(text)
    if _too_deep(text):
        return Kind.TOO_DEEP, None
    return Kind.OTHER_JSON, value


def _too_deep(text: bytes) -> bool:
    """Whether a record orjson parsed nests deeper than MAX_DEPTH (below its own limit)."""
    if text.count(b"[") + text.count(b"{") <= _DEEP_BRACKETS:
        return False
    return nesting(text, MAX_DEPTH)[0] > MAX_DEPTH


def _refused(text: bytes) -> tuple[Kind, Any]:
    """What orjson refused: invalid Unicode, too deep, truncated, or valid JSON it
    cannot represent (1e400 overflows a double), which the standard parser reads."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return Kind.UNDECODABLE, None
    if nesting(text, MAX_DEPTH)[0] > MAX_DEPTH:
        return Kind.TOO_DEEP, None
    try:
        value = json.loads(decoded, parse_constant=_not_json)
    except RecursionError:  # within MAX_DEPTH, but deeper than Python's stack allows
        return Kind.TOO_DEEP, None
    except ValueError:
        return Kind.MALFORMED, None
    if _has_lone_surrogate(value):
        return Kind.UNDECODABLE, None
    return Kind.OTHER_JSON, value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Python's extension


def _has_lone_surrogate(value: object) -> bool:
    """Whether a string (or key) anywhere in ``value`` holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _record(raw: bytes, position: int, *, element: bool = False) -> Record:
    if raw[:1] == b"{":  # the common case, parsed without the checks classify makes first
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            if _too_deep(raw):
                return Record(Kind.TOO_DEEP, None, position)
            return Record(*telemetry_of(value), position)
    kind, value = classify(raw, element=element)
    if kind is not Kind.OTHER_JSON:
        return Record(kind, None, position)
    return Record(*telemetry_of(value), position)


def iter_records(log: LogInput) -> Iterator[Record]:
    """Every record of a file, streamed, whichever its layout; read once."""
    if log.layout == "array":
        return _elements(log)
    return _lines(log)


# A byte that can start a JSON record: an object or array opens, or a BOM (files
# concatenated) or another character from U+F000 up begins. Only lines whose first
# non-blank byte is one go to Python one by one; blank and plain-text lines between
# them are counted in C.
_OPENER = re.compile(rb"[\[{\xef]")
_NOT_BLANK = re.compile(rb"^[ \t\r\x0b\x0c]*[^ \t\r\n\x0b\x0c][^\n]*", re.M)
_WHITESPACE = b" \t\r\n\x0b\x0c"


def _plain(gap: bytes, number: int) -> Iterator[Record]:
    """The lines of ``gap`` (whole lines, none of them JSON): one TEXT record for the
    non-blank ones, and one OVERSIZED record per line longer than MAX_RECORD."""
    if not gap.translate(None, _WHITESPACE):
        return  # blank lines only
    if len(gap) <= MAX_RECORD:
        text = len(_NOT_BLANK.findall(gap))
        oversized = 0
    else:
        lengths = [len(line) for line in _NOT_BLANK.findall(gap)]
        oversized = sum(length > MAX_RECORD for length in lengths)
        text = len(lengths) - oversized
    if text:
        yield Record(Kind.TEXT, None, number + 1, count=text)
    for _ in range(oversized):
        yield Record(Kind.OVERSIZED, None, number + 1)


def _whole_lines(data: bytes, number: int) -> Iterator[Record]:
    """The records of ``data``, whole lines joined by newlines (the last one without
    its newline); ``number`` is the line number before the first."""
    size = len(data)
    gap_start = scan = 0  # both always at the start of a line
    while (found := _OPENER.search(data, scan)) is not None:
        hit = found.start()
        start = data.rfind(b"\n", gap_start, hit) + 1 or gap_start
        end = data.find(b"\n", hit)
        end = size if end < 0 else end
        if start == hit or data[start:hit].isspace():  # the line's first non-blank byte
            if start > gap_start:
                gap = data[gap_start:start]
                yield from _plain(gap, number)
                number += gap.count(b"\n")
            number += 1
            if end - start > MAX_RECORD:
                yield Record(Kind.OVERSIZED, None, number)
            else:
                yield _record(data[start:end], number)
            gap_start = end + 1
        scan = end + 1
    if gap_start < size:
        yield from _plain(data[gap_start:] + b"\n", number)


def _lines(log: LogInput) -> Iterator[Record]:
    """The lines of a JSON-lines file; a line longer than MAX_RECORD is skipped through,
    never held. A gzip stream that broke off ends with one truncated record; a file
    stopped at a limit ends where it stopped (its last, partial line is not read)."""
    number = 0
    pending: list[bytes] = []
    pending_size = 0
    for chunk in log.chunks:
        first = chunk.find(b"\n")
        if first < 0:
            pending_size += len(chunk)
            if pending_size <= MAX_RECORD:
                pending.append(chunk)
            else:
                pending.clear()
            continue
        last = chunk.rfind(b"\n")
        piece = chunk[:first]
        # The line the previous chunks began, ended by this chunk's first newline.
        number += 1
        size = pending_size + len(piece)
        if size > MAX_RECORD:
            yield Record(Kind.OVERSIZED, None, number)
        else:
            whole = b"".join(pending) + piece if pending_size else piece
            record = _record(whole, number)
            if record.kind is not Kind.BLANK:
                yield record
        pending.clear()
        pending_size = 0
        if last > first:
            middle = chunk[first + 1 : last]
            yield from _whole_lines(middle, number)
            number += middle.count(b"\n") + 1
        tail = chunk[last + 1 :]
        if tail:
            pending_size = len(tail)
            if pending_size <= MAX_RECORD:
                pending.append(tail)
    if log.stopped is not None:
        return
    if log.cut:  # whatever followed the last newline is the broken-off part
        yield Record(Kind.MALFORMED, None, number + 1, cut=True)
    elif pending_size > MAX_RECORD:
        yield Record(Kind.OVERSIZED, None, number + 1)
    elif pending_size:
        yield _record(b"".join(pending), number + 1)


def _elements(log: LogInput) -> Iterator[Record]:
    """The elements of a file holding JSON arrays, streamed.

    A file cut off mid-element (an interrupted export, or a gzip stream that breaks off)
    yields one MALFORMED record for the tail instead of failing, as does an array that
    never closes or anything after the last array that is not another one.
    """
    splitter = ArraySplitter(MAX_RECORD)
    number = 0

    def chunks() -> Iterator[Any]:
        for chunk in log.chunks:
            yield from splitter.feed(chunk)
        yield from splitter.finish()

    for piece in chunks():
        if log.stopped is not None:
            return  # what the limit left open is not an element
        number += 1
        if isinstance(piece, Broken):
            yield Record(Kind.MALFORMED, None, number, cut=log.cut)
            return
        if piece.data is None:
            yield Record(Kind.OVERSIZED, None, number)
        elif piece.depth > MAX_DEPTH:
            yield Record(Kind.TOO_DEEP, None, number)
        else:
            yield _record(piece.data, number, element=True)
    if log.cut:  # the stream broke off between two arrays
        yield Record(Kind.MALFORMED, None, number + 1, cut=True)
