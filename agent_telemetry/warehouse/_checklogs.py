"""``check-logs``: real log lines checked against the models, field by field.

Per event: lines valid and invalid, violations by field and rule (never the values),
and coverage: which enum members, which bound extremes and which booleans were seen.
Unknown events and the emitter's ``telemetry_rejected`` lines are counted; plain text,
other JSON and truncated lines are counted and never fatal. Pure Python over the event
specs, streaming: no DuckDB, so it checks exactly what the models say.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_telemetry.schema import EVENT_VERSIONS, EventSpec, FieldSpec, TelemetryEvent, event_spec
from agent_telemetry.schema.envelope import ENVELOPE_KEYS, NOT_A_FIELD, REJECTED_EVENT, RejectReason
from agent_telemetry.schema.versions import current_models
from agent_telemetry.warehouse._load_scan import Kind, iter_records, sniff, spool

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
OTHER_NAME = "<name not shown>"  # an unknown event, or a reason the emitter never writes
UNKNOWN_KEY = "<unknown key>"  # key names are never shown: a key can be personal data
_REASONS = frozenset(reason.value for reason in RejectReason)
MAX_POSITIONS = 5

# The rules a line is checked against: rule ID -> what it means (the docs list these).
LINE_RULES: Mapping[str, str] = {
    "required": "a required field is missing or null",
    "type": "the JSON type does not match the field (string for an int, float, bool, ...)",
    "member": "a string outside the field's closed set",
    "range": "an integer outside the field's bounds",
    "dropped": "named in invalid_fields: the emitter rejected and dropped the value",
    "unknown_keys": "keys the event does not define (unknown_fields > 0, or keys present)",
    "schema_version": "schema_version is no registered version of the event",
    "time": "time is not RFC 3339 UTC with microseconds and Z",
    "envelope": "invalid_fields or unknown_fields malformed",
}


def _safe_name(name: object, allowed: frozenset[str]) -> str:
    """``name`` when it is one of the closed set ``allowed``, else ``OTHER_NAME``: any
    other string in a log line could be personal data."""
    return name if isinstance(name, str) and name in allowed else OTHER_NAME


@dataclass(slots=True)
class FieldCoverage:
    """What valid values of one field were seen."""

    spec: FieldSpec
    members: set[str] = field(default_factory=set)
    booleans: set[bool] = field(default_factory=set)
    low: int | None = None
    high: int | None = None

    def see(self, value: Any) -> None:
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
                "seen": [m for m in spec.members if m in self.members],
                "not_seen": [m for m in spec.members if m not in self.members],
            }
        if spec.kind == "bool":
            return {
                "kind": "bool",
                "seen": [b for b in (False, True) if b in self.booleans],
                "not_seen": [b for b in (False, True) if b not in self.booleans],
            }
        return {
            "kind": "int",
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
            "violations": by_field,
            "coverage": {name: cov.as_dict() for name, cov in self.coverage.items()},
        }


@dataclass(slots=True)
class FileCheck:
    path: str
    layout: str
    records: int = 0
    telemetry: int = 0
    non_telemetry: int = 0
    truncated: int = 0
    truncated_at: list[int] = field(default_factory=list)  # first few positions

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "layout": self.layout,
            "records": self.records,
            "telemetry": self.telemetry,
            "non_telemetry": self.non_telemetry,
            "truncated": self.truncated,
            "truncated_at": list(self.truncated_at),
        }


@dataclass(slots=True)
class LogCheckReport:
    files: list[FileCheck] = field(default_factory=list)
    events: dict[str, EventCheck] = field(default_factory=dict)
    unknown_events: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    versions: Mapping[tuple[str, int], type[TelemetryEvent]] = field(
        default_factory=lambda: EVENT_VERSIONS
    )

    @property
    def violations(self) -> int:
        """Lines that fail the check: invalid lines, unknown events, rejected lines."""
        invalid = sum(check.invalid for check in self.events.values())
        return invalid + sum(self.unknown_events.values()) + sum(self.rejected.values())

    @property
    def telemetry(self) -> int:
        return sum(f.telemetry for f in self.files)

    @property
    def clean(self) -> bool:
        """No violations, and at least one telemetry line (none at all is not clean: the
        wrong file, or a service that writes no telemetry)."""
        return self.violations == 0 and self.telemetry > 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "telemetry_lines": self.telemetry,
            "files": [f.as_dict() for f in self.files],
            "events": {name: check.as_dict() for name, check in self.events.items()},
            "unknown_events": dict(sorted(self.unknown_events.items())),
            "rejected": dict(sorted(self.rejected.items())),
            "rules": dict(LINE_RULES),
        }


def check_logs(
    paths: Iterable[str | Path],
    versions: Mapping[tuple[str, int], type[TelemetryEvent]] = EVENT_VERSIONS,
) -> LogCheckReport:
    """Check every telemetry line of every file; never raises for what a line holds.

    ``versions`` is the registry lines are checked against: a line is judged by the
    model of its own ``schema_version``, so logs from before a version bump stay clean.
    """
    report = LogCheckReport(versions=versions)
    for model in current_models(versions).values():
        spec = event_spec(model)
        report.events[spec.name] = EventCheck(
            spec.name, spec, coverage={f.name: FieldCoverage(f) for f in spec.fields}
        )
    with tempfile.TemporaryDirectory(prefix="agent-telemetry-") as spool_dir:
        for number, raw_path in enumerate(paths):
            path = Path(raw_path)
            # A pipe can be read once; sniffing and reading need it twice.
            source = path if path.is_file() else spool(path, Path(spool_dir) / str(number))
            _check_file(report, path, source)
    return report


def _check_file(report: LogCheckReport, path: Path, source: Path) -> None:
    layout = sniff(source).layout
    checked = FileCheck(str(path), layout)
    report.files.append(checked)
    for record in iter_records(source, layout):
        if record.kind is Kind.BLANK:
            continue
        checked.records += 1
        if record.kind is Kind.MALFORMED:
            checked.truncated += 1
            if len(checked.truncated_at) < MAX_POSITIONS:
                checked.truncated_at.append(record.position)
        elif record.kind in (Kind.TEXT, Kind.OTHER_JSON):
            checked.non_telemetry += 1
        else:
            checked.telemetry += 1
            value = record.value
            assert isinstance(value, dict)
            payload = value["jsonPayload"] if record.kind is Kind.ENTRY else value
            _check_payload(report, payload, lifted=record.kind is Kind.ENTRY)


def _check_payload(report: LogCheckReport, payload: dict[str, Any], *, lifted: bool) -> None:
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
    problems = _problems(check, payload, report.versions, lifted=lifted)
    if problems:
        check.violations.update(problems)
    else:
        check.valid += 1


def _problems(
    check: EventCheck,
    payload: dict[str, Any],
    versions: Mapping[tuple[str, int], type[TelemetryEvent]],
    *,
    lifted: bool,
) -> set[tuple[str, str]]:
    problems: set[tuple[str, str]] = set()
    version = payload.get("schema_version")
    # A line of a retired version is checked against the model it was written with.
    model = versions.get((check.name, version)) if type(version) is int else None
    if model is None:
        problems.add(("schema_version", "schema_version"))
    spec = event_spec(model) if model is not None else check.spec
    # In a LogEntry, Cloud Logging has already lifted time into the entry's timestamp.
    if not lifted and not _valid_time(payload.get("time")):
        problems.add(("time", "time"))
    dropped = payload.get("invalid_fields", [])
    if not isinstance(dropped, list) or not all(isinstance(d, str) for d in dropped):
        problems.add(("invalid_fields", "envelope"))
        dropped = []
    for name in dropped:
        problems.add((name if name in spec.field_names else NOT_A_FIELD, "dropped"))
    unknown = payload.get("unknown_fields", 0)
    if type(unknown) is not int or unknown < 0:
        problems.add(("unknown_fields", "envelope"))
    elif unknown:
        problems.add(("unknown_fields", "unknown_keys"))
    known = ENVELOPE_KEYS | set(spec.field_names)
    if any(key not in known for key in payload):
        problems.add((UNKNOWN_KEY, "unknown_keys"))
    for field_spec in spec.fields:
        value = payload.get(field_spec.name)
        if value is None:
            if field_spec.required and field_spec.name not in dropped:
                problems.add((field_spec.name, "required"))
            continue
        rule = _rule_broken(field_spec, value)
        if rule is None:
            if field_spec.name in check.coverage:  # coverage is of the current version
                check.coverage[field_spec.name].see(value)
        else:
            problems.add((field_spec.name, rule))
    return problems


def _rule_broken(spec: FieldSpec, value: object) -> str | None:
    if spec.allows(value):
        return None
    if spec.kind == "enum":
        return "member" if isinstance(value, str) else "type"
    if spec.kind == "int" and type(value) is int:
        return "range"
    return "type"


def _valid_time(value: object) -> bool:
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True
