"""``check-logs``: real log lines checked against the models, field by field.

Per event: lines valid and invalid, violations by field and rule (never the values),
and coverage: which enum members, which bound extremes and which booleans were seen.
Unknown events and the emitter's ``telemetry_rejected`` lines are counted; plain text,
other JSON, truncated and hostile records are counted and never fatal. Pure Python over
the event specs, streaming: no DuckDB.

It reads files with the reader ``preview`` loads through (``_reading.records``) and judges
values with the same judgement (``_judging.python``): a line is telemetry here exactly when
``preview`` loads it, and a value is valid here exactly when the views show it. Values
the views accept in another JSON type than the emitter writes (``"5"``, ``5.0``,
``"true"``: BigQuery read-backs, Cloud Logging's doubles) are counted as coercions;
``strict_types`` (``--strict-types``, for a service's own output) makes them violations.
A LogEntry exported twice (same insertId and timestamp) is checked once, as the views
count it once, and counted as a duplicate.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_telemetry.schema import EVENT_VERSIONS, EventSpec, FieldSpec, TelemetryEvent, event_spec
from agent_telemetry.schema.coverage import Coverage, Observed, coverage
from agent_telemetry.schema.envelope import (
    ENVELOPE_KEYS,
    NOT_A_FIELD,
    REJECTED_EVENT,
    SEVERITY,
    UNKNOWN_FLAG,
    RejectReason,
)
from agent_telemetry.schema.versions import current_models
from agent_telemetry.warehouse._checking.rare import (
    DEFAULT_K,
    RareCombinations,
    day_of,
    quasi_identifiers,
)
from agent_telemetry.warehouse._judging.copies import Copies, copy_order
from agent_telemetry.warehouse._judging.python import (
    INVALID,
    Coercion,
    Reading,
    SinkPayload,
    ValueKind,
    insert_id,
    is_emitter_time,
    payload_kinds,
    read_bool,
    read_int,
    read_string,
    read_strings,
    time_of,
)
from agent_telemetry.warehouse._loading.progress import LoadProgress
from agent_telemetry.warehouse._reading.inputs import Repeat, distinct_inputs, size_on_disk
from agent_telemetry.warehouse._reading.records import (
    Kind,
    Record,
    Shape,
    Telemetry,
    _record,
    iter_records,
)
from agent_telemetry.warehouse._reading.source import DEFAULT_LIMITS, Limits, LogInput

if TYPE_CHECKING:
    from agent_telemetry.warehouse._checking.fast import FastCheck, FileCounts

OTHER_NAME = "<name not shown>"  # an unknown event, or a reason the emitter never writes
UNKNOWN_KEY = "<unknown key>"  # key names are never shown: a key can be personal data
_REASONS = frozenset(reason.value for reason in RejectReason)
MAX_POSITIONS = 5
PROGRESS_EVERY = 8192  # records between progress updates
_READ_FIELD = {"int": read_int, "enum": read_string, "bool": read_bool}

# The rules a line is checked against: rule ID -> what it means (the docs list these).
LINE_RULES: Mapping[str, str] = {
    "required": "a required field is missing or null",
    "type": (
        "the JSON type does not match the field (a string that is no number for an int, "
        "a non-integral number, a number for a closed set, ...); with --strict-types also "
        "a number or boolean written as a string, or an integer written as a double"
    ),
    "member": "a string outside the field's closed set",
    "range": "an integer outside the field's bounds",
    "precision": (
        "an integer with more significant digits than the field's precision (the emitter "
        "rounds: 1234567 at 3 digits is written 1230000)"
    ),
    "dropped": "named in invalid_fields: the emitter rejected and dropped the value",
    "unknown_keys": "keys the event does not define (unknown_fields > 0, or keys present)",
    "schema_version": "schema_version is no registered version of the event",
    "time": (
        "the line's time (a LogEntry's timestamp) is missing or not a timestamp; with "
        "--strict-types, an emitter line's time is not RFC 3339 UTC with microseconds and Z"
    ),
    "envelope": (
        "invalid_fields or unknown_fields malformed; with --strict-types also an emitter "
        "line's severity other than the emitter's (INFO), an empty invalid_fields or one "
        "naming a field twice, an unknown_fields other than the flag 1"
    ),
}
# How coercions read in reports.
COERCIONS: Mapping[Coercion, str] = {
    Coercion.NUMBER_AS_STRING: "numbers arrived as strings",
    Coercion.BOOLEAN_AS_STRING: "booleans arrived as strings",
    Coercion.INTEGRAL_DOUBLE: "integers arrived as doubles (1.0)",
}


def _safe_name(name: object, allowed: frozenset[str]) -> str:
    """``name`` when it is one of the closed set ``allowed``, else ``OTHER_NAME``: any
    other string in a log line could be personal data."""
    return name if isinstance(name, str) and name in allowed else OTHER_NAME


@dataclass(slots=True)
class FieldCoverage:
    """What valid values of one field were seen, and on how many lines."""

    spec: FieldSpec
    members: set[str] = field(default_factory=set)
    booleans: set[bool] = field(default_factory=set)
    low: int | None = None
    high: int | None = None
    valid: int = 0  # lines with a valid value: the view's non-null count

    def see(self, value: Any) -> None:
        self.valid += 1
        if self.spec.kind == "enum":
            self.members.add(value)
        elif self.spec.kind == "bool":
            self.booleans.add(value)
        else:
            self.low = value if self.low is None else min(self.low, value)
            self.high = value if self.high is None else max(self.high, value)

    def as_dict(self) -> dict[str, Any]:
        spec = self.spec
        if spec.kind == "enum":
            return {
                "kind": "enum",
                "valid_lines": self.valid,
                "seen": [m for m in spec.members if m in self.members],
                "not_seen": [m for m in spec.members if m not in self.members],
            }
        if spec.kind == "bool":
            return {
                "kind": "bool",
                "valid_lines": self.valid,
                "seen": [b for b in (False, True) if b in self.booleans],
                "not_seen": [b for b in (False, True) if b not in self.booleans],
            }
        return {
            "kind": "int",
            "valid_lines": self.valid,
            "ge": spec.ge,
            "le": spec.le,
            "min_seen": self.low,
            "max_seen": self.high,
            "ge_seen": self.low is not None and self.low == spec.ge,
            "le_seen": self.high is not None and self.high == spec.le,
        }


@dataclass(slots=True)
class EventCheck:
    name: str
    spec: EventSpec  # the current version: unknown versions are judged by it
    lines: int = 0
    valid: int = 0
    violations: Counter[tuple[str, str]] = field(default_factory=Counter)
    coverage: dict[str, FieldCoverage] = field(default_factory=dict)
    versions: Counter[int] = field(default_factory=Counter)  # lines per registered version

    @property
    def invalid(self) -> int:
        return self.lines - self.valid

    def as_dict(self) -> dict[str, Any]:
        by_field: dict[str, dict[str, int]] = {}
        for (name, rule), count in sorted(self.violations.items()):
            by_field.setdefault(name, {})[rule] = count
        return {
            "lines": self.lines,
            "valid": self.valid,
            "invalid": self.invalid,
            "versions": {str(v): n for v, n in sorted(self.versions.items())},
            "violations": by_field,
            "coverage": {name: cov.as_dict() for name, cov in self.coverage.items()},
        }


@dataclass(slots=True)
class FileCheck:
    path: str
    layout: str
    encoding: str = "utf-8"
    records: int = 0
    telemetry: int = 0
    non_telemetry: int = 0
    truncated: int = 0
    oversized: int = 0
    too_deep: int = 0
    undecodable: int = 0
    duplicates: int = 0  # telemetry LogEntries seen before: checked once
    truncated_at: list[int] = field(default_factory=list)  # first few positions
    stopped: str | None = None  # why the read stopped at a limit (a gzip bomb?)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "layout": self.layout,
            "encoding": self.encoding,
            "records": self.records,
            "telemetry": self.telemetry,
            "non_telemetry": self.non_telemetry,
            "truncated": self.truncated,
            "truncated_at": list(self.truncated_at),
            "oversized": self.oversized,
            "too_deep": self.too_deep,
            "undecodable": self.undecodable,
            "duplicates": self.duplicates,
            "stopped": self.stopped,
        }


@dataclass(slots=True)
class LogCheckReport:
    files: list[FileCheck] = field(default_factory=list)
    events: dict[str, EventCheck] = field(default_factory=dict)
    unknown_events: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    coerced: Counter[Coercion] = field(default_factory=Counter)  # lines, per coercion
    strict_types: bool = False
    repeated: tuple[Repeat, ...] = ()  # inputs naming a file already read: read once
    # Copies of an entry (same insertId and timestamp) whose payload differs from the
    # copy kept: both cannot be true, so the log is not clean.
    conflicting: int = 0
    versions: Mapping[tuple[str, int], type[TelemetryEvent]] = field(
        default_factory=lambda: EVENT_VERSIONS
    )
    # Valid lines per event, UTC day and combination of closed-set values (``_checking.rare``).
    rare: RareCombinations = field(default_factory=RareCombinations)

    @property
    def violations(self) -> int:
        """Lines that fail the check: invalid lines, unknown events, rejected lines."""
        invalid = sum(check.invalid for check in self.events.values())
        return invalid + sum(self.unknown_events.values()) + sum(self.rejected.values())

    @property
    def telemetry(self) -> int:
        return sum(f.telemetry for f in self.files)

    @property
    def duplicates(self) -> int:
        return sum(f.duplicates for f in self.files)

    @property
    def hostile(self) -> int:
        return sum(f.oversized + f.too_deep + f.undecodable for f in self.files)

    @property
    def stopped(self) -> tuple[FileCheck, ...]:
        """Files whose read stopped at a decompression limit: not read to the end."""
        return tuple(f for f in self.files if f.stopped is not None)

    @property
    def clean(self) -> bool:
        """No violations, at least one telemetry line (none at all is not clean: the
        wrong file, or a service that writes no telemetry), no two copies of an entry
        that disagree, and every file read to its end (a file stopped at a limit was
        not checked whole)."""
        return (
            self.violations == 0
            and self.telemetry > 0
            and not self.conflicting
            and not self.stopped
        )

    def observed(self) -> Observed:
        """What the valid lines showed, for ``schema.coverage``."""
        seen = Observed()
        for name, check in self.events.items():
            if check.valid:
                seen.events.add(name)
            for field_name, cov in check.coverage.items():
                if cov.valid:
                    seen.fields.add((name, field_name))
                seen.members.update((name, field_name, m) for m in cov.members)
        return seen

    def coverage(self) -> Coverage:
        """Which events, fields and enum members of the catalogue no valid line showed."""
        return coverage((check.spec for check in self.events.values()), self.observed())

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "telemetry_lines": self.telemetry,
            "duplicates": self.duplicates,
            "conflicting_duplicates": self.conflicting,
            "repeated": [{"path": r.path, "same_as": r.first} for r in self.repeated],
            "stopped": len(self.stopped),
            "strict_types": self.strict_types,
            "coerced": {c.value: self.coerced[c] for c in Coercion},
            "files": [f.as_dict() for f in self.files],
            "events": {name: check.as_dict() for name, check in self.events.items()},
            "unknown_events": dict(sorted(self.unknown_events.items())),
            "rejected": dict(sorted(self.rejected.items())),
            "rare_combinations": self.rare.as_dict(),
            "rules": dict(LINE_RULES),
        }


def check_logs(
    paths: Iterable[str | Path],
    versions: Mapping[tuple[str, int], type[TelemetryEvent]] = EVENT_VERSIONS,
    *,
    strict_types: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    progress: LoadProgress | None = None,
    fast: bool = True,
    sql_from: int | None = None,
    k: int = DEFAULT_K,
) -> LogCheckReport:
    """Check every telemetry line of every file; never raises for what a line holds
    (``LoadError`` for a file that cannot be read or decoded at all). A file named
    twice is read once (``repeated`` lists the repeats); a gzip file that passes
    ``limits`` is checked up to there and reported as stopped.

    ``versions`` is the registry lines are checked against: a line is judged by the
    model of its own ``schema_version``, so logs from before a version bump stay clean.
    ``fast``: the SQL path (``_checking.fast``) for files DuckDB reads exactly, when the
    files hold ``sql_from`` bytes or more (default ``_loading.fast.SQL_FROM``); off, or
    below, Python checks every line (the tests hold the two equal). ``k``: a combination
    of closed-set values fewer than ``k`` valid lines of a day share is rare (``_checking.rare``).
    """
    report = LogCheckReport(
        versions=versions, strict_types=strict_types, rare=RareCombinations(k=k)
    )
    for model in current_models(versions).values():
        spec = event_spec(model)
        report.events[spec.name] = EventCheck(
            spec.name, spec, coverage={f.name: FieldCoverage(f) for f in spec.fields}
        )
    files, report.repeated = distinct_inputs(Path(p) for p in paths)
    # Across files, as the views see every file in one table: the copies of each entry
    # wait until every file is read, then the one the views keep is checked.
    # Ranked by the catalogue's own sink columns, a service's own fields included, as its
    # views rank them.
    specs = tuple(event_spec(model) for model in versions.values())
    kinds = payload_kinds(specs)
    copies = Copies(SinkPayload(frozenset(kinds), kinds), copy_order(specs))
    fast_check = _fast_check(report, kinds, files, sql_from) if fast and files else None
    try:
        if fast_check is not None:
            fast_check.prepare(files, limits)
        for path in files:
            with LogInput(path, limits=limits) as log:
                if progress is not None:
                    progress.start_file(path.name, size_on_disk(path))
                counts = fast_check.check(log) if fast_check is not None else None
                if fast_check is None or counts is None:
                    _check_file(report, log, copies, progress)
                else:
                    if progress is not None:  # DuckDB read the whole file
                        progress.update(os.fstat(log.fileno()).st_size)
                    _check_fast(report, log, counts, fast_check.rest(log), copies)
                if progress is not None:
                    progress.finish_file()
        for telemetry in copies.kept():
            _check_payload(report, telemetry, time_of(telemetry))
        report.conflicting = copies.conflicting
    finally:
        copies.close()
        if fast_check is not None:
            fast_check.close()
    return report


def _fast_check(
    report: LogCheckReport,
    kinds: Mapping[str, ValueKind],
    files: Sequence[Path],
    sql_from: int | None,
) -> FastCheck | None:
    """The SQL path, when DuckDB is installed (the ``cli`` extra: check-logs runs without
    it, on the slow path) and the files hold enough bytes for it to pay (``sql_from``,
    default ``_loading.fast.SQL_FROM``)."""
    try:
        from agent_telemetry.warehouse._checking.fast import FastCheck
        from agent_telemetry.warehouse._loading.fast import SQL_FROM, worth_sql
    except ImportError:
        return None
    if not worth_sql(files, SQL_FROM if sql_from is None else sql_from):
        return None
    newest: dict[str, int] = {}  # event name -> its current version
    for name, version in report.versions:
        newest[name] = max(version, newest.get(name, version))
    current = {name: (newest[name], check.spec) for name, check in report.events.items()}
    return FastCheck(current, kinds)


def _check_fast(
    report: LogCheckReport,
    log: LogInput,
    counts: FileCounts,
    rest: Iterable[tuple[int, bytes]],
    copies: Copies,
) -> None:
    """A file judged in SQL: count its clean lines, then check the rest as the slow path."""
    checked = FileCheck(log.label, log.layout, str(log.encoding))
    report.files.append(checked)
    for kind, count in counts.kinds.items():
        checked.records += count
        if kind is Kind.TELEMETRY:
            checked.telemetry += count
        elif kind is Kind.OVERSIZED:
            checked.oversized += count
        else:  # SQL decides no other kind than text and other JSON
            checked.non_telemetry += count
    for name, clean in counts.clean.items():
        check = report.events[name]
        check.lines += clean.lines
        check.valid += clean.lines
        check.versions[clean.version] += clean.lines
        for (day, combination), lines in clean.combinations.items():
            report.rare.see(name, day, combination, lines)
        for field_name, cov in check.coverage.items():
            valid, distinct, low, high = clean.fields[field_name]
            cov.valid += valid
            seen = [value for value in distinct if value is not None]
            cov.members.update(v for v in seen if isinstance(v, str))
            cov.booleans.update(v for v in seen if isinstance(v, bool))
            if low is not None:
                cov.low = low if cov.low is None else min(cov.low, low)
                cov.high = high if cov.high is None else max(cov.high, high)
    for number, line in rest:
        _check_record(report, checked, _record(line, number), copies)
    checked.stopped = log.stopped


def _check_file(
    report: LogCheckReport, log: LogInput, copies: Copies, progress: LoadProgress | None
) -> None:
    checked = FileCheck(log.label, log.layout, str(log.encoding))
    report.files.append(checked)
    for number, record in enumerate(iter_records(log)):
        if progress is not None and not number % PROGRESS_EVERY:
            progress.update(log.consumed)
        _check_record(report, checked, record, copies)
    checked.stopped = log.stopped


def _check_record(
    report: LogCheckReport, checked: FileCheck, record: Record, copies: Copies
) -> None:
    kind = record.kind
    if kind is not Kind.BLANK:
        checked.records += record.count
        telemetry = record.telemetry
        if telemetry is not None:
            checked.telemetry += 1
            when = time_of(telemetry)
            entry_id = insert_id(telemetry)
            if entry_id is None or when is None:  # no entry key: never a copy
                _check_payload(report, telemetry, when)
            elif copies.add(hash((entry_id, when)), telemetry):
                checked.duplicates += 1
        elif kind is Kind.MALFORMED:
            checked.truncated += 1
            if len(checked.truncated_at) < MAX_POSITIONS:
                checked.truncated_at.append(record.position)
        elif kind is Kind.OVERSIZED:
            checked.oversized += 1
        elif kind is Kind.TOO_DEEP:
            checked.too_deep += 1
        elif kind is Kind.UNDECODABLE:
            checked.undecodable += 1
        else:
            checked.non_telemetry += record.count


def _check_payload(report: LogCheckReport, telemetry: Telemetry, when: str | None) -> None:
    payload = telemetry.payload
    name = payload.get("event")
    if name == REJECTED_EVENT:
        report.rejected[_safe_name(payload.get("reason"), _REASONS)] += 1
        return
    check = report.events.get(name) if isinstance(name, str) else None
    if check is None:
        # Never the name: an event the models do not define is any string a service wrote.
        report.unknown_events[OTHER_NAME] += 1
        return
    check.lines += 1
    line = _Line(report.strict_types)
    problems = _problems(check, telemetry, when, report.versions, line)
    report.coerced.update(line.coerced)
    if problems:
        check.violations.update(problems)
    else:
        check.valid += 1
        if when is not None and line.spec is not None:
            found = line.values
            combination = (line.version, *(found.get(n) for n in quasi_identifiers(line.spec)))
            report.rare.see(check.name, day_of(when), combination)


class _Line:
    """One line's readings: coercions seen, and whether they count as violations."""

    __slots__ = ("coerced", "spec", "strict", "values", "version")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.coerced: set[Coercion] = set()
        # The line's version, its spec and valid values (for ``_checking.rare``), once judged.
        self.spec: EventSpec | None = None
        self.version: int | None = None
        self.values: dict[str, Any] = {}

    def accept(self, reading: Reading) -> Any:
        """The value read, or INVALID (also for a coercion under --strict-types)."""
        value, how = reading
        if how is not None and value is not INVALID:
            if self.strict:
                return INVALID
            self.coerced.add(how)
        return value


def _problems(
    check: EventCheck,
    telemetry: Telemetry,
    when: str | None,
    versions: Mapping[tuple[str, int], type[TelemetryEvent]],
    line: _Line,
) -> set[tuple[str, str]]:
    payload = telemetry.payload
    problems: set[tuple[str, str]] = set()
    version = line.accept(read_int(payload.get("schema_version")))
    # A line of a retired version is checked against the model it was written with.
    model = versions.get((check.name, version)) if version is not INVALID else None
    if model is None:
        problems.add(("schema_version", "schema_version"))
    else:
        check.versions[version] += 1
    spec = event_spec(model) if model is not None else check.spec
    line.spec, line.version = spec, version
    if when is None or (
        line.strict and telemetry.shape is Shape.EMITTER and not is_emitter_time(telemetry.time)
    ):
        problems.add(("time", "time"))
    if line.strict and telemetry.shape is Shape.EMITTER and payload.get("severity") != SEVERITY:
        problems.add(("severity", "envelope"))
    dropped = payload.get("invalid_fields")
    names: list[str] = []
    if dropped is not None:
        read = read_strings(dropped)[0]
        if read is INVALID or len(read) != len(dropped):
            problems.add(("invalid_fields", "envelope"))
        else:
            names = read
    for name in names:
        problems.add((name if name in spec.field_names else NOT_A_FIELD, "dropped"))
    unknown_raw = payload.get("unknown_fields")
    if unknown_raw is not None:
        unknown = line.accept(read_int(unknown_raw))
        if unknown is INVALID or unknown < 0:
            problems.add(("unknown_fields", "envelope"))
        elif unknown:
            problems.add(("unknown_fields", "unknown_keys"))
    if line.strict and telemetry.shape is Shape.EMITTER:
        problems |= _envelope_as_written(payload)
    known = ENVELOPE_KEYS | set(spec.field_names)
    # A key holding null is absent: a sink table's row read back has every column.
    if any(key not in known and value is not None for key, value in payload.items()):
        problems.add((UNKNOWN_KEY, "unknown_keys"))
    for field_spec in spec.fields:
        raw = payload.get(field_spec.name)
        if raw is None:
            if field_spec.required and field_spec.name not in names:
                problems.add((field_spec.name, "required"))
            continue
        value = line.accept(_READ_FIELD[field_spec.kind](raw))
        rule = _rule_broken(field_spec, value)
        if rule is not None:
            problems.add((field_spec.name, rule))
            continue
        line.values[field_spec.name] = value
        if model is not None and field_spec.name in check.coverage:
            # Coverage is of the current version, over lines the views show.
            check.coverage[field_spec.name].see(value)
    return problems


def _envelope_as_written(payload: dict[str, Any]) -> set[tuple[str, str]]:
    """--strict-types on an emitter line: the envelope's tail as the emitter writes it
    (``invalid_fields`` only when it names something, each name once; ``unknown_fields``
    only as the flag). Read as lines from before issue 36 hold them, otherwise."""
    problems = set()
    dropped = payload.get("invalid_fields")
    if type(dropped) is list and (not dropped or len(set(map(repr, dropped))) < len(dropped)):
        problems.add(("invalid_fields", "envelope"))
    unknown = payload.get("unknown_fields")
    if unknown is not None and not (type(unknown) is int and unknown == UNKNOWN_FLAG):
        problems.add(("unknown_fields", "envelope"))
    return problems


def _rule_broken(spec: FieldSpec, value: object) -> str | None:
    if value is INVALID:
        return "type"
    if spec.allows(value):
        return None
    if spec.kind == "enum":
        return "member"
    inside = isinstance(value, int) and spec.ge is not None and spec.le is not None
    return "precision" if inside and spec.ge <= value <= spec.le else "range"  # type: ignore[operator]
