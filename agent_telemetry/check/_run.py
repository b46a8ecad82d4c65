"""Running every stage of the check, in order, into one report."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.check._definition import STAGE as DEFINITION_STAGE
from agent_telemetry.check._definition import load_models
from agent_telemetry.check._findings import CheckReport
from agent_telemetry.check._git import GitRefError, lock_at_ref

LATER_STAGES = ("lock", "compat", "bindings", "generated", "versions")


class CheckUsageError(Exception):
    """The check could not run as asked (bad ref, missing config, unreadable lock): exit 2."""


def run_check(
    config_path: Path,
    *,
    against: str | None = None,
    lock_path: Path | None = None,
    models_module: str = "agent_telemetry.schema",
    views: bool = True,
) -> CheckReport:
    """Run every stage. Raises CheckUsageError for what is the caller's mistake.

    ``views=False`` leaves out the three view stages (the schema stages alone take a
    fraction of a second; the view stages read SQL back with sqlglot).
    """
    report = CheckReport(against=against)
    if not config_path.is_file():
        raise CheckUsageError(f"config {config_path} not found (pass --config)")

    models, findings = load_models(models_module)
    report.stage(DEFINITION_STAGE, findings, "" if models is None else f"{len(models)} events")
    if models is None:
        for stage in LATER_STAGES:
            report.skip(stage, "the models do not load")
        return report

    # Only now: these import agent_telemetry.schema, which has just loaded.
    from agent_telemetry.check._schema_stages import (
        COMPAT_STAGE,
        LOCK_STAGE,
        compat_findings,
        lock_drift,
    )
    from agent_telemetry.schema import (
        LOCK_PATH,
        LockFormatError,
        SchemaLock,
        build_lock,
        event_spec,
        load_lock,
    )
    from agent_telemetry.views import ConfigError, load_config

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise CheckUsageError(str(exc)) from None
    lock_path = lock_path or LOCK_PATH
    lock_text = lock_path.read_text(encoding="utf-8") if lock_path.is_file() else None
    try:
        committed = None if lock_text is None else load_lock(lock_text, str(lock_path))
        current = build_lock((event_spec(m) for m in models.values()), previous=committed)
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

    findings, report.classification = compat_findings(
        base, current, config.exceptions, models, lock_text, lock_path
    )
    report.stage(COMPAT_STAGE, findings, base_note)

    if not views:
        for stage in LATER_STAGES[2:]:
            report.skip(stage, "not asked for")
        return report

    from agent_telemetry.check._view_stages import (
        BINDINGS_STAGE,
        GENERATED_STAGE,
        VERSIONS_STAGE,
        binding_findings,
        generated_drift,
        kept_view_findings,
    )
    from agent_telemetry.views import ViewBuildError, generate_views

    found, checked = binding_findings(models)
    report.stage(BINDINGS_STAGE, found, f"{checked} committed views read back")
    retired = sum(
        1 for name, version, _ in current.versions() if version < models[name].schema_version
    )
    try:
        report.stage(GENERATED_STAGE, generated_drift(config_path))
        # Generating again costs a second; only a bumped event has older views to look for.
        generated = generate_views(config) if retired else ()
    except ViewBuildError as exc:
        raise CheckUsageError(f"the views cannot be generated: {exc}") from None
    report.stage(
        VERSIONS_STAGE,
        kept_view_findings(current, models, generated, lock_text, lock_path),
        f"{retired} older version(s) locked",
    )
    return report
