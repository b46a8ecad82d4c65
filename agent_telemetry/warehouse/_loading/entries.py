"""The entries earlier files of a load stored, and how many of a file's entries they hold.

Exports are not de-duplicated: the same entry (insert id and timestamp) may be in two
files. The views keep one row per entry; the load stores every copy and counts the
repeats, each file's against the files before it.
"""

from __future__ import annotations

import duckdb

from agent_telemetry.warehouse._sink.duckdb_types import quote_identifier
from agent_telemetry.warehouse._sink.table import INSERT_ID, TIMESTAMP

_SEEN = "_agent_telemetry_seen"  # entries (insert id, timestamp) of earlier files
_NEW = "_agent_telemetry_new"  # this file's entries not seen before


class EarlierEntries:
    """The entries of the load's earlier files, in a temporary table."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_SEEN} ({INSERT_ID} VARCHAR, "
            f"{quote_identifier(TIMESTAMP)} TIMESTAMPTZ)"
        )
        self._seen = False  # whether earlier files stored entries in _SEEN

    def repeats(self, keyed: str, *, last: bool) -> int:
        """How many of the entries ``keyed`` selects (insert id, timestamp) were seen
        before, in this file or an earlier one; remembers this file's new ones unless it
        is the ``last`` (no later file needs them)."""
        con, key = self.con, f"{INSERT_ID}, {quote_identifier(TIMESTAMP)}"
        if last and not self._seen:  # only this file's own copies count
            ((entries, new),) = con.execute(
                f"SELECT (SELECT count(*) FROM ({keyed})), "
                f"(SELECT count(*) FROM (SELECT DISTINCT * FROM ({keyed})))"
            ).fetchall()
        else:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_NEW} AS SELECT DISTINCT * FROM ({keyed}) "
                f"EXCEPT SELECT {key} FROM {_SEEN}"
            )
            ((entries,),) = con.execute(f"SELECT count(*) FROM ({keyed})").fetchall()
            ((new,),) = con.execute(f"SELECT count(*) FROM {_NEW}").fetchall()
            con.execute(f"INSERT INTO {_SEEN} SELECT * FROM {_NEW}")
            con.execute(f"DROP TABLE {_NEW}")
            self._seen = self._seen or new > 0
        return int(entries - new)

    def drop(self) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS {_SEEN}")
