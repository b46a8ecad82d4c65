"""Which lines check-logs' SQL path counts itself: every clean line of a file it judges,
when ``fast`` is on and the files hold ``sql_from`` bytes, for the package's events, a
service's own and a retired version's registry in any order. The report is the same on
both paths (test_checklogs_two_paths.py); what the SQL path saves is Python's time per
line, so these tests look at what ``FastCheck.check`` counted, and at the progress bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.schema import PipelineRun
from agent_telemetry.schema.versions import version_registry
from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._checking.check_logs import PROGRESS_EVERY
from agent_telemetry.warehouse._checking.fast import FastCheck
from agent_telemetry.warehouse._reading.source import CHUNK
from tests.schema.copies import copy_model, models_with
from tests.warehouse.lines import line, write_lines
from tests.warehouse.test_service_copies import CATALOGUE

GOOD = line("pipeline_run", lane="public", status="ok", queue_wait_ms=40)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The clean lines FastCheck.check counted, per file it judged."""
    per_file: list[int] = []
    real = FastCheck.check

    def check(self: FastCheck, log: Any) -> Any:
        counts = real(self, log)
        if counts is not None:
            per_file.append(sum(clean.lines for clean in counts.clean.values()))
        return counts

    monkeypatch.setattr(FastCheck, "check", check)
    return per_file


def test_sql_from_and_fast_decide_whether_sql_counts_the_clean_lines(
    tmp_path: Path, counted: list[int]
) -> None:
    path = write_lines(tmp_path / "small.jsonl", [GOOD] * 20)
    size = path.stat().st_size
    expected = check_logs([path], fast=False).as_dict()
    for options, judged in (
        ({"sql_from": 0}, [20]),
        ({"sql_from": size}, [20]),
        ({"sql_from": size + 1}, []),
        ({"sql_from": 0, "fast": False}, []),
        ({}, []),  # a small run is Python's alone by default
    ):
        counted.clear()
        assert check_logs([path], **options).as_dict() == expected, options
        assert counted == judged, options


def test_sql_counts_a_service_s_own_events_clean(tmp_path: Path, counted: list[int]) -> None:
    # shelf_lookup's keys are the service's own: the SQL judge must read them as its sink
    # does, or it leaves every line to Python.
    path = write_lines(
        tmp_path / "service.jsonl",
        [line("shelf_lookup", result="hit", shelf_ms=5), line("shelf_lookup", result="miss")],
    )
    report = check_logs([path], CATALOGUE.versions, sql_from=0)
    assert counted == [2]
    assert report.as_dict() == check_logs([path], CATALOGUE.versions, fast=False).as_dict()
    assert (report.events["shelf_lookup"].valid, report.clean) == (2, True)


def test_sql_judges_by_the_newest_version_in_a_registry_of_any_order(
    tmp_path: Path, counted: list[int]
) -> None:
    # v2 drops `attempts`; v1 lines with it are the retired version's, left to Python.
    v2 = copy_model(PipelineRun, version=2, drop=("attempts",))
    registry = version_registry(models_with(v2).values(), (PipelineRun,))
    newest_first = dict(reversed(list(registry.items())))
    v1 = line("pipeline_run", lane="public", status="ok", attempts=2)
    current = GOOD.replace('"schema_version":1', '"schema_version":2')
    path = write_lines(tmp_path / "mixed.jsonl", [v1, current, v1, current, current])
    for versions in (registry, newest_first):
        counted.clear()
        report = check_logs([path], versions, sql_from=0)
        assert counted == [3]
        assert report.as_dict() == check_logs([path], versions, fast=False).as_dict()
        run = report.events["pipeline_run"]
        assert (run.valid, dict(run.versions)) == (5, {1: 2, 2: 3})


class _Bar:
    def __init__(self) -> None:
        self.updates: list[int] = []

    def start_file(self, label: str, size: int) -> None:
        pass

    def update(self, done: int) -> None:
        self.updates.append(done)

    def finish_file(self) -> None:
        pass


def test_a_file_sql_judges_is_read_once_and_moves_the_bar_once(
    tmp_path: Path, counted: list[int]
) -> None:
    # Larger than a read and than PROGRESS_EVERY lines: Python's check of it would move
    # the bar several times, before its end.
    lines = (CHUNK // len(GOOD) + PROGRESS_EVERY) * [GOOD]
    path = write_lines(tmp_path / "large.jsonl", lines)
    bar = _Bar()
    report = check_logs([path], progress=bar, sql_from=0)
    assert (report.telemetry, counted) == (len(lines), [len(lines)])
    assert bar.updates == [path.stat().st_size]
