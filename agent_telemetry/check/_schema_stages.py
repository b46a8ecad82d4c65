"""Stages 2 and 3: the schema lock is up to date, and the changes since the base lock
are additions, new versions or reviewed exceptions."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path

from agent_telemetry.check._findings import Finding, Severity
from agent_telemetry.check._locate import (
    Location,
    lock_location,
    model_location,
    module_line,
)
from agent_telemetry.check._paths import display_path
from agent_telemetry.schema import TelemetryEvent, event_spec
from agent_telemetry.schema.compat import (
    Change,
    CompatException,
    apply_exceptions,
    classify_changes,
    compare,
)
from agent_telemetry.schema.lock import SchemaLock, dump_lock
from agent_telemetry.schema.versions import Registry
from agent_telemetry.views import view_name

LOCK_STAGE = "lock"
COMPAT_STAGE = "compat"


def lock_drift(
    current: SchemaLock, lock_text: str | None, lock_path: Path, flags: str = ""
) -> list[Finding]:
    """LOCK_DRIFT when the committed lock is not exactly what ``agent-telemetry lock`` writes.

    ``flags``: what the hint's command needs to run as printed (``--config PATH``)."""
    expected = dump_lock(current)
    if lock_text == expected:
        return []
    shown = display_path(lock_path)
    if lock_text is None:
        message = f"{shown} is missing; run `agent-telemetry lock{flags}` and commit it"
        return [Finding(LOCK_STAGE, "LOCK_DRIFT", message, file=shown)]
    old, new = lock_text.splitlines(), expected.splitlines()
    line = next(
        (i + 1 for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)) + 1,
    )
    message = (
        f"the lock does not match the models (first difference at line {line}); "
        f"run `agent-telemetry lock{flags}` and commit it"
    )
    return [Finding(LOCK_STAGE, "LOCK_DRIFT", message, file=shown, line=min(line, len(old) or 1))]


def known_events(versions: Registry, *locks: SchemaLock | None) -> dict[str, frozenset[str]]:
    """Every event name the models, their registered versions or the ``locks`` have, with
    every field name it has had: what an ``[[exceptions]]`` entry may name."""
    known: dict[str, set[str]] = {}
    for (name, _), model in versions.items():
        known.setdefault(name, set()).update(event_spec(model).field_names)
    for lock in locks:
        for name, _, locked in () if lock is None else lock.versions():
            known.setdefault(name, set()).update(locked.field_names)
    return {name: frozenset(fields) for name, fields in known.items()}


RETIRED_HOME = "RETIRED (agent_telemetry/schema/retired.py)"


def _retired_home(module: str | None) -> str:
    """Where a retired version is listed: this package's RETIRED, or a service
    catalogue's EVENT_VERSIONS."""
    if module is None or module == "agent_telemetry.schema":
        return RETIRED_HOME
    return f"EVENT_VERSIONS of {module}"


def _hint(
    change: Change,
    models: Mapping[str, type[TelemetryEvent]],
    versions: Registry,
    retired_home: str = RETIRED_HOME,
) -> str:
    exception = (
        f'a reviewed [[exceptions]] entry (rule = "{change.rule}", event = "{change.event}"'
        + (f', field = "{change.field}"' if change.field else "")
        + ', reason = "...")'
    )
    model = models.get(change.event)
    if change.rule == "CAPACITY_GROWTH":
        owner = model.__name__ if model is not None else f"the {change.event} model"
        return (
            f"Fix: record a new data review on {owner}: data_reviews = (DataReview("
            'reference="...", reason="...", bits=<the new capacity or more>, '
            f'event="{change.event}", schema_version={change.version}),); '
            "or bring the capacity back down."
        )
    if change.rule == "SINK_COLUMN_SAME_TYPE":
        return f"Fix: give the field a new name, or add {exception}."
    if model is not None and change.version == model.schema_version:
        new = change.version + 1
        return (
            f"Fix: bump {model.__name__}.schema_version to {new} and keep version "
            f"{change.version} as a retired class, a renamed copy listed in {retired_home}: view "
            f"{view_name(change.event, new)} is added and "
            f"{view_name(change.event, change.version)} kept; or add {exception}."
        )
    if model is None:
        return f"Fix: keep the model (services may still emit it), or add {exception}."
    retired = versions.get((change.event, change.version))
    if retired is not None:
        return (
            f"Fix: a retired version is frozen: restore {retired.__name__} as locked, "
            f"or add {exception}."
        )
    if change.version < model.schema_version:
        return (
            f"Fix: keep version {change.version}'s class (schema_version = {change.version}), "
            f"listed in {retired_home}: its view stays; or add {exception}."
        )
    return f"Fix: restore the model of version {change.version}, or add {exception}."


def _location(
    change: Change,
    models: Mapping[str, type[TelemetryEvent]],
    versions: Registry,
    lock_text: str | None,
    lock_path: Path,
) -> Location:
    model = versions.get((change.event, change.version))
    if model is not None:
        in_model = change.field is not None and change.field in model.model_fields
        located = model_location(model, change.field if in_model else None)
        if located[0] is not None:
            return located
    found = lock_location(lock_text, lock_path, change.event, change.version, change.field)
    if found is not None:
        return found
    # A deleted event has neither a model nor (after a relock) a lock entry: point at
    # the catalogue it was removed from.
    for some_model in models.values():
        module = inspect.getmodule(some_model)
        if module is not None:
            return module_line(module, "EVENTS")
    return display_path(lock_path), None


def compat_findings(
    base: SchemaLock,
    current: SchemaLock,
    exceptions: tuple[CompatException, ...],
    models: Mapping[str, type[TelemetryEvent]],
    lock_text: str | None,
    lock_path: Path,
    versions: Registry | None = None,
    catalogue_module: str | None = None,
) -> tuple[list[Finding], dict[str, str]]:
    """Findings for every change from ``base`` to ``current``, and each event's class.

    ``models`` are the current models, ``versions`` every registered version (default:
    just ``models``): a change is annotated on the class of its version when there is one.
    """
    registry: Registry = (
        {(m.event_name, m.schema_version): m for m in models.values()}
        if versions is None
        else versions
    )
    changes = compare(base, current)
    outcome = apply_exceptions(changes, exceptions)
    findings: list[Finding] = []

    def finding(change: Change, severity: Severity, message: str) -> Finding:
        file, line = _location(change, models, registry, lock_text, lock_path)
        return Finding(
            COMPAT_STAGE,
            change.rule,
            message,
            severity,
            change.event,
            change.field,
            change.version,
            file,
            line,
        )

    for change in outcome.breaking:
        hint = _hint(change, models, registry, _retired_home(catalogue_module))
        findings.append(finding(change, "error", f"{change.detail}. {hint}"))
    for change, exception in outcome.excepted:
        findings.append(
            finding(change, "notice", f"excepted: {change.detail} (reason: {exception.reason})")
        )
    for change in outcome.additions:
        findings.append(finding(change, "notice", f"addition: {change.detail}"))
    for exception in outcome.unused_exceptions:
        subject = f"{exception.event}.{exception.field}" if exception.field else exception.event
        findings.append(
            Finding(
                COMPAT_STAGE,
                "EXCEPTION_UNUSED",
                f"exception {exception.rule} for {subject} matches no change "
                "(keep it until the base has the change, then delete it)",
                "warning",
                exception.event,
                exception.field,
            )
        )
    events = sorted({n for n, _, _ in base.versions()} | {n for n, _, _ in current.versions()})
    return findings, {event: classify_changes(changes, event) for event in events}
