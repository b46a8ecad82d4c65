"""Gzip bombs stop at a limit with counts, and blank or plain-text floods are counted in C.

Two bombs, each made here by streaming (never held whole): 64 KiB that expands to
64 MiB of blank lines, which is read to its end, and 10 MiB that expands to 10 GiB,
which stops at the ratio cap. Telemetry before the flood is loaded and checked either
way: nothing already read is lost.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import Warehouse, check_logs
from agent_telemetry.warehouse._reading.records import iter_records
from agent_telemetry.warehouse._reading.source import DEFAULT_LIMITS, Limits, LogInput
from tests.warehouse.lines import line

MIB = 1 << 20
HEAD = "".join(
    line("pipeline_run", lane=lane, status="ok") + "\n" for lane in ("public", "admin", "premium")
).encode()


def _gzip(parts: Iterator[bytes], path: Path) -> Path:
    """Gzip the parts into ``path``, streaming: only the compressed bytes are written."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        for part in parts:
            out.write(packer.compress(part))
        out.write(packer.flush())
    return path


def _repeated_bomb(path: Path, block: bytes, copies: int) -> Path:
    """``HEAD`` then ``block`` ``copies`` times, compressed once: after a full flush the
    compressor starts afresh, so each copy of the block compresses to the same bytes,
    written ``copies`` times. (No trailer: the reader must stop long before the end.)"""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        out.write(packer.compress(HEAD) + packer.flush(zlib.Z_FULL_FLUSH))
        first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
        again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
        assert first == again
        for _ in range(copies):
            out.write(again)
    return path


@pytest.fixture(scope="module")
def small_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 64 KiB that expands to 64 MiB: three telemetry lines, then blank lines.
    64 MiB is the ratio cap's floor: a file this size is read whole, however it packs."""
    blank = b"\n" * MIB
    path = tmp_path_factory.mktemp("bomb") / "blank.jsonl.gz"
    _gzip(iter([HEAD, *[blank] * 63, blank[len(HEAD) :]]), path)
    assert path.stat().st_size < 80 << 10
    return path


@pytest.fixture(scope="module")
def big_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 10 MiB that expands to 10 GiB of blank lines, after three telemetry lines."""
    path = tmp_path_factory.mktemp("bomb") / "ten-gib.jsonl.gz"
    _repeated_bomb(path, b"\n" * MIB, 10 * 1024)
    assert 9 * MIB < path.stat().st_size < 12 * MIB
    return path


def _run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*map(str, args)], terminal_width=200)
    return result.exit_code, result.output


def test_a_flood_of_blank_or_text_lines_is_never_handed_to_python_line_by_line(
    tmp_path: Path,
) -> None:
    # 4 MiB of blank lines and of short plain-text lines: a handful of records, not
    # millions (the old reader made one Python object per line: minutes for 64 MiB).
    flood = tmp_path / "flood.log"
    flood.write_bytes(HEAD + b"\n \r\n\t\n" * (MIB // 2) + b"INFO x\n" * (MIB // 2) + HEAD)
    with LogInput(flood) as log:
        records = list(iter_records(log))
    assert len(records) < 100
    assert sum(r.count for r in records if r.kind == "telemetry") == 6
    assert sum(r.count for r in records if r.kind == "text") == MIB // 2


def test_the_64_mib_bomb_is_read_to_its_end_by_both_commands(small_bomb: Path) -> None:
    with Warehouse() as wh:
        (loaded,) = wh.load([small_bomb]).files
        wh.create_views()
        assert wh.one("SELECT count(*) FROM pipeline_run") == (3,)
    assert (loaded.records, loaded.loaded, loaded.stopped) == (3, 3, None)
    report = check_logs([small_bomb])
    assert report.clean
    assert (report.telemetry, report.files[0].records) == (3, 3)


def test_the_10_gib_bomb_stops_at_the_ratio_cap_and_keeps_what_came_before(
    big_bomb: Path,
) -> None:
    with LogInput(big_bomb) as log:
        records = list(iter_records(log))
        assert log.stopped is not None
        assert "expands more than 200 times" in log.stopped
        # It stops soon after the floor: the compressed bytes are read 64 KiB at a time.
        assert log.decompressed <= DEFAULT_LIMITS.ratio_floor + 16 * MIB
    assert [r.kind for r in records] == ["telemetry"] * 3

    code, output = _run("preview", big_bomb)
    assert code == 0, output
    assert "pipeline_run: 3 rows" in output
    assert "stopped reading, expands more than 200 times (--max-ratio)" in output

    code, output = _run("check-logs", "--format", "json", big_bomb)
    assert code == 1, output  # not read to its end: not clean
    report = json.loads(output)
    assert (report["telemetry_lines"], report["stopped"]) == (3, 1)
    assert report["events"]["pipeline_run"]["valid"] == 3
    code, output = _run("check-logs", big_bomb)
    assert "a file was not read to its end" in output


def test_the_byte_cap_stops_a_file_that_compresses_like_a_log(tmp_path: Path) -> None:
    # Lines that compress a few times only pass no ratio cap; the byte cap stops them.
    body = b"".join(b"%08d text that varies %d\n" % (n, n * 7919 % 100003) for n in range(60_000))
    path = _gzip(iter([HEAD, body]), tmp_path / "plain.log.gz")
    limits = Limits(max_bytes=MIB, max_ratio=DEFAULT_LIMITS.max_ratio)
    with Warehouse() as wh:
        (loaded,) = wh.load([path], limits=limits).files
    assert loaded.stopped is not None
    assert "decompressed past 1 MiB (--max-decompressed)" in loaded.stopped
    assert loaded.loaded == 3
    assert 0 < loaded.text < 60_000
    code, output = _run("check-logs", "--max-decompressed", "1", path)
    assert code == 1
    assert "stopped reading, decompressed past 1 MiB" in output
    code, output = _run("check-logs", "--max-decompressed", "64", path)
    assert code == 0, output


def test_raising_the_ratio_cap_reads_further(tmp_path: Path) -> None:
    path = _repeated_bomb(tmp_path / "eighty.jsonl.gz", b"\n" * MIB, 80)
    with LogInput(path, limits=Limits(max_ratio=100_000)) as log:
        # This file has no trailer: read to its very end, where the stream breaks off.
        assert [r.kind for r in iter_records(log)] == ["telemetry"] * 3 + ["malformed"]
        assert log.stopped is None
        assert log.cut
        assert log.decompressed == len(HEAD) + 80 * MIB
