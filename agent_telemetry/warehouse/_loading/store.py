"""A file's staged telemetry rows stored in the table: added to it, or adopted as it.

Into an empty table the first file's staged rows become the table (``adopt_staged``):
copying a million rows cost 8% of the load. Later files' rows are added
(``copy_staged``). Either way the table gets the file's rows whole or not at all.
"""

from __future__ import annotations

import duckdb

from agent_telemetry.warehouse._loading.fast import STAGED
from agent_telemetry.warehouse._reading.source import LoadError
from agent_telemetry.warehouse._sink.duckdb_types import quote_identifier
from agent_telemetry.warehouse._sink.table import SinkColumns

_ASIDE = "__agent_telemetry_empty"  # the empty table's name while staged rows replace it


def copy_staged(con: duckdb.DuckDBPyConnection, table: str, sink: SinkColumns, label: str) -> int:
    """Add the staged telemetry rows to the table; how many."""
    columns = ", ".join(quote_identifier(name) for name in sink.columns)
    try:
        ((stored,),) = con.execute(
            f"INSERT INTO {quote_identifier(table)} BY NAME SELECT {columns} "
            f"FROM {STAGED} WHERE kind = 'telemetry'"
        ).fetchall()
    except duckdb.Error as error:  # the judged rows fit the table: not expected
        refused = type(error).__name__
        raise LoadError(f"{label}: DuckDB refused the rows ({refused})") from None
    return int(stored)


def adopt_staged(con: duckdb.DuckDBPyConnection, name: str, label: str) -> int:
    """Make the staged telemetry rows the (empty) table: drop the other lines and the
    staging columns, and put the staging table in the table's place (the empty table
    is kept aside until then, and put back if the rename fails). How many rows."""
    table = quote_identifier(name)
    aside = quote_identifier(f"{name}{_ASIDE}")
    con.execute(f"DELETE FROM {STAGED} WHERE kind <> 'telemetry'")
    con.execute(f"ALTER TABLE {STAGED} DROP COLUMN kind")
    con.execute(f"ALTER TABLE {STAGED} DROP COLUMN line")
    con.execute(f"ALTER TABLE {table} RENAME TO {aside}")
    try:
        con.execute(f"ALTER TABLE {STAGED} RENAME TO {table}")
    except duckdb.Error as error:  # not expected: the name was just freed
        con.execute(f"ALTER TABLE {aside} RENAME TO {table}")
        raise LoadError(f"{label}: DuckDB refused the rows ({type(error).__name__})") from None
    con.execute(f"DROP TABLE {aside}")
    ((stored,),) = con.execute(f"SELECT count(*) FROM {table}").fetchall()
    return int(stored)
