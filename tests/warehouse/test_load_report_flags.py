"""The load report's two verdicts ``report`` acts on: a file of which nothing was read
(``unreadable``: an error), and a load that could not read everything (``damaged``: a
warning). Plain text and duplicate deliveries are a log's ordinary content."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agent_telemetry.warehouse import FileLoad, LoadReport, Warehouse
from agent_telemetry.warehouse._reading.inputs import Repeat
from tests.warehouse.broken_input import BAD_HEADER, half_gzip


def _file(**counts: int | None) -> FileLoad:
    return FileLoad("x.jsonl.gz", "lines", **counts)  # type: ignore[arg-type]


def test_a_stream_broken_at_its_first_record_is_unreadable() -> None:
    assert _file(records=1, truncated=1, cut_at=1).unreadable
    # blank lines before the break are no record: still nothing read
    assert _file(records=1, truncated=1, cut_at=4).unreadable


@pytest.mark.parametrize(
    "counts",
    [
        {"records": 2, "text": 1, "truncated": 1, "cut_at": 2},  # a line read, then the break
        {"records": 3, "loaded": 2, "truncated": 1, "cut_at": 3},
        {"records": 1, "truncated": 1},  # a truncated line, the stream whole
        {"records": 0},  # an empty file: read, nothing in it
    ],
)
def test_a_file_with_a_record_before_any_break_is_readable(counts: dict[str, int]) -> None:
    assert not _file(**counts).unreadable


def test_the_report_lists_the_unreadable_files_only() -> None:
    broken = _file(records=1, truncated=1, cut_at=1)
    whole = _file(records=5, loaded=5)
    report = LoadReport("sink", (whole, broken, whole))
    assert report.unreadable == (broken,)
    assert LoadReport("sink", (whole,)).unreadable == ()


CLEAN = LoadReport("sink", (_file(records=4, loaded=2, text=1, other_json=1, duplicates=1),))


def test_plain_text_other_json_and_duplicates_are_no_damage() -> None:
    assert not CLEAN.damaged


@pytest.mark.parametrize(
    "damage",
    [
        {"files": (_file(records=2, loaded=1, truncated=1),)},
        {"files": (_file(records=2, loaded=1, oversized=1),)},
        {"files": (_file(records=2, loaded=1, too_deep=1),)},
        {"files": (_file(records=2, loaded=1, undecodable=1),)},
        {"files": (replace(_file(records=1, loaded=1), stopped="expands past 1 MiB"),)},
        {"repeated": (Repeat("again.jsonl", "x.jsonl.gz"),)},
        {"conflicting": 1},
    ],
    ids=[
        "truncated",
        "oversized",
        "too deep",
        "undecodable",
        "stopped",
        "named twice",
        "conflicting",
    ],
)
def test_each_thing_a_load_could_not_read_whole_is_damage(damage: dict[str, object]) -> None:
    assert replace(CLEAN, **damage).damaged  # type: ignore[arg-type]


def test_real_broken_gzips_read_as_the_verdicts_say(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl.gz"
    half_gzip(cut)
    garbage = tmp_path / "garbage.jsonl.gz"
    garbage.write_bytes(BAD_HEADER)
    with Warehouse() as wh:
        report = wh.load([cut, garbage])
    assert report.damaged
    assert [f.path for f in report.unreadable] == [str(garbage)]
