"""Broken and unusual inputs for the loaders: gzip streams cut off or corrupt, FIFOs."""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_telemetry.schema.capacity import is_exact
from agent_telemetry.schema.events import MS_PER_HOUR, TIMING_PRECISION
from tests.warehouse.lines import line

BAD_HEADER = b"\x1f\x8b" + b"not a deflate stream, just the gzip magic" * 4


def telemetry_lines(count: int, *, on_grid: bool = False) -> list[str]:
    """Distinct lines (``queue_wait_ms`` counts up), so the compressed stream is long enough
    to cut. ``on_grid``: only values the emitter writes (3 significant digits), so every
    line is valid (up to 4,860 lines); otherwise most values are off that grid."""
    numbers = range(MS_PER_HOUR + 1) if on_grid else range(count)
    values = [n for n in numbers if not on_grid or is_exact(n, TIMING_PRECISION)][:count]
    assert len(values) == count
    return [line("pipeline_run", lane="public", status="ok", queue_wait_ms=v) for v in values]


def half_gzip(path: Path, count: int = 3000, *, on_grid: bool = False) -> int:
    """Write the first half of a gzip of ``count`` lines; returns how many whole lines it holds."""
    lines = telemetry_lines(count, on_grid=on_grid)
    data = gzip.compress("".join(f"{text}\n" for text in lines).encode())
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
