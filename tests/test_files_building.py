"""``building``: the file door for DuckDB, which makes its database by name. The database
it builds becomes the file only when the build ends without an error; the old file stays
whole otherwise, nothing staged is left beside it, the old file's write-ahead log goes
with it, and a folder swapped for a link during the build is never written through."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from agent_telemetry import _files
from agent_telemetry._files import building


def _database(path: Path, table: str, *, log_left: str | None = None) -> None:
    """A DuckDB file at ``path`` holding ``table``; with ``log_left``, a second table
    written to its ``.wal`` only (no checkpoint on close: as a killed process leaves it)."""
    with duckdb.connect(str(path)) as db:
        db.execute(f"CREATE TABLE {table} (a INTEGER)")
    if log_left is not None:
        with duckdb.connect(str(path)) as db:
            db.execute("PRAGMA disable_checkpoint_on_shutdown")
            db.execute(f"CREATE TABLE {log_left} (a INTEGER)")


def _tables(path: Path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as db:
        return [row[0] for row in db.execute("SHOW TABLES").fetchall()]


def test_a_build_replaces_the_old_database_and_its_log(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    _database(path, "old_table", log_left="old_logged")
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, f"{path.name}.wal"]
    with building(path, tmp_path) as made:
        assert not made.exists()  # DuckDB makes it: a fresh database, not a copy
        _database(made, "new_table")
    # The old log would be replayed onto the new file (DuckDB refuses: "WAL does not
    # match database file"): it went with the file it belonged to.
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert _tables(path) == ["new_table"]


def test_a_failed_build_keeps_the_old_database_and_leaves_nothing_beside_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "warehouse.duckdb"
    _database(path, "old_table")

    def failing_build() -> None:
        with building(path, tmp_path) as made:
            _database(made, "half", log_left="half_logged")  # a staged file and its log
            assert len(list(tmp_path.iterdir())) == 3
            raise RuntimeError("load failed")

    with pytest.raises(RuntimeError, match="load failed"):
        failing_build()
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert _tables(path) == ["old_table"]


def test_an_error_before_duckdb_made_anything_is_the_error_raised(tmp_path: Path) -> None:
    # Nothing staged to remove: the caller's own error comes out, not the clean-up's.
    path = tmp_path / "warehouse.duckdb"
    _database(path, "old_table")
    with pytest.raises(KeyError, match="no such log"), building(path, tmp_path):
        raise KeyError("no such log")
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert _tables(path) == ["old_table"]


def test_a_folder_swapped_for_a_link_during_the_build_is_not_written_through(
    tmp_path: Path,
) -> None:
    # The folder was checked when the build began; then `data` became a link to
    # `outside`. DuckDB is given the checked folder by descriptor, so it writes there.
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "data").mkdir(parents=True)
    outside.mkdir()
    path = repo / "data" / "warehouse.duckdb"
    with building(path, repo) as made:
        (repo / "data").rename(repo / "moved")
        (repo / "data").symlink_to(outside, target_is_directory=True)
        _database(made, "new_table")
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in (repo / "moved").iterdir()) == [path.name]
    assert _tables(repo / "moved" / path.name) == ["new_table"]


def test_without_proc_the_database_is_built_by_name_beside_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A system with no /proc/self/fd (macOS): the staged name is given in the folder.
    monkeypatch.setattr(_files, "_PROC_FD", tmp_path / "no-proc")
    path = tmp_path / "data" / "warehouse.duckdb"
    with building(path, tmp_path) as made:
        assert made.parent == path.parent
        _database(made, "new_table")
    assert _tables(path) == ["new_table"]
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_the_longest_name_duckdb_can_log_beside_is_built(tmp_path: Path) -> None:
    # 251 bytes: DuckDB's `.wal` beside it is then 255, the most a name may have.
    path = tmp_path / f"{'w' * 244}.duckdb"
    assert len(os.fsencode(path.name)) == 251
    with building(path, tmp_path) as made:
        _database(made, "new_table", log_left="logged")
    assert _tables(path) == ["new_table"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
