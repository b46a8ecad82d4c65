"""``agent-telemetry query``: one SQL statement over the views, on log files or a database.

Log files load into an in-memory warehouse (the views created as preview creates them);
a database kept by ``preview --db`` or ``demo`` opens read-only, so a query can read
everything and change nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.warehouse.results import Result

if TYPE_CHECKING:
    from agent_telemetry.config import DeploymentConfig
    from agent_telemetry.schema.catalogue import Catalogue


class QueryError(AgentTelemetryError):
    """The query cannot run: DuckDB's message, or why the database cannot be opened."""


def _execute(con: duckdb.DuckDBPyConnection, sql: str) -> Result:
    try:
        cursor = con.execute(sql)
        if cursor.description is None:  # a statement without a result set
            return Result((), ())
        columns = tuple(str(d[0]) for d in cursor.description)
        return Result(columns, tuple(tuple(row) for row in cursor.fetchall()))
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise QueryError(f"the query failed: {first}") from None


def query_database(sql: str, db: Path) -> Result:
    """Run ``sql`` on the database file ``db``, opened read-only."""
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        raise QueryError(
            f"{db} cannot be opened as a DuckDB database (read-only); "
            "make one with `agent-telemetry preview LOGS --db FILE`"
        ) from None
    try:
        con.execute("SET TimeZone = 'UTC'")
        return _execute(con, sql)
    finally:
        con.close()


def query_logs(
    sql: str,
    logs: Sequence[Path],
    *,
    config: DeploymentConfig | None = None,
    catalogue: Catalogue | None = None,
) -> Result:
    """Load ``logs`` into an in-memory warehouse of ``catalogue``'s events (default: the
    package's), create the views, run ``sql``."""
    from agent_telemetry.warehouse._warehouse import Warehouse

    with Warehouse(config=config, catalogue=catalogue) as wh:
        wh.load(logs)
        wh.create_views()
        return _execute(wh.con, sql)
