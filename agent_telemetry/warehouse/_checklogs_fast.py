"""The fast path of ``check-logs``: the load's SQL judge counts the lines it finds clean.

A file that qualifies for the load's fast path (``_load_fast.qualifies``) is read and
judged by ``_judge_typed`` in DuckDB, as the load judges it. A telemetry line the SQL
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
judgement of the slow path (``_checklogs``): lines SQL leaves to Python, telemetry that
breaks or bends a rule (for its violations, coercions and positions), rejected and
unknown events, retired versions, copies. Plain text, other JSON, blank and oversized
lines are counted in SQL, as the load counts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from agent_telemetry.schema import EventSpec, FieldSpec
from agent_telemetry.schema.envelope import ENVELOPE_KEYS
from agent_telemetry.warehouse._judge import (
    LIFTED_KEYS,
    PAYLOAD_KINDS,
    ValueKind,
    insert_id,
    time_of,
)
from agent_telemetry.warehouse._judge_sql import PYTHON, lit
from agent_telemetry.warehouse._judge_typed import SHAPES, TypedJudge, file_shape
from agent_telemetry.warehouse._load_fast import head, opened, qualifies
from agent_telemetry.warehouse._load_scan import Kind, _record
from agent_telemetry.warehouse._source import Limits, LogInput

CHECKED = "_agent_telemetry_checked"
KEYS = "_agent_telemetry_keys"  # every entry key of the run's files (``prepare``)
COPIED = "_agent_telemetry_copied"  # the keys held by more than one line
# Each line as one VARCHAR, as the load reads it. Not numbered: DuckDB numbers rows as
# they stream by, in one thread, so numbering them would leave the judgement one core.
# The lines Python must see are found again in the file, with their numbers (``rest``).
_READER = (
    "read_csv($path, columns = {'line': 'VARCHAR'}, header = false, auto_detect = false, "
    "delim = '\\x01', quote = '', escape = '', new_line = '\\n')"
)
# Without ``prepare``'s keys, LogEntries with insert ids all go to Python (``Copies``):
# for a file that starts with them, the SQL pass would only add its cost. Which path a
# file takes never changes the report.
_KEYED = b'"insertId"'
_KINDS = {kind.value: kind for kind in Kind}
_SQL_KIND = {"int": "int", "enum": "string", "bool": "bool"}  # FieldSpec -> PAYLOAD_KINDS
_ENVELOPE_KINDS = {
    "event": "string",
    "schema_version": "int",
    "invalid_fields": "strings",
    "unknown_fields": "int",
}


@dataclass(frozen=True, slots=True)
class CleanCounts:
    """What the clean lines of one event showed."""

    lines: int
    version: int  # the event's current version: clean lines are of it
    fields: Mapping[str, tuple[int, list[Any], Any, Any]]  # valid, distinct, min, max


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
        good = f"{value} BETWEEN {spec.ge} AND {spec.le}"
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
        self.con = duckdb.connect()
        # DuckDB draws a progress bar for long statements, on the terminal check-logs
        # reports to (and into CI logs): its report is the only output.
        self.con.execute("SET enable_progress_bar = false")
        judges = {shape: TypedJudge(frozenset(kinds), kinds, shape) for shape in SHAPES}
        self._create = {shape: self._statement(judge) for shape, judge in judges.items()}
        self._keys = {shape: _keys_statement(judge) for shape, judge in judges.items()}
        self.keyed = False  # whether the run's keys are known (``prepare``)
        self.con.execute(
            f"CREATE TEMP TABLE {COPIED} (copied_id VARCHAR, copied_stamp TIMESTAMPTZ)"
        )

    def prepare(self, paths: Sequence[Path], limits: Limits) -> None:
        """Before the run: when a file starts with LogEntries that carry insert ids and
        DuckDB reads every file exactly, the key of every line of every file is known
        first (a copy may be in any file), so that only the lines whose key another
        line shares wait in ``Copies``; otherwise every keyed line does. Only regular
        files are opened here: reading a pipe's first bytes would take them from the
        check."""
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
        for path in paths:
            with LogInput(path, limits=limits) as log:
                if not self._collect_keys(log):
                    return
        self._copied()

    def _collect_keys(self, log: LogInput) -> bool:
        """Record the entry key of every line of ``log`` that is one (SQL's for the lines
        it decides, Python's for the others); False when DuckDB cannot read the file
        exactly (or it changed since ``prepare`` looked)."""
        if not qualifies(log):
            return False
        lines = f"{KEYS}_lines"
        try:
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {lines} AS {self._keys[file_shape(head(log))]}",
                {"path": str(opened(log))},
            )
        except (duckdb.InvalidInputException, duckdb.IOException):
            return False
        self.con.execute(f"INSERT INTO {KEYS} SELECT id, stamp FROM {lines} WHERE id IS NOT NULL")
        python = self.con.execute(f"SELECT line FROM {lines} WHERE line IS NOT NULL").fetchall()
        keys = [_python_key(line.encode("utf-8")) for (line,) in python]
        known = [key for key in keys if key is not None]
        if known:
            self.con.executemany(f"INSERT INTO {KEYS} VALUES (?, ?::TIMESTAMPTZ)", known)
        self.con.execute(f"DROP TABLE {lines}")
        return True

    def _copied(self) -> None:
        """The keys held by more than one line: those lines go to ``Copies``; a line
        whose key is its own is checked in SQL, as a line without a key is."""
        self.con.execute(
            f"INSERT INTO {COPIED} SELECT id, stamp FROM {KEYS} GROUP BY id, stamp "
            "HAVING count(*) > 1"
        )
        self.con.execute(f"DROP TABLE {KEYS}")
        self.keyed = True

    def _statement(self, judge: TypedJudge) -> str:
        """The statement judging a file into the checked table, with ``judge``'s parse."""
        judged = judge.stages(_READER)["judged"]
        telemetry = "kind IN ('entry', 'emitter')"
        cases = " ".join(
            f"WHEN {lit(name)} THEN {self._clean(judge, self.versions[name], spec)}"
            for name, spec in self.specs.items()
        )
        clean = (
            f"{telemetry} AND stamp IS NOT NULL AND {judge.absent('invalid_fields')} "
            f"AND coalesce({judge.value('unknown_fields')} = 0, true) "
            "AND (shape = 'emitter' OR v.insertId IS NULL OR copied_id IS NULL) "
            f"AND coalesce(CASE {judge.value('event')} {cases} ELSE false END, false)"
            if cases
            else "false"
        )
        values = ", ".join(
            f"CASE WHEN clean THEN {judge.value(name)} END AS {_column(i)}"
            for i, (name, _) in enumerate(self.fields)
        )
        kind = f"CASE WHEN clean THEN 'clean' WHEN {telemetry} THEN '{PYTHON}' ELSE kind END"
        # One pass, nothing materialised per line: clean lines fold into one group per
        # event, other decided lines into one per kind, and each line Python must see is
        # a group of its own text (counted: the same line may occur twice).
        judged_lines = (
            f"SELECT {kind} AS kind, CASE WHEN clean THEN {judge.value('event')} END AS event, "
            f"{values}{', ' if values else ''}line "
            f"FROM (SELECT *, coalesce({clean}, false) AS clean FROM (SELECT *, "
            f"CASE WHEN {telemetry} THEN {judge.stamp()} END AS stamp FROM ({judged})) "
            # A key other lines share (one row of COPIED at most: no line is doubled).
            f"LEFT JOIN {COPIED} ON copied_id = v.insertId AND copied_stamp = stamp)"
        )
        aggregates = []
        for i, (name, _) in enumerate(self.fields):
            column = _column(i)
            # What the coverage reads: members and booleans seen, an integer's extremes
            # (a name may be an integer in one event and a set in another).
            kinds = {f.kind for s in self.specs.values() for f in s.fields if f.name == name}
            distinct = f"list(DISTINCT {column})" if kinds - {"int"} else "NULL"
            low, high = (f"min({column})", f"max({column})") if "int" in kinds else ("NULL", "NULL")
            aggregates.append(
                f"count({column}) AS {column}_valid, {distinct} AS {column}_distinct, "
                f"{low} AS {column}_min, {high} AS {column}_max"
            )
        return (
            f"CREATE OR REPLACE TEMP TABLE {CHECKED} AS SELECT kind, event, "
            f"python_line AS line, count(*) AS lines"
            f"{''.join(', ' + a for a in aggregates)} FROM (SELECT *, "
            f"CASE WHEN kind = '{PYTHON}' THEN line END AS python_line FROM ({judged_lines})) "
            "GROUP BY kind, event, python_line"
        )

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
        """Judge the file into the checked table; None when DuckDB cannot read it exactly
        (the file then takes the slow path). Then ``rest(log)``."""
        con = self.con
        if not qualifies(log):
            return None
        first = head(log)
        if _KEYED in first and not self.keyed:
            return None
        try:
            con.execute(self._create[file_shape(first)], {"path": str(opened(log))})
        except (duckdb.InvalidInputException, duckdb.IOException):
            con.execute(f"DROP TABLE IF EXISTS {CHECKED}")
            return None
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
            f"SELECT * EXCLUDE (kind, line) FROM {CHECKED} WHERE kind = 'clean'"
        ).fetchall():
            fields = {
                name: (row[2 + 4 * i], row[3 + 4 * i] or [], row[4 + 4 * i], row[5 + 4 * i])
                for i, (name, _) in enumerate(self.fields)
            }
            counts[row[0]] = CleanCounts(row[1], self.versions[row[0]], fields)
        return counts

    def rest(self, log: LogInput) -> Iterator[tuple[int, bytes]]:
        """The lines of ``log`` the slow path's judgement must see, in file order:
        (number, line). SQL gives their texts and how often each occurs; one read of the
        file, split as DuckDB split it (LF only: a CR makes DuckDB refuse the file),
        numbers them, and stops once every one is found."""
        wanted = {
            line.encode("utf-8"): int(count)
            for line, count in self.con.execute(
                f"SELECT line, lines FROM {CHECKED} WHERE kind = ?", [PYTHON]
            ).fetchall()
        }
        left = sum(wanted.values())
        if not left:
            return
        with opened(log).open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if line in wanted:
                    yield number, line
                    left -= 1
                    if not left:
                        return

    def close(self) -> None:
        self.con.close()


def _keys_statement(judge: TypedJudge) -> str:
    """Over a file: the entry key of each line SQL decided (the insert id and judged
    timestamp of a LogEntry), and the text of each line Python must judge."""
    stamped = (
        f"SELECT *, CASE WHEN kind = 'entry' THEN {judge.stamp()} END AS stamp "
        f"FROM ({judge.stages(_READER)['judged']})"
    )
    return (
        f"SELECT CASE WHEN kind = '{PYTHON}' THEN line END AS line, "
        "CASE WHEN kind = 'entry' THEN v.insertId END AS id, stamp "
        f"FROM ({stamped}) WHERE kind = '{PYTHON}' "
        "OR (kind = 'entry' AND v.insertId IS NOT NULL AND stamp IS NOT NULL)"
    )


def _python_key(line: bytes) -> tuple[str, str] | None:
    """A line's entry key as the slow path reads it (``_checklogs._check_record``)."""
    telemetry = _record(line, 0).telemetry
    if telemetry is None:
        return None
    when, entry_id = time_of(telemetry), insert_id(telemetry)
    return None if when is None or entry_id is None else (entry_id, when)


def _column(number: int) -> str:
    """The checked table's column of a field (a field may be called ``kind`` or ``n``)."""
    return f"field_{number}"
