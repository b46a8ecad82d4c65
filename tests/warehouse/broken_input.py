"""Broken and unusual inputs for the loaders: gzip streams cut off or corrupt, FIFOs."""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.warehouse.lines import line

BAD_HEADER = b"\x1f\x8b" + b"not a deflate stream, just the gzip magic" * 4


def telemetry_lines(count: int) -> list[str]:
    """Distinct valid lines, so the compressed stream is long enough to cut."""
    return [
        # Both on their precision's grid (3 digits): distinct for up to a million lines.
        line(
            "pipeline_run",
            lane="public",
            status="ok",
            queue_wait_ms=number % 1000,
            duration_ms=number // 1000 % 1000,
        )
        for number in range(count)
    ]


def half_gzip(path: Path, count: int = 3000) -> int:
    """Write the first half of a gzip of ``count`` lines; returns how many whole lines it holds."""
    data = gzip.compress("".join(f"{text}\n" for text in telemetry_lines(count)).encode())
    cut = data[: len(data) // 2]
    path.write_bytes(cut)
    readable = zlib.decompressobj(wbits=31).decompress(cut)
    return readable.count(b"\n")


@contextmanager
def fifo_with(path: Path, data: bytes) -> Iterator[Path]:
    """A FIFO at ``path`` that a writer thread fills with ``data`` once, then closes."""
    os.mkfifo(path)

    def write() -> None:
        with path.open("wb") as pipe:  # blocks until the reader opens it
            pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        writer.join(timeout=10)
