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
lines it decides, Python's for the rest): a line whose key no other line holds is
checked like a line without one, the others wait in ``Copies``. Otherwise every keyed
line does, as on the slow path.

Every other line goes, in file order and with its line number, through the very
judgement of the slow path (``_checking.check_logs``): lines SQL leaves to Python, telemetry that
breaks or bends a rule (for its violations, coercions and positions), rejected and
unknown events, retired versions, copies. Plain text, other JSON, blank and oversized
lines are counted in SQL, as the load counts them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

from agent_telemetry.schema import EventSpec, FieldSpec
from agent_telemetry.schema.envelope import ENVELOPE_KEYS, SEVERITY
from agent_telemetry.views import on_grid_sql
from agent_telemetry.warehouse._checking.rare import quasi_identifiers
from agent_telemetry.warehouse._judging.python import (
    LIFTED_KEYS,
    PAYLOAD_KINDS,
    ValueKind,
    insert_id,
    time_of,
)
from agent_telemetry.warehouse._judging.sql import PYTHON, lit
from agent_telemetry.warehouse._judging.typed import SHAPES, TypedJudge, file_shape
from agent_telemetry.warehouse._loading.fast import READER, head, opened, qualifies
from agent_telemetry.warehouse._reading.records import Kind, _record
from agent_telemetry.warehouse._reading.source import Limits, LogInput

CHECKED = "_agent_telemetry_checked"
COMBINATIONS = "_agent_telemetry_combinations"  # clean lines per event, day, combination
KEYS = "_agent_telemetry_keys"  # every entry key of the run's files (``prepare``)
LINES = "_agent_telemetry_lines"  # a file's judged lines (``prepare``), numbered by file
COPIED = "_agent_telemetry_copied"  # the keys held by more than one line
# Without ``prepare``'s keys, LogEntries with insert ids all go to Python (``Copies``):
# for a file that starts with them, the SQL pass would only add its cost. Which path a
# file takes never changes the report.
_KEYED = b'"insertId"'
_KINDS = {kind.value: kind for kind in Kind}
_SQL_KIND = {"int": "int", "enum": "string", "bool": "bool"}  # FieldSpec -> PAYLOAD_KINDS
_MASK_BITS = 64  # values a field's mask holds (UBIGINT)


@dataclass(frozen=True, slots=True)
class CleanCounts:
    """What the clean lines of one event showed."""

    lines: int
    version: int  # the event's current version: clean lines are of it
    fields: Mapping[str, tuple[int, list[Any], Any, Any]]  # valid, distinct, min, max
    # Lines per (UTC day, combination of closed-set values): ``_checking.rare``'s counts.
    combinations: Mapping[tuple[str, tuple[Any, ...]], int]


@dataclass(frozen=True, slots=True)
class FileCounts:
    """A file's lines decided in SQL: records by kind (clean telemetry included) and the
    clean lines per event."""

    kinds: Mapping[Kind, int]
    clean: Mapping[str, CleanCounts]


def _field_holds(judge: TypedJudge, spec: FieldSpec) -> str:
    """SQL: the field is absent where allowed, or holds a native, allowed value. Past
    the gate a value is native (a coercion such as "5" or "true" goes to Python)."""
    value = judge.value(spec.name)
    if spec.kind == "enum":
        good = f"{value} IN ({', '.join(lit(m) for m in spec.members)})"
    elif spec.kind == "bool":
        good = "true"
    elif spec.ge is None or spec.le is None:
        good = "false"
    else:
        good = f"{value} BETWEEN {spec.ge} AND {spec.le}{on_grid_sql(value, spec.grid)}"
    absent = "false" if spec.required else "true"
    return f"(CASE WHEN {judge.absent(spec.name)} THEN {absent} ELSE coalesce({good}, false) END)"


def sql_checkable(spec: EventSpec, kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS) -> bool:
    """Whether the SQL judge reads every field of the event as the check reads it."""
    return all(
        kinds.get(f.name) == _SQL_KIND[f.kind]
        and f.name not in LIFTED_KEYS
        and f.name not in ENVELOPE_KEYS
        for f in spec.fields
    )


class FastCheck:
    """Judge files in SQL for ``check-logs``; one per run (the statement is built once)."""

    def __init__(
        self,
        current: Mapping[str, tuple[int, EventSpec]],
        kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS,
    ) -> None:
        """``current``: event name -> (its current version, its spec); ``kinds``: how the
        catalogue's sink reads each payload key (a service's own keys included)."""
        self.versions = {name: version for name, (version, _) in current.items()}
        self.specs = {
            name: spec for name, (_, spec) in current.items() if sql_checkable(spec, kinds)
        }
        self.fields = sorted({f.name: f for s in self.specs.values() for f in s.fields}.items())
        self._seen = {name: Seen.of(name, self.specs.values()) for name, _ in self.fields}
        # Per column: the events whose closed-set value it holds (``_checking.rare``); for other
        # events it is a measure, and no part of a combination.
        self._index = {name: i for i, (name, _) in enumerate(self.fields)}
        self._combinations: dict[str, dict[tuple[str, tuple[Any, ...]], int]] = {}
        self._quasi = {
            i: sorted(e for e, spec in self.specs.items() if name in quasi_identifiers(spec))
            for i, (name, _) in enumerate(self.fields)
        }
        self.con = duckdb.connect()
        # DuckDB draws a progress bar for long statements, on the terminal check-logs
        # reports to (and into CI logs): its report is the only output.
        self.con.execute("SET enable_progress_bar = false")
        # A file judged into a table keeps the file's order: row n + 1 is line n + 1.
        self.con.execute("SET preserve_insertion_order = true")
        judges = {shape: TypedJudge(frozenset(kinds), kinds, shape) for shape in SHAPES}
        self._lines = {shape: self._per_line(judge) for shape, judge in judges.items()}
        self._create = {
            shape: self._aggregate(f"({lines})", "line") for shape, lines in self._lines.items()
        }
        self.keyed = False  # whether the run's keys are known (``prepare``)
        # Files ``prepare`` judged: a file's identity -> the table of its judged lines.
        self._prepared: dict[tuple[int, ...], str] = {}
        self.con.execute(
            f"CREATE TEMP TABLE {COPIED} (copied_id VARCHAR, copied_stamp TIMESTAMPTZ)"
        )

    def prepare(self, paths: Sequence[Path], limits: Limits) -> None:
        """Before the run: when a file starts with LogEntries that carry insert ids and
        DuckDB reads every file exactly, every file is judged first into a table of its
        lines, with the key of each (a copy may be in any file), so that only the lines
        whose key another line shares wait in ``Copies``; otherwise every keyed line
        does. The check then counts from those tables: each file is read and judged
        once. Only regular files are opened here: reading a pipe's first bytes would
        take them from the check."""
        if not all(path.is_file() for path in paths):
            return
        keyed = False
        for path in paths:
            with LogInput(path, limits=limits) as log:
                if not qualifies(log):
                    return
                keyed = keyed or _KEYED in head(log)
        if not keyed:
            return
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {KEYS} (id VARCHAR, stamp TIMESTAMPTZ)")
        for number, path in enumerate(paths):
            with LogInput(path, limits=limits) as log:
                if not self._judge_ahead(log, f"{LINES}_{number}"):
                    self._forget_prepared()
                    return
        self._copied()

    def _judge_ahead(self, log: LogInput, table: str) -> bool:
        """Judge every line of ``log`` into ``table`` (a line's text only when Python must
        judge it: its place is its row) and record the entry key of every line that is
        one (SQL's for the lines it decides, Python's for the others); False when DuckDB
        cannot read the file exactly (or it changed since ``prepare`` looked)."""
        if not qualifies(log):
            return False
        lines = self._lines[file_shape(head(log))]
        try:
            # In file order (DuckDB keeps a file's order when it stores it): row n + 1
            # is line n + 1, blank lines included.
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * REPLACE "
                f"(CASE WHEN kind = '{PYTHON}' THEN line END AS line) FROM ({lines})",
                {"path": str(opened(log))},
            )
        except (duckdb.InvalidInputException, duckdb.IOException):
            return False
        self._prepared[_identity(log)] = table
        self.con.execute(
            f"INSERT INTO {KEYS} SELECT id, stamp FROM {table} "
            "WHERE id IS NOT NULL AND stamp IS NOT NULL"
        )
        python = self.con.execute(f"SELECT line FROM {table} WHERE kind = '{PYTHON}'").fetchall()
        keys = [_python_key(line.encode("utf-8")) for (line,) in python]
        known = [key for key in keys if key is not None]
        if known:
            self.con.executemany(f"INSERT INTO {KEYS} VALUES (?, ?::TIMESTAMPTZ)", known)
        return True

    def _forget_prepared(self) -> None:
        for table in self._prepared.values():
            self.con.execute(f"DROP TABLE IF EXISTS {table}")
        self._prepared.clear()

    def _copied(self) -> None:
        """The keys held by more than one line: those lines go to ``Copies``; a line
        whose key is its own is checked in SQL, as a line without a key is."""
        self.con.execute(
            f"INSERT INTO {COPIED} SELECT id, stamp FROM {KEYS} GROUP BY id, stamp "
            "HAVING count(*) > 1"
        )
        self.con.execute(f"DROP TABLE {KEYS}")
        self.keyed = True

    def _per_line(self, judge: TypedJudge) -> str:
        """Over a file (``READER``, each line as the load reads it), one row per line: its
        judged ``kind``, whether it is ``clean`` when no other line shares its entry key,
        that key (``id``, ``stamp``), and when clean its ``event`` and field values; and
        the ``line`` itself. Not numbered: DuckDB numbers rows as they stream by, in one
        thread, so numbering them would leave the judgement one core (``rest`` finds
        Python's lines again)."""
        judged = judge.stages(READER)["judged"]
        telemetry = "kind IN ('entry', 'emitter')"
        cases = " ".join(
            f"WHEN {lit(name)} THEN {self._clean(judge, self.versions[name], spec)}"
            for name, spec in self.specs.items()
        )
        # An emitter line of another severity than the emitter's goes to Python, which
        # counts it under --strict-types.
        severity = f"coalesce(v.severity = {lit(SEVERITY)}, false)"
        severity_ok = {"entry": "true", "emitter": severity}.get(
            judge.shape, f"(shape <> 'emitter' OR {severity})"
        )
        clean = (
            f"{telemetry} AND stamp IS NOT NULL AND {severity_ok} "
            f"AND {judge.absent('invalid_fields')} "
            # unknown_fields 0 is no line the emitter writes: Python judges it.
            f"AND {judge.value('unknown_fields')} IS NULL "
            f"AND coalesce(CASE {judge.value('event')} {cases} ELSE false END, false)"
            if cases
            else "false"
        )
        values = "".join(
            f", CASE WHEN clean THEN {judge.value(name)} END AS {_column(i)}"
            for i, (name, _) in enumerate(self.fields)
        )
        return (
            f"SELECT kind, clean, CASE WHEN clean THEN {judge.value('event')} END AS event, "
            f"CASE WHEN kind = 'entry' THEN v.insertId END AS id, stamp{values}, line "
            f"FROM (SELECT *, coalesce({clean}, false) AS clean FROM (SELECT *, "
            f"CASE WHEN {telemetry} THEN {judge.stamp()} END AS stamp FROM ({judged})))"
        )

    def _aggregate(self, lines: str, place: str) -> str:
        """The statement counting ``lines`` (``_per_line``'s rows) into the checked table:
        a line is clean when no other line shares its key. One pass, nothing stored per
        line: clean lines fold into one group per event, other decided lines into one per
        kind, and each line Python must see is a group of its own ``place`` (its text,
        counted: the same line may occur twice; or its number)."""
        telemetry = "kind IN ('entry', 'emitter')"
        values = "".join(
            f", CASE WHEN clean THEN {_column(i)} END AS {_column(i)}"
            for i in range(len(self.fields))
        )
        judged_lines = (
            f"SELECT CASE WHEN clean THEN 'clean' WHEN {telemetry} THEN '{PYTHON}' "
            f"ELSE kind END AS kind, CASE WHEN clean THEN event END AS event{values}, "
            "place, stamp FROM (SELECT * REPLACE (clean AND copied_id IS NULL AS clean), "
            f"{place} AS place "
            # A key other lines share (one row of COPIED at most: no line is doubled).
            f"FROM {lines} LEFT JOIN {COPIED} ON copied_id = id AND copied_stamp = stamp)"
        )
        # Clean lines fold by event, UTC day and combination of closed-set values.
        day = f"CASE WHEN kind = 'clean' THEN {_utc_day('stamp')} END AS day"
        quasi = "".join(
            f", CASE WHEN event IN ({', '.join(lit(e) for e in events)}) "
            f"THEN {_column(i)} END AS {_quasi(i)}"
            for i, events in self._quasi.items()
            if events
        )
        aggregates = []
        for i, (name, _) in enumerate(self.fields):
            column = _column(i)
            # What the coverage reads: members and booleans seen, an integer's extremes
            # (a name may be an integer in one event and a set in another).
            kinds = {f.kind for s in self.specs.values() for f in s.fields if f.name == name}
            seen = self._seen[name].aggregate(column)
            low, high = (f"min({column})", f"max({column})") if "int" in kinds else ("NULL", "NULL")
            aggregates.append(
                f"count({column}) AS {column}_valid, {seen} AS {column}_seen, "
                f"{low} AS {column}_min, {high} AS {column}_max"
            )
        groups = ", ".join(["day", *(_quasi(i) for i, events in self._quasi.items() if events)])
        # Two groupings in the one pass: per event for the coverage (as before), and per
        # event, day and combination for ``_checking.rare``; ``_split`` moves the second apart.
        return (
            f"CREATE OR REPLACE TEMP TABLE {CHECKED} AS SELECT kind, event, "
            f"python_place AS place, count(*) AS lines"
            f"{''.join(', ' + a for a in aggregates)}, {groups}, "
            f"grouping(day) = 0 AS by_combination FROM (SELECT *, "
            f"CASE WHEN kind = '{PYTHON}' THEN place END AS python_place, {day}{quasi} "
            f"FROM ({judged_lines})) GROUP BY GROUPING SETS ((kind, event, python_place), "
            f"(kind, event, {groups}))"
        )

    def _split(self) -> None:
        """The combination groups of the checked table into their own (clean lines only),
        leaving the checked table as every other reader knows it."""
        groups = ", ".join(["day", *(_quasi(i) for i, events in self._quasi.items() if events)])
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {COMBINATIONS} AS SELECT event, lines, {groups} "
            f"FROM {CHECKED} WHERE by_combination AND kind = 'clean'"
        )
        self.con.execute(f"DELETE FROM {CHECKED} WHERE by_combination")

    def _clean(self, judge: TypedJudge, version: int, spec: EventSpec) -> str:
        known = ENVELOPE_KEYS | set(spec.field_names)
        # Keys the event does not define hold nothing (a null is an absent key).
        strangers = " AND ".join(
            judge.absent(key)
            for key in judge.top_keys
            if key not in known and key not in judge.kinds
        )
        payload_strangers = [judge.absent(key) for key in judge.kinds if key not in known]
        parts = [
            f"{judge.value('schema_version')} = {version}",
            *(_field_holds(judge, f) for f in spec.fields),
            *payload_strangers,
        ]
        if strangers:
            parts.append(strangers)
        return "(" + " AND ".join(parts) + ")"

    def check(self, log: LogInput) -> FileCounts | None:
        """Judge the file into the checked table (or count the table ``prepare`` judged
        it into); None when DuckDB cannot read it exactly (the file then takes the slow
        path). Then ``rest(log)``."""
        con = self.con
        if not qualifies(log):
            return None
        table = self._prepared.pop(_identity(log), None)
        try:
            if table is not None:
                con.execute(self._aggregate(table, f"{table}.rowid + 1"))
                con.execute(f"DROP TABLE {table}")
            else:
                first = head(log)
                if _KEYED in first and not self.keyed:
                    return None
                con.execute(self._create[file_shape(first)], {"path": str(opened(log))})
        except (duckdb.InvalidInputException, duckdb.IOException):
            con.execute(f"DROP TABLE IF EXISTS {CHECKED}")
            return None
        self._split()
        self._combinations = self._read_combinations()
        con.execute(f"DROP TABLE {COMBINATIONS}")  # read: nothing is kept per file
        rows = con.execute(
            f"SELECT kind, sum(lines) FROM {CHECKED} WHERE kind NOT IN ('blank', '{PYTHON}') "
            "GROUP BY kind"
        ).fetchall()
        kinds = {
            (Kind.TELEMETRY if kind == "clean" else _KINDS[kind]): int(count)
            for kind, count in rows
        }
        return FileCounts(kinds, self._clean_counts(con) if Kind.TELEMETRY in kinds else {})

    def _clean_counts(self, con: duckdb.DuckDBPyConnection) -> dict[str, CleanCounts]:
        counts = {}
        for row in con.execute(
            f"SELECT * EXCLUDE (kind, place) FROM {CHECKED} WHERE kind = 'clean'"
        ).fetchall():
            fields = {
                name: (
                    row[2 + 4 * i],
                    self._seen[name].values(row[3 + 4 * i]),
                    row[4 + 4 * i],
                    row[5 + 4 * i],
                )
                for i, (name, _) in enumerate(self.fields)
            }
            combinations = self._combinations.get(row[0], {})
            counts[row[0]] = CleanCounts(row[1], self.versions[row[0]], fields, combinations)
        return counts

    def _read_combinations(self) -> dict[str, dict[tuple[str, tuple[Any, ...]], int]]:
        """Per event: lines per (UTC day, combination), the key ``_checking.rare`` counts by."""
        quasi = [i for i, events in self._quasi.items() if events]
        out: dict[str, dict[tuple[str, tuple[Any, ...]], int]] = {}
        for event, lines, day, *values in self.con.execute(
            f"SELECT * FROM {COMBINATIONS}"
        ).fetchall():
            by_column = dict(zip(quasi, values, strict=True))
            names = quasi_identifiers(self.specs[event])
            key = (self.versions[event], *(by_column[self._index[n]] for n in names))
            out.setdefault(event, {})[(_iso_day(day), key)] = int(lines)
        return out

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
        self._forget_prepared()
        self.con.close()


@dataclass(frozen=True, slots=True)
class Seen:
    """How the clean lines' distinct values of one field are gathered: as bits of a mask
    over the members (or booleans) the field can hold. ``list(DISTINCT ...)`` would cost
    more than the judgement: DuckDB gives each such aggregate its own grouping of a
    materialised copy of every line. A set too large for one mask falls back to it."""

    values_of: tuple[Any, ...]  # the value of each bit; empty: integers only, nothing kept
    by_list: bool = False  # more values than bits: the distinct values themselves

    @classmethod
    def of(cls, name: str, specs: Iterable[EventSpec]) -> Seen:
        fields = [f for spec in specs for f in spec.fields if f.name == name]
        members = sorted({m for f in fields if f.kind == "enum" for m in f.members})
        booleans = (False, True) if any(f.kind == "bool" for f in fields) else ()
        if len(members) > _MASK_BITS:
            return cls((), by_list=True)
        return cls((*members, *booleans))

    def aggregate(self, column: str) -> str:
        if self.by_list:
            return f"list(DISTINCT {column})"
        if not self.values_of:
            return "NULL"
        positions = ", ".join(
            lit(v) if isinstance(v, str) else str(v).lower() for v in self.values_of
        )
        # A clean value is one of them: its position is never NULL.
        return f"bit_or(1::UBIGINT << (list_position([{positions}], {column}) - 1))"

    def values(self, seen: Any) -> list[Any]:
        if self.by_list:
            return list(seen or [])
        mask = int(seen or 0)
        return [value for bit, value in enumerate(self.values_of) if mask >> bit & 1]


def _python_key(line: bytes) -> tuple[str, str] | None:
    """A line's entry key as the slow path reads it (``_checking.check_logs._check_record``)."""
    telemetry = _record(line, 0).telemetry
    if telemetry is None:
        return None
    when, entry_id = time_of(telemetry), insert_id(telemetry)
    return None if when is None or entry_id is None else (entry_id, when)


def _identity(log: LogInput) -> tuple[int, ...]:
    """The file ``log`` has open, as it is now: another file, or the same one since
    changed, is not the file ``prepare`` judged."""
    stat = os.fstat(log.fileno())
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


_DAY_US = 86_400_000_000


def _utc_day(stamp: str) -> str:
    """Days since 1970-01-01 (UTC) of a TIMESTAMPTZ, floored (independent of the
    session's time zone)."""
    us, day = f"epoch_us({stamp})", _DAY_US
    return f"(({us} - (({us} % {day}) + {day}) % {day}) // {day})"


def _iso_day(days: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=int(days))).isoformat()


def _quasi(number: int) -> str:
    return f"quasi_{number}"


def _column(number: int) -> str:
    """The checked table's column of a field (a field may be called ``kind`` or ``n``)."""
    return f"field_{number}"
