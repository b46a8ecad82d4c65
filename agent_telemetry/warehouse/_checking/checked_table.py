"""The checked table of ``check-logs``' SQL path: its statements, and how it reads back.

Built once per run from the events' current specs (those whose every field the SQL judge
reads as the check reads it, ``sql_checkable``): the statement that judges each line of
a file and says whether it is *clean* (``per_line``, over ``_judging.typed``'s judge),
the one aggregate that folds clean lines into one row per event and each line Python
must see into one row per place (``aggregate``), and the reading back of a file's counts:
the coverage of the clean lines (``clean_counts``: members and booleans as bits of a
mask, ``Seen``; an integer's extremes) and their combinations of closed-set values per
UTC day (``split``, ``read_combinations``) for ``_checking.rare``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import duckdb

from agent_telemetry.schema import EventSpec, FieldSpec
from agent_telemetry.schema.envelope import ENVELOPE_KEYS, SEVERITY
from agent_telemetry.views import on_grid_sql
from agent_telemetry.warehouse._checking.keys_ahead import COPIED
from agent_telemetry.warehouse._checking.rare import quasi_identifiers
from agent_telemetry.warehouse._judging.python import LIFTED_KEYS, PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._judging.sql import PYTHON, lit
from agent_telemetry.warehouse._judging.typed import TypedJudge
from agent_telemetry.warehouse._loading.fast import READER

CHECKED = "_agent_telemetry_checked"
COMBINATIONS = "_agent_telemetry_combinations"  # clean lines per event, day, combination
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


class CheckedTable:
    """The checked table's statements for one run, and its rows read back."""

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
        # Per column: the events whose closed-set value it holds (``_checking.rare``); for
        # other events it is a measure, and no part of a combination.
        self._index = {name: i for i, (name, _) in enumerate(self.fields)}
        self._quasi = {
            i: sorted(e for e, spec in self.specs.items() if name in quasi_identifiers(spec))
            for i, (name, _) in enumerate(self.fields)
        }

    def per_line(self, judge: TypedJudge) -> str:
        """Over a file (``READER``, each line as the load reads it), one row per line: its
        judged ``kind``, whether it is ``clean`` when no other line shares its entry key,
        that key (``id``, ``stamp``), and when clean its ``event`` and field values; and
        the ``line`` itself. Not numbered: DuckDB numbers rows as they stream by, in one
        thread, so numbering them would leave the judgement one core (``FastCheck.rest`` finds
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

    def aggregate(self, lines: str, place: str) -> str:
        """The statement counting ``lines`` (``per_line``'s rows) into the checked table:
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
        # event, day and combination for ``_checking.rare``; ``split`` moves the second apart.
        return (
            f"CREATE OR REPLACE TEMP TABLE {CHECKED} AS SELECT kind, event, "
            f"python_place AS place, count(*) AS lines"
            f"{''.join(', ' + a for a in aggregates)}, {groups}, "
            f"grouping(day) = 0 AS by_combination FROM (SELECT *, "
            f"CASE WHEN kind = '{PYTHON}' THEN place END AS python_place, {day}{quasi} "
            f"FROM ({judged_lines})) GROUP BY GROUPING SETS ((kind, event, python_place), "
            f"(kind, event, {groups}))"
        )

    def split(self, con: duckdb.DuckDBPyConnection) -> None:
        """The combination groups of the checked table into their own (clean lines only),
        leaving the checked table as every other reader knows it."""
        groups = ", ".join(["day", *(_quasi(i) for i, events in self._quasi.items() if events)])
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {COMBINATIONS} AS SELECT event, lines, {groups} "
            f"FROM {CHECKED} WHERE by_combination AND kind = 'clean'"
        )
        con.execute(f"DELETE FROM {CHECKED} WHERE by_combination")

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

    def clean_counts(
        self,
        con: duckdb.DuckDBPyConnection,
        combinations_of: Mapping[str, dict[tuple[str, tuple[Any, ...]], int]],
    ) -> dict[str, CleanCounts]:
        """Per event, what its clean lines showed (``combinations_of``: ``read_combinations``)."""
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
            combinations = combinations_of.get(row[0], {})
            counts[row[0]] = CleanCounts(row[1], self.versions[row[0]], fields, combinations)
        return counts

    def read_combinations(
        self, con: duckdb.DuckDBPyConnection
    ) -> dict[str, dict[tuple[str, tuple[Any, ...]], int]]:
        """Per event: lines per (UTC day, combination), the key ``_checking.rare`` counts by."""
        quasi = [i for i, events in self._quasi.items() if events]
        out: dict[str, dict[tuple[str, tuple[Any, ...]], int]] = {}
        for event, lines, day, *values in con.execute(f"SELECT * FROM {COMBINATIONS}").fetchall():
            by_column = dict(zip(quasi, values, strict=True))
            names = quasi_identifiers(self.specs[event])
            key = (self.versions[event], *(by_column[self._index[n]] for n in names))
            out.setdefault(event, {})[(_iso_day(day), key)] = int(lines)
        return out


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
