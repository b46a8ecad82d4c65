"""Running every stage of the check, in order, into one report."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.check._beside import run_beside
from agent_telemetry.check._definition import STAGE as DEFINITION_STAGE
from agent_telemetry.check._definition import (
    capacities,
    definition_finding,
    load_models,
    load_versions,
    reviewed_notices,
)
from agent_telemetry.check._findings import CheckReport, Finding
from agent_telemetry.check._git import GitRefError, lock_at_ref
from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError

LATER_STAGES = ("lock", "compat", "bindings", "generated", "versions")


class CheckUsageError(AgentTelemetryError):
    """The check could not run as asked (bad ref, missing config, unreadable lock): exit 2."""


def run_check(
    config_path: Path,
    *,
    against: str | None = None,
    lock_path: Path | None = None,
    models_module: str = "agent_telemetry.schema",
    views: bool = True,
    sql_dir: Path | None = None,
    docs_path: Path | None = None,
) -> CheckReport:
    """Run every stage. Raises CheckUsageError for what is the caller's mistake.

    ``views=False`` leaves out the three view stages (the schema stages alone take a
    fraction of a second; the view stages read SQL back with sqlglot).

    ``models_module`` provides ``EVENTS`` (current models) and ``EVENT_VERSIONS`` (every
    version; without it, the current models only); every stage works from that registry.
    ``sql_dir`` and ``docs_path`` are the committed generated files (default: the
    package's ``generated`` folder and ``docs/telemetry.md`` beside the config).
    """
    report = CheckReport(against=against)
    if not config_path.is_file():
        raise CheckUsageError(f"config {config_path} not found (pass --config)")

    models, findings = load_models(models_module)
    if models is None:
        report.stage(DEFINITION_STAGE, findings)
        for stage in LATER_STAGES:
            report.skip(stage, "the models do not load")
        return report
    try:
        versions = load_versions(models_module, models)
        notices = reviewed_notices(versions)
    except SchemaRuleError as exc:
        # A class the definition rules never ran on (a base replaced the hook).
        report.stage(DEFINITION_STAGE, [definition_finding(exc)])
        for stage in LATER_STAGES:
            report.skip(stage, "the models do not load")
        return report
    retired = len(versions) - len(models)
    note = f"{len(models)} events" + (f", {retired} retired version(s)" if retired else "")
    report.stage(DEFINITION_STAGE, findings + notices, note)
    report.capacity = capacities(models)

    # Only now: these import agent_telemetry.schema, which has just loaded.
    from agent_telemetry.check._schema_stages import (
        COMPAT_STAGE,
        LOCK_STAGE,
        compat_findings,
        known_events,
        lock_drift,
    )
    from agent_telemetry.config import ConfigError, check_exceptions, load_config
    from agent_telemetry.schema.lock import (
        LOCK_PATH,
        LockFormatError,
        SchemaLock,
        build_lock,
        load_lock,
    )
    from agent_telemetry.schema.versions import registry_specs

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise CheckUsageError(str(exc)) from None
    lock_path = lock_path or LOCK_PATH
    lock_text = lock_path.read_text(encoding="utf-8") if lock_path.is_file() else None
    try:
        committed = None if lock_text is None else load_lock(lock_text, str(lock_path))
        specs = registry_specs(versions)
        current = build_lock(specs)
        report.stage(LOCK_STAGE, lock_drift(current, lock_text, lock_path))

        if against is None:
            base, base_note = committed or SchemaLock(), "against the committed lock"
        else:
            try:
                base_text = lock_at_ref(against, lock_path)
            except GitRefError as exc:
                raise CheckUsageError(f"--against: {exc}") from None
            if base_text is None:
                base, base_note = SchemaLock(), f"no lock at {against}: every event is new"
            else:
                base = load_lock(base_text, f"{against}:{lock_path.name}")
                base_note = f"against the lock at {against}"
    except LockFormatError as exc:
        raise CheckUsageError(f"{exc} (delete it and run `agent-telemetry lock`)") from None
    try:
        # An exception may name an event or field the models dropped: the locks know it.
        check_exceptions(config, known_events(versions, committed, base), str(config_path))
    except ConfigError as exc:
        raise CheckUsageError(str(exc)) from None

    findings, report.classification = compat_findings(
        base, current, config.exceptions, models, lock_text, lock_path, versions
    )
    report.stage(COMPAT_STAGE, findings, base_note)

    if not views:
        for stage in LATER_STAGES[2:]:
            report.skip(stage, "not asked for")
        return report

    from agent_telemetry.views import payload_fields

    try:
        payload_fields(specs)
    except ValueError as exc:
        # Two versions (or events) give one sink column two types: no view can be built.
        # The compat stage reports it as SINK_COLUMN_SAME_TYPE, unless it was excepted.
        if not report.errors:
            report.findings.append(Finding(COMPAT_STAGE, "SINK_COLUMN_SAME_TYPE", str(exc)))
        for stage in LATER_STAGES[2:]:
            report.skip(stage, "a sink column has two types")
        return report

    from agent_telemetry.check._view_stages import (
        BINDINGS_STAGE,
        GENERATED_STAGE,
        VERSIONS_STAGE,
        CommittedViews,
        binding_findings,
        generated_drift,
        kept_view_findings,
    )
    from agent_telemetry.views import GENERATED_DIR, ViewBuildError

    # Each committed view file is read and parsed once, for the bindings and versions stages.
    files = CommittedViews(sql_dir or GENERATED_DIR)

    def bindings() -> tuple[list[Finding], int]:
        return binding_findings(versions.values(), committed=files, dedupe=config.source.dedupe)

    def drift() -> list[Finding]:
        return generated_drift(config_path, sql_dir, docs_path, specs)

    try:  # independent: the drift stage regenerates every view while bindings reads them
        (found, checked), drifted = run_beside(bindings, drift)
    except ViewBuildError as exc:
        raise CheckUsageError(f"the views cannot be generated: {exc}") from None
    report.stage(BINDINGS_STAGE, found, f"{checked} committed views read back")
    report.stage(GENERATED_STAGE, drifted)
    report.stage(
        VERSIONS_STAGE,
        kept_view_findings(current, lock_text, lock_path, committed=files),
        f"{len(versions)} event version(s), {retired} retired",
    )
    return report
