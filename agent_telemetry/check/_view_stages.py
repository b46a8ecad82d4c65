"""Stages 4 to 6: the view SQL binds every field, the generated files are current, and a
bumped event still has a view for each older locked version."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from agent_telemetry.check._findings import Finding
from agent_telemetry.check._locate import lock_location
from agent_telemetry.check._paths import display_path
from agent_telemetry.schema import SchemaLock, TelemetryEvent, event_spec
from agent_telemetry.views import (
    GENERATED_DIR,
    LAYOUTS,
    BuildResult,
    ViewDefinition,
    binding_violations,
    build,
    sql_path,
)

BINDINGS_STAGE = "bindings"
GENERATED_STAGE = "generated"
VERSIONS_STAGE = "versions"


def _column_line(sql: str, column: str) -> int | None:
    """The line that outputs ``column`` (``... AS column``), else its first mention."""
    lines = sql.splitlines()
    alias = re.compile(rf"\bAS\s+`?{re.escape(column)}`?\s*,?\s*$", re.IGNORECASE)
    mention = re.compile(rf"\b{re.escape(column)}\b")
    for pattern in (alias, mention):
        found = [i + 1 for i, line in enumerate(lines) if pattern.search(line)]
        if found:
            return found[-1] if pattern is alias else found[0]
    return None


def binding_findings(
    models: Mapping[str, type[TelemetryEvent]], sql_dir: Path = GENERATED_DIR
) -> tuple[list[Finding], int]:
    """VIEW_BINDING for every column of a committed event view that is not bound to its
    field, read back from the SQL itself. Returns the findings and the views checked."""
    findings: list[Finding] = []
    checked = 0
    for layout in LAYOUTS:
        for model in models.values():
            spec = event_spec(model)
            path = sql_path(sql_dir, layout, spec.name)
            if not path.is_file():
                continue  # a missing file is the drift stage's finding
            sql = path.read_text(encoding="utf-8")
            checked += 1
            for problem in binding_violations(sql, spec, layout, spec.name):
                column = None if problem.column == "*" else problem.column
                findings.append(
                    Finding(
                        BINDINGS_STAGE,
                        "VIEW_BINDING",
                        f"{layout} view: {problem.problem}",
                        event=spec.name,
                        field=column,
                        file=display_path(path),
                        line=_column_line(sql, column) if column else 1,
                    )
                )
    return findings, checked


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def _first_changed_lines(diff: str) -> dict[str, int]:
    """For each file of a unified diff, the old-file line of its first change."""
    lines: dict[str, int] = {}
    rows = diff.splitlines()
    name: str | None = None
    line = 0
    for i, text in enumerate(rows):
        # A removed SQL comment also starts with "---": a header is followed by "+++".
        if text.startswith("--- ") and i + 1 < len(rows) and rows[i + 1].startswith("+++ "):
            name, line = text[4:].removeprefix("a/"), 0
        elif text.startswith("+++ ") and line == 0:
            continue
        elif (match := _HUNK.match(text)) and name is not None:
            line = int(match.group(1))
        elif name is not None and name not in lines and line:
            if text.startswith(("-", "+")):
                lines[name] = line
            else:
                line += 1
    return lines


def drift_findings(result: BuildResult) -> list[Finding]:
    """GENERATED_DRIFT for every committed file that differs from what the models give."""
    first = _first_changed_lines(result.diff)
    findings = []
    for path in result.drifted:
        shown = display_path(path)
        what = "differs from what the models generate" if path.exists() else "is missing"
        findings.append(
            Finding(
                GENERATED_STAGE,
                "GENERATED_DRIFT",
                f"{what}; run `agent-telemetry views build` and commit the result",
                file=shown,
                line=first.get(os.path.relpath(path)),
            )
        )
    return findings


def generated_drift(config_path: Path) -> list[Finding]:
    return drift_findings(build(config_path, check=True))


def kept_view_findings(
    lock: SchemaLock,
    models: Mapping[str, type[TelemetryEvent]],
    views: Iterable[ViewDefinition],
    lock_text: str | None,
    lock_path: Path,
) -> list[Finding]:
    """VIEW_VERSION_KEPT: every older locked version of a live event still has a view.

    A version bump passes the compatibility rules because the old version's view stays;
    this holds the views to that promise.
    """
    have = {(v.event, v.schema_version) for v in views if v.event is not None}
    findings = []
    for name, version, _ in lock.versions():
        model = models.get(name)
        if model is None or version >= model.schema_version or (name, version) in have:
            continue
        file, line = lock_location(lock_text, lock_path, name, version) or (None, None)
        findings.append(
            Finding(
                VERSIONS_STAGE,
                "VIEW_VERSION_KEPT",
                f"version {version} is locked but no generated view reads it (the views "
                f"read version {model.schema_version} only); a bumped event keeps the view "
                "of every older version",
                event=name,
                version=version,
                file=file,
                line=line,
            )
        )
    return findings
