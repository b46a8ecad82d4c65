"""Running every stage of the check, in order, into one report."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry._files import read_text_or_none
from agent_telemetry.check._beside import run_beside
from agent_telemetry.check._definition import STAGE as DEFINITION_STAGE
from agent_telemetry.check._definition import (
    capacities,
    definition_finding,
    model_load_error,
    reviewed_notices,
)
from agent_telemetry.check._findings import CheckReport, Finding
from agent_telemetry.check._git import GitRefError, lock_at_ref
from agent_telemetry.check._paths import display_path
from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError

LATER_STAGES = ("lock", "compat", "bindings", "generated", "versions")


class CheckUsageError(AgentTelemetryError):
    """The check could not run as asked (bad ref, missing config, unreadable lock): exit 2."""


def _definition_failed(report: CheckReport, findings: list[Finding]) -> CheckReport:
    report.stage(DEFINITION_STAGE, findings)
    for stage in LATER_STAGES:
        report.skip(stage, "the models do not load")
    return report


def run_check(
    config_path: Path | None = None,
    *,
    against: str | None = None,
    lock_path: Path | None = None,
    models_module: str | None = None,
    views: bool = True,
    sql_dir: Path | None = None,
    docs_path: Path | None = None,
) -> CheckReport:
    """Run every stage. Raises CheckUsageError for what is the caller's mistake.

    ``config_path`` (default: the nearest telemetry.toml) is resolved once: its
    ``[catalogue]`` names the models, the lock, and where the committed view SQL and
    data dictionary live; ``lock_path``, ``sql_dir`` and ``docs_path`` override those,
    ``models_module`` the catalogue module (tests check copies of the models with it).

    ``views=False`` leaves out the three view stages (the schema stages alone take a
    fraction of a second; the view stages read SQL back with sqlglot).
    """
    report = CheckReport(against=against)
    if config_path is not None and not config_path.is_file():
        raise CheckUsageError(f"config {config_path} not found (pass --config)")
    try:
        # config imports the package's own models: a model of this package that breaks a
        # definition rule fails right here, and is reported as such.
        from agent_telemetry.config import ConfigError
        from agent_telemetry.project import resolve_project
        from agent_telemetry.schema.catalogue import CatalogueError, load_catalogue
    except SchemaRuleError as exc:
        return _definition_failed(report, [definition_finding(exc)])
    try:
        project = resolve_project(config_path)
    except ConfigError as exc:
        raise CheckUsageError(str(exc)) from None
    try:
        catalogue = project.catalogue if models_module is None else load_catalogue(models_module)
    except SchemaRuleError as exc:
        # A model (or the registry, VersionRuleError) breaks a rule; or a class the
        # definition rules never ran on (a base replaced the hook).
        return _definition_failed(report, [definition_finding(exc)])
    except CatalogueError as exc:
        raise CheckUsageError(f"[catalogue] module: {exc}") from None
    except Exception as exc:  # a syntax error, a model pydantic cannot build: one line
        raise model_load_error(exc) from None
    models, versions = catalogue.events, catalogue.versions
    retired = len(versions) - len(models)
    note = f"{len(models)} events" + (f", {retired} retired version(s)" if retired else "")
    # Its notices come once the base is known: a review that landed there is not repeated.
    report.stage(DEFINITION_STAGE, [], note)
    report.capacity = capacities(models)

    from agent_telemetry.check._schema_stages import (
        COMPAT_STAGE,
        LOCK_STAGE,
        compat_findings,
        known_events,
        lock_drift,
    )
    from agent_telemetry.config import check_exceptions
    from agent_telemetry.schema.lock import (
        LockFormatError,
        SchemaLock,
        build_lock,
        load_lock,
    )

    config = project.config
    # What a hint's command needs to run as printed here: only an override the config
    # does not say (a --config found by no one else, a --lock, --sql-dir or --docs).
    flags = project.command_flags()
    if lock_path is not None:
        flags += f" --lock {display_path(lock_path)}"
    explicit_lock = lock_path is not None
    lock_path = lock_path or project.lock_path
    lock_text = read_text_or_none(lock_path)
    try:
        committed = None if lock_text is None else load_lock(lock_text, str(lock_path))
        specs = catalogue.version_specs()
        current = build_lock(specs)
        report.stage(LOCK_STAGE, lock_drift(current, lock_text, lock_path, flags))

        if against is None:
            base, base_note = committed or SchemaLock(), "against the committed lock"
        elif explicit_lock:
            # --lock names the lock: the same file at the ref is its base.
            try:
                base_text = lock_at_ref(against, lock_path)
            except GitRefError as exc:
                raise CheckUsageError(f"--against: {exc}") from None
            if base_text is None:
                base, base_note = SchemaLock(), f"no lock at {against}: every event is new"
            else:
                base = load_lock(base_text, f"{against}:{lock_path.name}")
                base_note = f"against the lock at {against}"
        else:
            # The base's own config names the base's lock: the change never chooses it.
            from agent_telemetry.check._baseline import read_baseline

            try:
                baseline = read_baseline(against, project)
            except GitRefError as exc:
                raise CheckUsageError(f"--against: {exc}") from None
            base, base_note = baseline.lock, baseline.note
    except LockFormatError as exc:
        raise CheckUsageError(f"{exc} (delete it and run `agent-telemetry lock{flags}`)") from None
    # Against a git ref, what its lock records has landed; without one, every reviewed
    # exception is listed (the committed lock is this change's own).
    report.findings.extend(reviewed_notices(versions, None if against is None else base))
    try:
        # An exception may name an event or field the models dropped: the locks know it.
        check_exceptions(config, known_events(versions, committed, base), str(project.config_path))
    except ConfigError as exc:
        raise CheckUsageError(str(exc)) from None

    findings, report.classification = compat_findings(
        base,
        current,
        config.exceptions,
        models,
        lock_text,
        lock_path,
        versions,
        # A copy of the models under test stands in for this package's own: its hints.
        catalogue.module if models_module is None else None,
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
    from agent_telemetry.views import ViewBuildError

    # Each committed view file is read and parsed once, for the bindings and versions stages.
    files = CommittedViews(sql_dir or project.sql_dir)
    layouts = project.layouts

    def bindings() -> tuple[list[Finding], int]:
        return binding_findings(
            versions.values(),
            committed=files,
            dedupe=config.source.dedupe,
            layouts=layouts,
            config=config,
        )

    def drift() -> list[Finding]:
        extra = "".join(
            f" {flag} {display_path(path)}"
            for flag, path in (("--sql-dir", sql_dir), ("--docs", docs_path))
            if path is not None
        )
        return generated_drift(project, sql_dir, docs_path, specs, flags + extra)

    try:  # independent: the drift stage regenerates every view while bindings reads them
        (found, checked), drifted = run_beside(bindings, drift)
    except ViewBuildError as exc:
        raise CheckUsageError(f"the views cannot be generated: {exc}") from None
    report.stage(BINDINGS_STAGE, found, f"{checked} committed views read back")
    report.stage(GENERATED_STAGE, drifted)
    report.stage(
        VERSIONS_STAGE,
        kept_view_findings(
            current, lock_text, lock_path, committed=files, layouts=layouts, flags=flags
        ),
        f"{len(versions)} event version(s), {retired} retired",
    )
    return report
