"""Edges of the JSON-lines reader where records meet read boundaries: a record of exactly
MAX_RECORD bytes first, last without a newline, or in many gzip reads; long lines
spanning reads, never joined; every hostile line counted and numbered; a truncated last
line; a file of several spool batches loaded once each, with progress per batch."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_telemetry.warehouse import FileLoad, Warehouse, check_logs
from agent_telemetry.warehouse._loading.load import BATCH, SINK_TABLE, load_logs
from agent_telemetry.warehouse._reading.records import MAX_DEPTH, Kind, iter_records
from agent_telemetry.warehouse._reading.source import CHUNK, MAX_RECORD, LogInput
from tests.warehouse.broken_input import telemetry_lines
from tests.warehouse.lines import line, write_lines

FIRST = line("pipeline_run", lane="public", status="ok")
SINK = f'"{SINK_TABLE}"'


def _padded(size: int) -> str:
    """A telemetry line of exactly ``size`` bytes: whitespace after its opening brace,
    so a byte lost, doubled or inserted at a read boundary breaks it."""
    base = line("pipeline_run", lane="admin", status="ok")
    assert size > len(base)
    return "{" + " " * (size - len(base)) + base[1:]


def _load(wh: Warehouse, path: Path) -> FileLoad:
    (loaded,) = wh.load([path]).files
    return loaded


def _found(path: Path) -> list[tuple[Kind, int]]:
    with LogInput(path) as log:
        return [(record.kind, record.position) for record in iter_records(log)]


def _plain(data: bytes) -> bytes:
    return data


def _stored_gzip(data: bytes) -> bytes:
    # Stored (level 0) blocks: each gzip read yields a few KiB, so a 1 MiB line
    # arrives in many pieces instead of one or two file reads.
    return gzip.compress(data, compresslevel=0)


WRITERS = pytest.mark.parametrize("write", [_plain, _stored_gzip], ids=["plain", "gzip-stored"])


def test_a_first_line_of_exactly_max_record_bytes_is_loaded(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "first.jsonl", [_padded(MAX_RECORD), FIRST])
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.oversized) == (2, 2, 0)


@WRITERS
def test_a_last_line_of_exactly_max_record_bytes_without_a_newline_is_loaded_whole(
    wh: Warehouse, tmp_path: Path, write: Callable[[bytes], bytes]
) -> None:
    # A first line of half a read puts the first read's end inside the last line's
    # padding: the line reaches the reader in pieces and never ends with a newline.
    data = f"{_padded(MAX_RECORD // 2)}\n{_padded(MAX_RECORD)}".encode()
    assert len(data) > CHUNK + 2
    path = tmp_path / "last.jsonl"
    path.write_bytes(write(data))
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.oversized, loaded.truncated) == (2, 2, 0, 0)
    assert wh.one(f"SELECT count(*) FROM {SINK} WHERE jsonPayload.lane = 'admin'") == (2,)


@WRITERS
def test_a_last_line_one_byte_past_max_record_without_a_newline_is_oversized_at_its_line(
    wh: Warehouse, tmp_path: Path, write: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "last.jsonl"
    path.write_bytes(write(f"{FIRST}\n{_padded(MAX_RECORD + 1)}".encode()))
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.oversized, loaded.undecodable) == (2, 1, 1, 0)
    assert _found(path) == [(Kind.TELEMETRY, 1), (Kind.OVERSIZED, 2)]


def test_a_line_of_max_record_bytes_in_many_gzip_reads_is_loaded_whole(
    wh: Warehouse, tmp_path: Path
) -> None:
    lines = [FIRST, _padded(MAX_RECORD), FIRST]
    path = tmp_path / "stored.jsonl.gz"
    path.write_bytes(_stored_gzip("".join(f"{text}\n" for text in lines).encode()))
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.oversized, loaded.truncated) == (3, 3, 0, 0)
    assert wh.one(f"SELECT count(*) FROM {SINK} WHERE jsonPayload.lane = 'admin'") == (1,)


def test_a_long_line_ending_late_in_the_next_read_is_skipped_without_joining_its_parts(
    tmp_path: Path,
) -> None:
    # The line's first MAX_RECORD bytes are gathered from the first read; its end is
    # nearly all of the second. Already too long, the two must not be joined into one
    # copy (MAX_RECORD + CHUNK more bytes) just to be thrown away.
    head = f"{FIRST}\n"
    first_part = CHUNK + 2 - len(head)  # the first read holds 2 sniffed bytes more
    long_line = '["' + "x" * (first_part + CHUNK - 16) + '"]'
    path = write_lines(tmp_path / "long.jsonl", [FIRST, long_line, FIRST])
    tracemalloc.start()
    try:
        found = _found(path)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == [(Kind.TELEMETRY, 1), (Kind.OVERSIZED, 2), (Kind.TELEMETRY, 3)]
    # Reads, their pieces and the part gathered (about 5 MiB); joined, about 7 MiB.
    assert peak < 2 * MAX_RECORD + 4 * CHUNK, peak


def test_every_oversized_and_too_deep_line_is_counted_once_at_its_line_number(
    wh: Warehouse, tmp_path: Path
) -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    spanning = '["' + "x" * (3 * CHUNK) + '"]'  # skipped through over several reads
    just_over = '["' + "x" * (MAX_RECORD - 3) + '"]'
    path = write_lines(tmp_path / "hostile.jsonl", [FIRST, spanning, deep, just_over, deep, FIRST])
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.oversized, loaded.too_deep) == (6, 2, 2, 2)
    (checked,) = check_logs([path]).files
    counts = (checked.records, checked.telemetry, checked.oversized, checked.too_deep)
    assert counts == (6, 2, 2, 2)
    assert _found(path) == [
        (Kind.TELEMETRY, 1),
        (Kind.OVERSIZED, 2),
        (Kind.TOO_DEEP, 3),
        (Kind.OVERSIZED, 4),
        (Kind.TOO_DEEP, 5),
        (Kind.TELEMETRY, 6),
    ]


def test_a_truncated_last_line_without_a_newline_is_reported_at_its_line_number(
    wh: Warehouse, tmp_path: Path
) -> None:
    # A service killed mid-write: the last line stops half way, with no newline.
    path = tmp_path / "killed.jsonl"
    path.write_text(f"{FIRST}\n{FIRST}\n{FIRST[: len(FIRST) // 2]}", encoding="utf-8")
    (checked,) = check_logs([path]).files
    assert (checked.records, checked.telemetry, checked.truncated) == (3, 2, 1)
    assert checked.truncated_at == [3]
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.truncated) == (3, 2, 1)


class _Progress:
    """What the loader reports, as a progress bar would receive it."""

    def __init__(self) -> None:
        self.size = -1
        self.updates: list[int] = []

    def start_file(self, label: str, size: int) -> None:
        self.size = size

    def update(self, done: int) -> None:
        self.updates.append(done)

    def finish_file(self) -> None:
        pass


def test_a_file_of_two_spool_batches_loads_every_line_once_and_moves_progress_per_batch(
    wh: Warehouse, tmp_path: Path
) -> None:
    path = write_lines(tmp_path / "two-batches.jsonl", telemetry_lines(2 * BATCH))
    progress = _Progress()
    progress.size = path.stat().st_size
    # Python's path (the fast path judges the file in one statement: see below).
    (loaded,) = load_logs(wh.con, [path], progress=progress, fast=False).files
    assert (loaded.records, loaded.loaded) == (2 * BATCH, 2 * BATCH)
    assert wh.one(f"SELECT count(DISTINCT jsonPayload.queue_wait_ms) FROM {SINK}") == (2 * BATCH,)
    # One update per full batch, in bytes read so far: never past the file's size.
    first, second = progress.updates
    assert 0 < first <= second <= progress.size == path.stat().st_size


def test_the_fast_path_moves_progress_to_the_files_size_once(wh: Warehouse, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "two-batches.jsonl", telemetry_lines(2 * BATCH))
    progress = _Progress()
    (loaded,) = wh.load([path], progress=progress).files
    assert (loaded.records, loaded.loaded) == (2 * BATCH, 2 * BATCH)
    assert progress.updates == [progress.size] == [path.stat().st_size]
