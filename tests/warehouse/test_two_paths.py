"""The load's two judges give the same table: DuckDB's SQL (``_judging.typed``) and Python's
(``_judging.python``), over the same hostile lines (tests/warehouse/two_paths_corpus.py).

Each file is loaded twice, fast (SQL judges what it reads exactly, Python the lines it
flags) and slow (Python judges every line); the tables must be equal byte for byte
after ordering, and every count of the report equal. The corpus must exercise both
halves: many telemetry rows judged in SQL, and lines of every odd kind left to Python.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from agent_telemetry.warehouse._judging.typed import file_shape
from agent_telemetry.warehouse._loading.fast import SNIFF, STAGED, qualifies
from agent_telemetry.warehouse._loading.load import (
    SINK_TABLE,
    FileLoad,
    create_sink,
    load_logs,
)
from agent_telemetry.warehouse._loading.staging import Staging as _Staging
from agent_telemetry.warehouse._reading.source import LogInput
from tests.warehouse.corpus import corpus
from tests.warehouse.two_paths_corpus import duplicated_entries, hostile_lines, valid_lines

FILES = {
    "two-hostile.jsonl": hostile_lines(26, 4000),
    "two-hostile-small.jsonl": hostile_lines(7, 300),
    # a file is parsed for the emitter's lines, for LogEntries or for both (its first
    # 64 KiB decide; a line of the shape not read goes to Python)
    "two-hostile-emitter.jsonl": hostile_lines(27, 3000, "emitter"),
    "two-hostile-entries.jsonl": hostile_lines(28, 3000, "entries", noise=0.04),
    "two-duplicates.jsonl": duplicated_entries(3, 500),
    # what emitters write: nearly every line is judged in SQL
    "two-valid.jsonl": valid_lines(11, 3000),
    "two-valid-emitter.jsonl": valid_lines(12, 3000, entries=False),
    # files DuckDB refuses whole (the slow path takes them): never wrong, only slower
    "two-crlf.jsonl": hostile_lines(8, 200).replace(b"\n", b"\r\n"),
    "two-invalid-utf8.jsonl": hostile_lines(9, 200) + b'{"event": "chat_turn", "x": "\xff"}\n',
    "two-no-final-newline.jsonl": hostile_lines(10, 200).rstrip(b"\n"),
}


def _table(con: duckdb.DuckDBPyConnection) -> list[tuple[str, ...]]:
    """Every row as DuckDB writes its values, ordered."""
    return sorted(
        con.execute(
            "SELECT CAST(jsonPayload AS VARCHAR), CAST(timestamp AS VARCHAR), "
            f"CAST(insertId AS VARCHAR) FROM {SINK_TABLE}"
        ).fetchall(),
        key=repr,
    )


def _load(paths: list[Path], *, fast: bool) -> tuple[tuple[FileLoad, ...], list[tuple[str, ...]]]:
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        # The SQL path on files of any size (a small run is Python's alone by default).
        report = load_logs(con, paths, fast=fast, sql_from=0)
        return report.files, _table(con)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("two-paths")
    paths = {}
    for name, data in FILES.items():
        paths[name] = directory / name
        paths[name].write_bytes(data)
    for item in corpus():
        assert item.name not in paths
        paths[item.name] = directory / item.name
        paths[item.name].write_bytes(item.data)
    return paths


def _staged_kinds(path: Path) -> Counter[str] | None:
    """What the fast path decides in SQL for each line, or None when it refuses."""
    with duckdb.connect() as con, LogInput(path) as log:
        staging = _Staging(con, SINK_TABLE, create_sink(con), fast=True, fresh=True)
        assert staging.fast is not None
        if not qualifies(log) or staging.fast.stage(con, log, reset=staging.reset) is None:
            return None
        return Counter(
            dict(con.execute(f"SELECT kind, count(*) FROM {STAGED} GROUP BY kind").fetchall())
        )


@pytest.mark.parametrize("name", [*FILES, *(item.name for item in corpus())])
def test_both_judges_give_the_same_table_and_counts(name: str, written: dict[str, Path]) -> None:
    fast_files, fast_rows = _load([written[name]], fast=True)
    slow_files, slow_rows = _load([written[name]], fast=False)
    assert fast_files == slow_files
    assert fast_rows == slow_rows


def test_both_judges_agree_across_files_on_duplicates(
    written: dict[str, Path], tmp_path: Path
) -> None:
    """Duplicates are counted across the files of one load, whichever path each took."""
    again = tmp_path / "exported-again.jsonl"  # the same entries in another file
    again.write_bytes(written["two-duplicates.jsonl"].read_bytes())
    paths = [written["two-duplicates.jsonl"], written["sink-duplicates.json"], again]
    paths.append(written["two-crlf.jsonl"])
    fast = _load(paths, fast=True)
    assert fast == _load(paths, fast=False)
    assert fast[0][2].duplicates == fast[0][2].loaded > 0


def test_every_file_in_one_load_is_counted_as_it_is_alone(
    written: dict[str, Path], tmp_path: Path
) -> None:
    """A file's staged lines never reach the next file's counts: a file with no
    telemetry (one line Python must judge, plain text) loaded before another once made
    the second file count them again (records 2, truncated 1 where it held one line)."""
    nothing = tmp_path / "no-telemetry.jsonl"
    nothing.write_bytes(b'{"a": NaN}\nplain text\n\n')
    text = tmp_path / "text.jsonl"
    text.write_bytes(b"plain text\n")
    files, _ = _load([nothing, text], fast=True)
    assert [(f.records, f.text, f.truncated) for f in files] == [(2, 1, 1), (1, 1, 0)]
    every = [nothing, *written.values(), text]
    fast = _load(every, fast=True)
    assert fast == _load(every, fast=False)
    # Alone, each file has only its own duplicates; every other count is the file's.
    alone = tuple(_load([path], fast=False)[0][0] for path in every)
    assert [replace(f, duplicates=0) for f in fast[0]] == [replace(f, duplicates=0) for f in alone]


SHAPE = {
    "two-hostile.jsonl": "any",
    "two-hostile-emitter.jsonl": "emitter",
    "two-hostile-entries.jsonl": "entry",
}


@pytest.mark.parametrize("name", SHAPE)
def test_the_corpus_exercises_both_judges(name: str, written: dict[str, Path]) -> None:
    kinds = _staged_kinds(written[name])
    assert kinds is not None
    # judged in SQL (a line holding any value out of its plain form goes to Python)
    assert kinds["telemetry"] > 300
    assert kinds["python"] > 300  # left to Python
    assert kinds["text"]
    assert kinds["blank"]
    assert kinds["oversized"]
    # JSON that is not telemetry is told apart in SQL where the top is read: in a file
    # not parsed for LogEntries alone
    shape = file_shape(written[name].read_bytes()[:SNIFF])
    assert shape == SHAPE[name]
    assert bool(kinds["other_json"]) == (shape != "entry")


def test_the_valid_files_are_judged_in_sql(written: dict[str, Path]) -> None:
    for name in ("two-valid.jsonl", "two-valid-emitter.jsonl"):
        valid = _staged_kinds(written[name])
        assert valid is not None
        assert valid["telemetry"] > 2700, name  # of 3000 (LogEntries and emitter lines)


@pytest.mark.parametrize("name", ["two-crlf.jsonl", "two-invalid-utf8.jsonl"])
def test_a_file_duckdb_cannot_read_exactly_takes_the_slow_path(
    name: str, written: dict[str, Path]
) -> None:
    assert _staged_kinds(written[name]) is None
