"""The fast path of ``check-logs``: the load's SQL judge counts the lines it finds clean.

A file that qualifies for the load's fast path (``_loading.fast.qualifies``) is read and
judged by ``_judging.typed`` in DuckDB, as the load judges it. A telemetry line the SQL
judge decided is *clean* when the check could find nothing to report on it: a known
event at its current version, a timestamp, no ``invalid_fields``, no ``unknown_fields``
above 0, no key the event does not define, every required field present, and every
value in the JSON type the emitter writes (no coercion: past the gate, none is left)
and inside its field's set or bounds. Clean lines are only counted, per event, with
the coverage they show (members, booleans, extremes), in the same statement that
judges them: one aggregate over the file, grouped so that clean lines fold into one
row per event and each line Python must see into one row per text (nothing is stored
per clean line).

A LogEntry with an ``insertId`` may have copies in any file, which wait in ``Copies``
until every file is read. When every input is a plain file DuckDB reads exactly and one
starts with such entries, ``prepare`` reads every file's entry keys first (SQL's for the
lines it decides, Python's for the rest; ``keys_ahead``): a line whose key no other line
holds is checked like a line without one, the others wait in ``Copies``. Otherwise every
keyed line does, as on the slow path. The statements and the reading back of their
counts are ``checked_table``'s; this module runs them, file by file.

Every other line goes, in file order and with its line number, through the very
judgement of the slow path (``_checking.check_logs``): lines SQL leaves to Python, telemetry that
breaks or bends a rule (for its violations, coercions and positions), rejected and
unknown events, retired versions, copies. Plain text, other JSON, blank and oversized
lines are counted in SQL, as the load counts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent_telemetry.schema import EventSpec
from agent_telemetry.warehouse._checking.checked_table import (
    CHECKED,
    COMBINATIONS,
    CheckedTable,
    CleanCounts,
)
from agent_telemetry.warehouse._checking.keys_ahead import KEYED, KeysAhead
from agent_telemetry.warehouse._judging.python import PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._judging.sql import PYTHON
from agent_telemetry.warehouse._judging.typed import SHAPES, TypedJudge, file_shape
from agent_telemetry.warehouse._loading.fast import head, opened, qualifies
from agent_telemetry.warehouse._reading.records import Kind
from agent_telemetry.warehouse._reading.source import Limits, LogInput

_KINDS = {kind.value: kind for kind in Kind}


@dataclass(frozen=True, slots=True)
class FileCounts:
    """A file's lines decided in SQL: records by kind (clean telemetry included) and the
    clean lines per event."""

    kinds: Mapping[Kind, int]
    clean: Mapping[str, CleanCounts]


class FastCheck:
    """Judge files in SQL for ``check-logs``; one per run (the statement is built once)."""

    def __init__(
        self,
        current: Mapping[str, tuple[int, EventSpec]],
        kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS,
    ) -> None:
        """``current``: event name -> (its current version, its spec); ``kinds``: how the
        catalogue's sink reads each payload key (a service's own keys included)."""
        self._checked = CheckedTable(current, kinds)
        self.con = duckdb.connect()
        # DuckDB draws a progress bar for long statements, on the terminal check-logs
        # reports to (and into CI logs): its report is the only output.
        self.con.execute("SET enable_progress_bar = false")
        # A file judged into a table keeps the file's order: row n + 1 is line n + 1.
        self.con.execute("SET preserve_insertion_order = true")
        judges = {shape: TypedJudge(frozenset(kinds), kinds, shape) for shape in SHAPES}
        self._lines = {shape: self._checked.per_line(judge) for shape, judge in judges.items()}
        self._create = {
            shape: self._checked.aggregate(f"({lines})", "line")
            for shape, lines in self._lines.items()
        }
        self._ahead = KeysAhead(self.con, self._lines)

    def prepare(self, paths: Sequence[Path], limits: Limits) -> None:
        """Before the run, judge every file's entry keys when that pays
        (``KeysAhead.prepare``)."""
        self._ahead.prepare(paths, limits)

    @property
    def keyed(self) -> bool:
        """Whether the run's entry keys are known (``prepare``)."""
        return self._ahead.keyed

    def check(self, log: LogInput) -> FileCounts | None:
        """Judge the file into the checked table (or count the table ``prepare`` judged
        it into); None when DuckDB cannot read it exactly (the file then takes the slow
        path). Then ``rest(log)``."""
        con = self.con
        if not qualifies(log):
            return None
        table = self._ahead.take(log)
        try:
            if table is not None:
                con.execute(self._checked.aggregate(table, f"{table}.rowid + 1"))
                con.execute(f"DROP TABLE {table}")
            else:
                first = head(log)
                if KEYED in first and not self.keyed:
                    return None
                con.execute(self._create[file_shape(first)], {"path": str(opened(log))})
        except (duckdb.InvalidInputException, duckdb.IOException):
            con.execute(f"DROP TABLE IF EXISTS {CHECKED}")
            return None
        self._checked.split(con)
        combinations = self._checked.read_combinations(con)
        con.execute(f"DROP TABLE {COMBINATIONS}")  # read: nothing is kept per file
        rows = con.execute(
            f"SELECT kind, sum(lines) FROM {CHECKED} WHERE kind NOT IN ('blank', '{PYTHON}') "
            "GROUP BY kind"
        ).fetchall()
        kinds = {
            (Kind.TELEMETRY if kind == "clean" else _KINDS[kind]): int(count)
            for kind, count in rows
        }
        return FileCounts(
            kinds,
            self._checked.clean_counts(con, combinations) if Kind.TELEMETRY in kinds else {},
        )

    def rest(self, log: LogInput) -> Iterator[tuple[int, bytes]]:
        """The lines of ``log`` the slow path's judgement must see, in file order:
        (number, line). SQL gives their numbers, or their texts and how often each
        occurs; one read of the file, split as DuckDB split it (LF only: a CR makes
        DuckDB refuse the file), numbers them, and stops once every one is found."""
        wanted = {
            (place.encode("utf-8") if isinstance(place, str) else place): int(count)
            for place, count in self.con.execute(
                f"SELECT place, lines FROM {CHECKED} WHERE kind = ?", [PYTHON]
            ).fetchall()
        }
        left = sum(wanted.values())
        if not left:
            return
        by_number = isinstance(next(iter(wanted)), int)  # a file ``prepare`` judged
        with opened(log).open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if (number if by_number else line) in wanted:
                    yield number, line
                    left -= 1
                    if not left:
                        return

    def close(self) -> None:
        self._ahead.forget()
        self.con.close()
