"""A database file spills instead of growing: ``Warehouse`` gives it DuckDB's memory
limit (``--db`` on 10,000,000 lines must stay under 2 GB; bench/warehouse.py --db-sizes
measures it). In memory there is nowhere to spill, so DuckDB's own default stays."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.warehouse import Warehouse

LIMIT = "SELECT current_setting('memory_limit')"


def test_a_database_file_gets_a_one_gigabyte_limit(tmp_path: Path) -> None:
    with Warehouse(tmp_path / "telemetry.duckdb") as wh:
        assert wh.one(LIMIT) == ("953.6 MiB",)  # 1 GB, as DuckDB prints it


def test_a_limit_given_wins(tmp_path: Path) -> None:
    with Warehouse(tmp_path / "telemetry.duckdb", memory_limit="512MB") as wh:
        assert wh.one(LIMIT) == ("488.2 MiB",)


def test_in_memory_keeps_duckdbs_default() -> None:
    with Warehouse() as wh:
        assert wh.one(LIMIT) != ("953.6 MiB",)
