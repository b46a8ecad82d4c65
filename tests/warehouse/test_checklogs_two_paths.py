"""``check-logs`` gives the same report with its SQL path on and off.

With ``fast`` on, the lines the SQL judge finds clean are only counted in SQL
(``_checking.fast``) and every other line is checked by Python; off, Python checks
every line. Over the hostile corpora of the load's two paths (two_paths_corpus.py and
the 17 files of corpus.py), alone and all together (duplicates across files), with and
without ``--strict-types``, the whole report must be equal: counts, violations by field
and rule, coercions, coverage, versions and the positions of truncated lines.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from agent_telemetry.schema import EVENT_VERSIONS, event_spec
from agent_telemetry.schema.versions import current_models
from agent_telemetry.warehouse._checking.check_logs import check_logs
from agent_telemetry.warehouse._checking.fast import FastCheck
from agent_telemetry.warehouse._loading.fast import SQL_FROM, FastJudge, worth_sql
from agent_telemetry.warehouse._loading.load import load_logs
from agent_telemetry.warehouse._reading.source import DEFAULT_LIMITS, LogInput
from tests.warehouse.corpus import corpus
from tests.warehouse.lines import entry
from tests.warehouse.test_two_paths import FILES
from tests.warehouse.two_paths_corpus import valid_lines

CHECK_FILES = {
    **FILES,
    "two-valid.jsonl": valid_lines(11, 3000),
    "two-valid-emitter.jsonl": valid_lines(12, 3000, entries=False),
    "two-valid-again.jsonl": valid_lines(11, 300),  # entries exported twice, across files
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("check-two-paths")
    paths = {}
    for name, data in CHECK_FILES.items():
        paths[name] = directory / name
        paths[name].write_bytes(data)
    for item in corpus():
        paths[item.name] = directory / item.name
        paths[item.name].write_bytes(item.data)
    return paths


def _report(paths: list[Path], *, fast: bool, strict: bool) -> dict[str, Any]:
    # The SQL path on files of any size (a small run is Python's alone by default).
    return check_logs(paths, strict_types=strict, fast=fast, sql_from=0).as_dict()


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_report_is_the_same_with_the_sql_path_on_and_off(
    written: dict[str, Path], strict: bool
) -> None:
    for name, path in written.items():
        fast, slow = (
            _report([path], fast=True, strict=strict),
            _report([path], fast=False, strict=strict),
        )
        assert fast == slow, name
    every = list(written.values())
    assert _report(every, fast=True, strict=strict) == _report(every, fast=False, strict=strict)


def _current() -> dict[str, tuple[int, Any]]:
    current = {}
    for name, model in current_models(EVENT_VERSIONS).items():
        version = max(v for n, v in EVENT_VERSIONS if n == name)
        current[name] = (version, event_spec(model))
    return current


def test_the_sql_path_counts_most_clean_lines(written: dict[str, Path]) -> None:
    """Not a vacuous equality: SQL counts thousands of clean lines of the corpora itself,
    and leaves lines with violations to Python."""
    check = FastCheck(_current())
    clean = rest = 0
    for path in written.values():
        with LogInput(path) as log:
            if (counts := check.check(log)) is None:
                continue
            clean += sum(c.lines for c in counts.clean.values())
            rest += sum(1 for _ in check.rest(log))
    check.close()
    assert clean > 1000
    # Files with insert ids take the slow path whole: the hostile emitter lines remain.
    assert rest > 200


def test_a_line_python_must_see_is_reported_at_each_of_its_places(tmp_path: Path) -> None:
    """SQL hands Python each bent line's text and how often it occurs, and the file is
    read again to number them: the same line three times, around blank lines, and a
    last line without its newline are reported where the slow path reports them."""
    bent = '{"event": "pipeline_run", "schema_version": 1, "lane": "public", "status": 7}'
    cut = '{"event": "chat_turn", "schema_ver'  # truncated JSON: reported with its line
    clean = valid_lines(3, 5, entries=False).decode().splitlines()
    lines = [clean[0], bent, "", cut, clean[1], bent, "", "", cut, bent, clean[2], cut]
    path = tmp_path / "places.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")  # no final newline
    fast = _report([path], fast=True, strict=False)
    assert fast == _report([path], fast=False, strict=False)
    check = FastCheck(_current())
    with LogInput(path) as log:
        assert check.check(log) is not None
        assert [number for number, _ in check.rest(log)] == [2, 4, 6, 9, 10, 12]


def test_a_keyed_line_python_must_see_is_found_by_its_number(tmp_path: Path) -> None:
    """With keys read first, each file is judged once into a table of its lines, and
    Python's lines are found again by their numbers (row n + 1 is line n + 1): a bent
    entry three times, an entry and its copy, around blank lines, and a truncated last
    line without its newline are reported where the slow path reports them."""
    clean = _entries(["k0", "k1", "k2"]).splitlines()
    bent = orjson.dumps(entry("pipeline_run", insert_id="b1", lane="public", status=7)).decode()
    cut = '{"insertId": "k9", "jsonPayload": {"event": "chat_t'
    lines = [clean[0], bent, "", cut, clean[1], bent, "", "", cut, clean[1], clean[2], cut]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")  # no final newline
    fast = _report([path], fast=True, strict=False)
    assert fast == _report([path], fast=False, strict=False)
    check = FastCheck(_current())
    check.prepare([path], DEFAULT_LIMITS)
    with LogInput(path) as log:
        counts = check.check(log)
        assert counts is not None
        assert sum(c.lines for c in counts.clean.values()) == 2  # k0 and k2; k1 is copied
        assert [number for number, _ in check.rest(log)] == [2, 4, 5, 6, 9, 10, 12]
    assert check.con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall() == [
        (2,)  # the checked table and COPIED: the file's lines were dropped once counted
    ]
    check.close()


def test_the_sql_path_draws_no_progress_bar() -> None:
    # A statement over a large file runs for seconds: DuckDB would draw its bar on the
    # terminal (and in CI logs) between check-logs' own lines.
    check = FastCheck(_current())
    setting = check.con.execute("SELECT current_setting('enable_progress_bar')").fetchall()
    assert setting == [(False,)]


def _entries(ids: list[str], lane: str = "public") -> str:
    return "".join(
        orjson.dumps(
            entry("pipeline_run", insert_id=i, lane=lane, status="ok", queue_wait_ms=5)
        ).decode()
        + "\n"
        for i in ids
    )


def test_keyed_entries_are_checked_in_sql_unless_another_line_shares_the_key(
    tmp_path: Path,
) -> None:
    """Every file's keys are read first: a LogEntry whose key is its own is counted in
    SQL, the copies of an entry (here one in each file, and one conflicting) wait in
    ``Copies`` as on the slow path, and the report is the slow path's."""
    first = tmp_path / "export-1.jsonl"
    first.write_text(_entries([f"e{n}" for n in range(40)]), encoding="utf-8")
    second = tmp_path / "export-2.jsonl"
    second.write_text(
        _entries(["e3", "e4", "x1", "x2"]) + _entries(["e5"], lane="admin"), encoding="utf-8"
    )
    paths = [first, second]
    fast = _report(paths, fast=True, strict=False)
    assert fast == _report(paths, fast=False, strict=False)
    assert fast["duplicates"] == 3
    assert fast["conflicting_duplicates"] == 1
    check = FastCheck(_current())
    check.prepare(paths, DEFAULT_LIMITS)
    assert check.keyed
    counted = []
    for path in paths:
        with LogInput(path) as log:
            counts = check.check(log)
            assert counts is not None
            counted.append(sum(c.lines for c in counts.clean.values()))
            assert sum(1 for _ in check.rest(log)) == 3
    assert counted == [37, 2]  # e3, e4 and e5 in both files wait in Copies


def test_a_pipe_among_the_inputs_is_not_read_ahead(tmp_path: Path) -> None:
    """Keys are read ahead only when every input is a regular file: a pipe's lines are
    read once, by the check."""
    keyed = tmp_path / "export.jsonl"
    keyed.write_text(_entries(["a", "b"]), encoding="utf-8")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    data = _entries(["b", "c"]).encode()

    def feed() -> None:
        with pipe.open("wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    report = _report([keyed, pipe], fast=True, strict=False)
    writer.join()
    assert report["telemetry_lines"] == 4
    assert report["duplicates"] == 1


def test_a_small_run_is_judged_by_python_and_a_large_one_in_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB plans the SQL judge for tens of milliseconds a file: a run whose files hold
    fewer than SQL_FROM bytes is Python's alone (check-logs and the load), a larger one
    takes the SQL path; the report and the table are the same either way."""
    calls: list[str] = []
    for owner, name in ((FastCheck, "check"), (FastJudge, "stage")):
        real = getattr(owner, name)

        def spy(
            self: Any, *args: Any, _real: Any = real, _name: str = name, **keywords: Any
        ) -> Any:
            calls.append(_name)
            return _real(self, *args, **keywords)

        monkeypatch.setattr(owner, name, spy)
    lines = valid_lines(21, 40, entries=False)
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(lines)
    large.write_bytes(lines * (SQL_FROM // len(lines) + 1))
    assert not worth_sql([small])
    for path, sql in ((small, []), (large, ["check", "stage"])):
        calls.clear()
        report = check_logs([path]).as_dict()
        with duckdb.connect() as con:
            load_logs(con, [path])
        assert calls == sql, path.name
        assert report == _report([path], fast=False, strict=False)
    assert worth_sql([tmp_path / "missing.jsonl", large]) is True
