"""Where a file's judged rows wait until the file is read whole: a file loads whole or
not at all. Then its repeats are counted (``entries``) and its rows stored (``store``)."""

from __future__ import annotations

import duckdb

from agent_telemetry.warehouse._loading.entries import EarlierEntries
from agent_telemetry.warehouse._loading.fast import STAGED, FastJudge
from agent_telemetry.warehouse._loading.store import adopt_staged, copy_staged
from agent_telemetry.warehouse._reading.source import LoadError
from agent_telemetry.warehouse._sink.duckdb_types import quote_identifier
from agent_telemetry.warehouse._sink.table import INSERT_ID, TIMESTAMP, SinkColumns


class Staging:
    """The staging table of one load, and the entries seen in its earlier files."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        sink: SinkColumns,
        *,
        fast: bool,
        fresh: bool,
    ) -> None:
        """``fresh``: the table is empty and this load created it."""
        self.con, self.table, self.sink = con, table, sink
        # DuckDB draws a progress bar on stdout for long statements: the load has its own.
        ((self._bar,),) = con.execute("SELECT current_setting('enable_progress_bar')").fetchall()
        con.execute("SET enable_progress_bar = false")
        # Into an empty table, the first file's staged rows become the table
        # (``store.adopt_staged``). The staging table then lives beside the table (a
        # rename stays in its schema); later files stage in a temporary one.
        self._adopting = fresh
        # Until it is adopted that staging table is in the main schema: a transaction
        # keeps a load killed before then from leaving it in the database file.
        self._pending = fresh and not _in_transaction(con)
        if self._pending:
            con.begin()
        self._create_staged(temporary=not fresh)
        self._earlier = EarlierEntries(con)
        self.last = False  # the load's last file: no later file needs its entries
        # Only the pinned sink schema's types are what SQL judges into.
        sql = fast and sink.judged_types and sink.judged_envelope
        self.fast = FastJudge(sink.kept, sink.kinds) if sql else None

    def _create_staged(self, *, temporary: bool) -> None:
        columns = ", ".join(
            f"{quote_identifier(name)} {kind}" for name, kind in self.sink.columns.items()
        )
        self.con.execute(
            f"CREATE OR REPLACE {'TEMP ' if temporary else ''}TABLE {STAGED} "
            f"(kind VARCHAR DEFAULT 'telemetry', {columns}, line VARCHAR)"
        )

    def clear(self) -> None:
        """Empty the staging table: a file's lines (telemetry or not) never reach the next
        file's counts."""
        self.con.execute(f"DELETE FROM {STAGED}")

    def reset(self) -> None:
        """Empty the staging table after DuckDB refused to read a file. Before the first
        file is stored, the refusal aborted the load's transaction: it starts again, as
        it was (nothing was stored, no entries were seen)."""
        if not self._pending:
            self.clear()
            return
        self.con.rollback()
        self.con.begin()
        self._create_staged(temporary=False)
        self._earlier = EarlierEntries(self.con)

    def drop(self) -> None:
        if self._pending:  # the load stopped before any file was stored
            self._pending = False
            self.con.rollback()
        self.con.execute(f"DROP TABLE IF EXISTS {STAGED}")
        self._earlier.drop()
        self.con.execute(f"SET enable_progress_bar = {bool(self._bar)}")

    def commit(self, label: str, loaded: int) -> int:
        """Store the staged telemetry rows in the table; how many were seen before."""
        keyed = (
            f"SELECT {INSERT_ID}, {quote_identifier(TIMESTAMP)} FROM {STAGED} "
            f"WHERE kind = 'telemetry' AND {INSERT_ID} IS NOT NULL "
            f"AND {quote_identifier(TIMESTAMP)} IS NOT NULL"
        )
        repeats = self._earlier.repeats(keyed, last=self.last)
        stored = self._store(label)
        if stored != loaded:
            raise LoadError(f"{label}: stored {stored} of {loaded} telemetry records")
        return repeats

    def _store(self, label: str) -> int:
        """Store the staged telemetry rows; how many. The first file into a fresh table
        is adopted as the table, and staging goes on in a temporary table."""
        if not self._adopting:
            return copy_staged(self.con, self.table, self.sink, label)
        stored = adopt_staged(self.con, self.table, label)
        self._adopting = False
        if self._pending:
            self._pending = False
            self.con.commit()
        self._create_staged(temporary=True)
        return stored


def _in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the caller holds a transaction open on ``con`` (then a process killed
    mid-load loses the load whole). Under autocommit each statement has its own
    transaction id; DuckDB has no direct question for it, and a second BEGIN would
    abort the caller's transaction."""
    ((first,),) = con.execute("SELECT txid_current()").fetchall()
    ((second,),) = con.execute("SELECT txid_current()").fetchall()
    return bool(first == second)
