"""Reading log files in Python, one record at a time, without holding a file in memory.

Two jobs: sniff a file (JSON lines or one JSON array, gzip or not, which record shape
comes first) and classify records exactly (telemetry in the emitter's shape, telemetry
inside a Cloud Logging ``LogEntry``, other JSON, plain text, malformed). DuckDB does
the bulk loading; this is the exact, slower path for the lines it could not take.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import shutil
import zlib
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import orjson

CHUNK = 1 << 20
SNIFF_BYTES = 1 << 20
MAX_ELEMENT = 16 << 20  # like DuckDB's maximum_object_size: beyond it, the tail is malformed
GZIP_MAGIC = b"\x1f\x8b"
# What reading a cut-off or corrupt gzip stream raises (the bytes before it are good).
CORRUPT_STREAM = (EOFError, gzip.BadGzipFile, zlib.error)

FileLayout = Literal["lines", "array"]


class Shape(StrEnum):
    """Where a telemetry record keeps its payload."""

    EMITTER = "emitter"  # the emitter's own line: payload keys at the top, `time`
    ENTRY = "entry"  # a Cloud Logging LogEntry: `jsonPayload`, `timestamp`


class Kind(StrEnum):
    """What one line or array element is."""

    BLANK = "blank"
    TEXT = "text"  # not JSON at all: a service's plain log line
    MALFORMED = "malformed"  # starts like JSON but does not parse: truncated
    OTHER_JSON = "other_json"  # JSON, but not a telemetry record
    EMITTER = "emitter"
    ENTRY = "entry"


@dataclass(frozen=True, slots=True)
class Sniffed:
    layout: FileLayout
    shape: Shape  # of the first telemetry record seen; EMITTER when none is near the top
    gzip: bool


def open_binary(path: Path) -> io.BufferedReader | gzip.GzipFile:
    """The file's bytes, gunzipped when it starts with the gzip magic."""
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rb")
    return path.open("rb")


def is_gzip(path: Path) -> bool:
    with path.open("rb") as probe:
        return probe.read(2) == GZIP_MAGIC


def telemetry_shape(record: object) -> Shape | None:
    """The shape of a decoded record if it is telemetry, else None.

    Telemetry means the emitter's envelope: a non-null ``event`` and ``schema_version``,
    at the top of the line or inside a LogEntry's ``jsonPayload``. A service's own
    structlog lines have an ``event`` too, but no ``schema_version``.
    """
    if not isinstance(record, dict):
        return None
    payload = record.get("jsonPayload")
    if isinstance(payload, dict) and _is_envelope(payload):
        return Shape.ENTRY
    if _is_envelope(record):
        return Shape.EMITTER
    return None


def _is_envelope(record: dict[str, Any]) -> bool:
    return record.get("event") is not None and record.get("schema_version") is not None


def spool(path: Path, into: Path) -> Path:
    """A regular-file copy of a pipe, FIFO or device (``<(zcat x.gz)``, /dev/stdin).

    Such a file can be read only once, and sniffing then reading (or DuckDB's reader)
    reads a file more than once; the bytes are copied as they are (still gzipped, if so).
    Raises OSError.
    """
    with path.open("rb") as stream, into.open("wb") as copy:
        shutil.copyfileobj(stream, copy, CHUNK)
    return into


def classify_record(raw: bytes) -> tuple[Kind, Any]:
    """Kind of one line (without its newline) and the decoded value when it is JSON."""
    text = raw.strip()
    if not text:
        return Kind.BLANK, None
    if text[:1] not in (b"{", b"["):
        return Kind.TEXT, None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        # orjson refuses some valid JSON (1e400 overflows a double); only what the
        # standard parser refuses too is a cut-off line.
        try:
            value = json.loads(text)
        except ValueError:
            return Kind.MALFORMED, None
    return kind_of(value), value


def kind_of(value: object) -> Kind:
    shape = telemetry_shape(value)
    if shape is None:
        return Kind.OTHER_JSON
    return Kind.EMITTER if shape is Shape.EMITTER else Kind.ENTRY


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line without its newline), streamed; a cut-off or corrupt
    gzip stream ends after its last whole line."""
    yield from _lines(path)


def _lines(path: Path) -> Generator[tuple[int, bytes], None, int | None]:
    """Like ``iter_lines``; returns the line number where a gzip stream broke off, if it did."""
    number = 0
    try:
        with open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                yield number, raw.rstrip(b"\r\n")
    except CORRUPT_STREAM:
        return number + 1
    return None


def _read_head(handle: io.BufferedReader | gzip.GzipFile) -> bytes:
    """Up to SNIFF_BYTES from the start; of a cut-off gzip stream, what came before the cut."""
    parts: list[bytes] = []
    size = 0
    try:
        while size < SNIFF_BYTES:
            chunk = handle.read1(SNIFF_BYTES - size)  # read1: a cut loses only this call
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
    except CORRUPT_STREAM:
        pass
    return b"".join(parts)


def sniff(path: Path) -> Sniffed:
    """FileLayout and first telemetry shape, from the first megabyte."""
    with open_binary(path) as handle:
        head = _read_head(handle)
    gz = is_gzip(path)
    stripped = head.lstrip()
    if stripped[:1] == b"[" and not _first_line_is_a_record(stripped):
        for value in _array_head(stripped):
            shape = telemetry_shape(value)
            if shape is not None:
                return Sniffed("array", shape, gz)
        return Sniffed("array", Shape.ENTRY, gz)
    complete = head if len(head) < SNIFF_BYTES else head[: head.rfind(b"\n") + 1]
    for raw in complete.splitlines():
        kind, value = classify_record(raw)
        if kind in (Kind.EMITTER, Kind.ENTRY):
            shape = telemetry_shape(value)
            assert shape is not None
            return Sniffed("lines", shape, gz)
    return Sniffed("lines", Shape.EMITTER, gz)


def _first_line_is_a_record(data: bytes) -> bool:
    """A JSON-lines file may start with a line holding an array; an export is one array.

    The first line is a record of a JSON-lines file when it is complete JSON by itself
    and more lines follow it.
    """
    first, newline, rest = data.partition(b"\n")
    if not newline or not rest.strip():
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def _array_head(data: bytes) -> Iterator[object]:
    text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    pos = 1
    while True:
        pos = _skip_separators(text, pos)
        if pos >= len(text) or text[pos] == "]":
            return
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return
        yield value


def _skip_separators(text: str, pos: int) -> int:
    length = len(text)
    while pos < length and text[pos] in " \t\r\n,":
        pos += 1
    return pos


@dataclass(slots=True)
class LogItem:
    """One item of a log file, a line or an array element: its kind, and for telemetry its raw
    JSON text. (Not the emitter's record: that is the line as a dict.)"""

    kind: Kind
    text: str  # the raw JSON of a telemetry record (what DuckDB types), else ""
    size: int  # bytes consumed since the previous record (for progress)
    value: object = None  # the decoded JSON (None when not JSON)
    position: int = 0  # 1-based line number, or element number in an array
    cut: bool = False  # the MALFORMED tail of a gzip stream that broke off (cut or corrupt)


def iter_records(path: Path, layout: FileLayout) -> Iterator[LogItem]:
    """Every record of a file, streamed, whichever its layout."""
    if layout == "array":
        yield from iter_array(path)
        return
    lines = _lines(path)
    while True:
        try:
            number, raw = next(lines)
        except StopIteration as stop:
            if stop.value is not None:  # a gzip stream cut off: its tail is one truncated record
                yield LogItem(Kind.MALFORMED, "", 0, None, stop.value, cut=True)
            return
        kind, value = classify_record(raw)
        telemetry = kind in (Kind.EMITTER, Kind.ENTRY)
        text = raw.decode("utf-8", errors="replace") if telemetry else ""
        yield LogItem(kind, text, len(raw) + 1, value, number)


def iter_array(path: Path) -> Iterator[LogItem]:
    """The elements of a file holding one JSON array, streamed.

    A file cut off mid-element (an interrupted export, or a gzip stream that breaks off)
    yields one MALFORMED element for the tail instead of failing.
    """
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with open_binary(path) as handle:
        buffer = ""
        pos = 0
        eof = False
        started = False
        cut = False
        number = 0

        def more() -> bool:
            nonlocal buffer, pos, eof, cut
            try:
                chunk = handle.read1(CHUNK)  # read1: a cut loses only this call's bytes
            except CORRUPT_STREAM:
                chunk, cut = b"", True
            if not chunk:
                eof = True
                buffer = buffer[pos:] + utf8.decode(b"", final=True)
                pos = 0
                return False
            buffer = buffer[pos:] + utf8.decode(chunk)
            pos = 0
            return True

        while True:
            pos = _skip_whitespace(buffer, pos)
            if pos >= len(buffer):
                if eof or not more():
                    if started or cut:
                        yield LogItem(Kind.MALFORMED, "", 0, None, number + 1, cut=cut)  # no "]"
                    return
                continue
            if not started:
                if buffer[pos] != "[":
                    yield LogItem(Kind.MALFORMED, "", 0, None, 1)
                    return
                started = True
                pos += 1
                continue
            char = buffer[pos]
            if char == "]":
                return
            if char == ",":
                pos += 1
                continue
            try:
                value, end = decoder.raw_decode(buffer, pos)
            except ValueError:
                if len(buffer) - pos < MAX_ELEMENT and not eof and more():
                    continue
                size = len(buffer) - pos
                yield LogItem(Kind.MALFORMED, "", size, None, number + 1, cut=cut)
                return
            # A number may continue in the next chunk ("0" then ".5"): unless a delimiter
            # follows it, read on and decode again.
            cut = end >= len(buffer) or buffer[end] not in _DELIMITERS
            if cut and not eof and not isinstance(value, dict | list | str):
                more()
                continue
            text = buffer[pos:end]
            size = len(text) if text.isascii() else len(text.encode("utf-8"))
            number += 1
            yield LogItem(kind_of(value), text, size, value, number)
            pos = end


_DELIMITERS = frozenset(" \t\r\n,]")


def _skip_whitespace(text: str, pos: int) -> int:
    length = len(text)
    while pos < length and text[pos] in " \t\r\n":
        pos += 1
    return pos
