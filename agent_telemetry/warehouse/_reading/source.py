"""One log file, opened once and read once, as UTF-8 bytes.

The file's bytes pass through three stages, all streaming: gunzip (when the content
starts with the gzip magic, whatever the name), decoding (a UTF-8, UTF-16 or UTF-32
byte-order mark is honoured; UTF-16/32 is transcoded to UTF-8), and a look at the start
to tell JSON lines from one JSON array. Nothing is read twice: sniffing looks at bytes
that are kept and handed on, so a pipe needs no copy and a file rewritten while it is
read cannot give counts that contradict each other.

Input that is not text in one of those encodings (UTF-16 without a byte-order mark,
binary data, another compression) is refused with a ``LoadError`` naming the file and
what it looks like, rather than read as lines that are all "non-telemetry".
"""

from __future__ import annotations

import codecs
import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.warehouse._reading.structure import balanced

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

CHUNK = 1 << 20
# The largest record (line or array element) read, in UTF-8 bytes: four times Cloud
# Logging's 256 KB LogEntry limit. Longer ones are counted as oversized, never held.
MAX_RECORD = 1 << 20
# Enough of the start to see a byte-order mark, or the NUL bytes of UTF-16/32 text.
ENCODING_HEAD = 4096
GZIP_MAGIC = b"\x1f\x8b"
GZIP_STEP = 64 << 10
# What reading a cut-off or corrupt gzip stream raises (the bytes before it are good).
CORRUPT_STREAM = (EOFError, gzip.BadGzipFile, zlib.error)
# Decoding UTF-16/32 replaces what cannot be decoded by a lone surrogate, which the
# UTF-8 the reader sees keeps as bytes no JSON parser accepts: that record counts as
# undecodable, like invalid UTF-8 in a UTF-8 file.
_UNDECODABLE = "agent_telemetry.undecodable"

Layout = Literal["lines", "array"]


@dataclass(frozen=True, slots=True)
class Limits:
    """How far a gzip file may expand before it is taken for a bomb and stopped.

    ``max_bytes`` caps the decompressed bytes of one file; past ``ratio_floor``
    decompressed bytes, ``max_ratio`` caps decompressed over compressed bytes. Logs
    compress about 5-30 times (JSON lines repeat their keys); a file of blank lines,
    or of one byte repeated, about 1,000 times.
    """

    max_bytes: int = 16 << 30  # 16 GiB decompressed
    max_ratio: int = 200
    ratio_floor: int = 64 << 20  # 64 MiB decompressed before the ratio counts

    def exceeded(self, decompressed: int, compressed: int) -> str | None:
        """Why reading on would pass a limit, or None."""
        if decompressed > self.max_bytes:
            return f"decompressed past {_size(self.max_bytes)} (--max-decompressed)"
        if decompressed > self.ratio_floor and decompressed > self.max_ratio * max(compressed, 1):
            return f"expands more than {self.max_ratio} times (--max-ratio): a gzip bomb?"
        return None


def _size(count: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift:
            return f"{count / (1 << shift):g} {unit}"
    return f"{count} bytes"


DEFAULT_LIMITS = Limits()

# Longest first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Compressed formats other than gzip, by their magic bytes.
_OTHER_COMPRESSION: tuple[tuple[bytes, str], ...] = (
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
)


class LoadError(AgentTelemetryError):
    """A log file that cannot be read (missing, unreadable, not text we can decode)."""


def _undecodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\ud800", error.end


codecs.register_error(_UNDECODABLE, _undecodable)


class _Counted(io.RawIOBase):
    """The file's raw bytes, counted (for progress), with a read-ahead for the magic."""

    def __init__(self, raw: io.FileIO) -> None:
        super().__init__()
        self._raw = raw
        self._ahead = b""
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def peek_exact(self, size: int) -> bytes:
        """The first ``size`` bytes (fewer at the end), kept for the next read."""
        while len(self._ahead) < size:
            more = self._raw.read(size - len(self._ahead))
            if not more:
                break
            self.consumed += len(more)
            self._ahead += more
        return self._ahead[:size]

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        if self._ahead:
            size = min(len(view), len(self._ahead))
            view[:size] = self._ahead[:size]
            self._ahead = self._ahead[size:]
            return size
        size = self._raw.readinto(view) or 0
        self.consumed += size
        return size

    def close(self) -> None:
        self._raw.close()
        super().close()


@dataclass(frozen=True, slots=True)
class Encoding:
    name: str  # a Python codec name: utf-8, utf-16-le, utf-16-be, utf-32-le, utf-32-be
    bom: bool

    @property
    def mark_size(self) -> int:
        if not self.bom:
            return 0
        return {"utf-8": 3, "utf-16-le": 2, "utf-16-be": 2}.get(self.name, 4)

    def __str__(self) -> str:
        return f"{self.name} (BOM)" if self.bom else self.name


class LogInput:
    """A log file's content as UTF-8 chunks; use as a context manager, iterate ``chunks``
    once. ``cut`` turns true when a gzip stream broke off (cut short or corrupt), and
    ``stopped`` says why the read stopped when a gzip file passed a ``Limits`` cap."""

    def __init__(
        self, path: Path, label: str | None = None, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.path = path
        self.label = str(path) if label is None else label
        self.limits = limits
        self.decompressed = 0
        # Why the read stopped early (a limit passed): the records before it are read.
        self.stopped: str | None = None
        try:
            self._raw = _Counted(io.FileIO(path, "rb"))
            self.gzip = self._raw.peek_exact(len(GZIP_MAGIC)) == GZIP_MAGIC
        except OSError as error:
            raise LoadError(f"{self.label}: {error.strerror or error}") from None
        # A gzip file is read from disk in small steps, so the compressed bytes read so
        # far (what the ratio cap divides by) run at most one step ahead of the inflater.
        buffered = io.BufferedReader(self._raw, GZIP_STEP if self.gzip else CHUNK)
        self._stream: io.BufferedReader[_Counted] | gzip.GzipFile = (
            gzip.GzipFile(fileobj=buffered, mode="rb") if self.gzip else buffered
        )
        self.cut = False
        try:
            head, rest = _take(self._decoded(), ENCODING_HEAD)
            self.encoding = self._encoding(head)
            body = _prepend(head[self.encoding.mark_size :], rest)
            if self.encoding.name != "utf-8":
                body = _transcoded(self.encoding.name, body)
            start, body = _take_layout_head(body)
        except BaseException:
            self.close()
            raise
        self.layout = layout_of(start)
        self.chunks: Iterator[bytes] = _prepend(start, body)

    def fileno(self) -> int:
        """The descriptor of the file as opened (a path replaced since is not it)."""
        return self._raw.fileno()

    @property
    def consumed(self) -> int:
        """Bytes of the file read so far (compressed, if it is)."""
        return self._raw.consumed

    def __enter__(self) -> LogInput:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()
        self._raw.close()

    def _decoded(self) -> Iterator[bytes]:
        """The file's bytes, gunzipped if need be; a broken gzip stream ends early."""
        while True:
            try:
                chunk = self._stream.read1(CHUNK)  # read1: a cut loses only this call's bytes
            except CORRUPT_STREAM:
                self.cut = True
                return
            except OSError as error:
                raise LoadError(f"{self.label}: {error.strerror or error}") from None
            if not chunk:
                return
            if self.gzip:
                self.decompressed += len(chunk)
                self.stopped = self.limits.exceeded(self.decompressed, self.consumed)
                if self.stopped is not None:
                    return  # this chunk is past the cap: nothing of it is read
            yield chunk

    def _encoding(self, head: bytes) -> Encoding:
        for mark, name in _BOMS:
            if head.startswith(mark):
                return Encoding(name, bom=True)
        for magic, name in _OTHER_COMPRESSION:
            if head.startswith(magic):
                raise LoadError(
                    f"{self.label}: {name}-compressed; decompress it first "
                    "(gzip is the only compression read)"
                )
        if b"\x00" in head:
            guess = guess_wide_encoding(head)
            if guess is None:
                raise LoadError(f"{self.label}: binary data (NUL bytes), not a text log")
            raise LoadError(
                f"{self.label}: looks like {guess} text without a byte-order mark; "
                f"convert it to UTF-8 (iconv -f {guess} -t UTF-8) or save it with a BOM"
            )
        return Encoding("utf-8", bom=False)


def guess_wide_encoding(head: bytes) -> str | None:
    """UTF-16LE/BE or UTF-32LE/BE when the NUL bytes of ``head`` fall where mostly-ASCII
    text in that encoding puts them, else None (binary)."""
    size = len(head) - len(head) % 4
    if size < 4:
        return None
    zeros = [head[offset:size:4].count(0) / (size // 4) for offset in range(4)]
    # For each encoding: the byte offsets (mod 4) that hold NULs in ASCII text.
    patterns = {
        "UTF-32LE": (1, 2, 3),
        "UTF-32BE": (0, 1, 2),
        "UTF-16LE": (1, 3),
        "UTF-16BE": (0, 2),
    }
    for name, nul_offsets in patterns.items():
        others = [offset for offset in range(4) if offset not in nul_offsets]
        if all(zeros[o] > 0.6 for o in nul_offsets) and all(zeros[o] < 0.4 for o in others):
            return name
    return None


def _take(chunks: Iterator[bytes], size: int) -> tuple[bytes, Iterator[bytes]]:
    """At least ``size`` bytes from the start (fewer at the end), and the rest."""
    parts: list[bytes] = []
    total = 0
    for chunk in chunks:
        parts.append(chunk)
        total += len(chunk)
        if total >= size:
            break
    return b"".join(parts), chunks


def _transcoded(codec: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """UTF-16/32 chunks as UTF-8; what does not decode becomes bytes no parser accepts."""
    decoder = codecs.getincrementaldecoder(codec)(errors=_UNDECODABLE)
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text.encode("utf-8", "surrogatepass")
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail.encode("utf-8", "surrogatepass")


def _take_layout_head(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """Enough of the start to tell lines from an array: up to the first non-blank byte
    after the first newline, or more than a record's size, or everything."""
    data = b""
    for chunk in chunks:
        data += chunk
        if len(data) > MAX_RECORD or _shows_layout(data):
            break
    return data, chunks


def _shows_layout(data: bytes) -> bool:
    start = data.lstrip()
    if not start:
        return False
    if start[:1] != b"[":
        return True
    _first, newline, rest = start.partition(b"\n")
    return bool(newline) and bool(rest.strip())


def layout_of(start: bytes) -> Layout:
    """JSON lines, or one JSON array (or several, one after the other), from the start.

    An array export begins with ``[``; a JSON-lines file may too (a line holding an
    array), so it is lines when its first line is a whole JSON value by itself and more
    follows. ``start`` holds the first line and the next non-blank byte, or everything.
    """
    data = start.lstrip()
    if data[:1] != b"[":
        return "lines"
    first, newline, rest = data.partition(b"\n")
    if not newline or not rest.strip():
        return "array"  # one line (``bq query --format=json``), or the first line is open
    return "lines" if balanced(first) else "array"


def _prepend(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    yield from rest
