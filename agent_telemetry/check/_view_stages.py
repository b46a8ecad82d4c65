"""Stages 4 to 6: the view SQL binds every field, the generated files are current, and
every locked event version has its own committed view."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent_telemetry._files import is_file, read_text
from agent_telemetry.check._findings import Finding
from agent_telemetry.check._locate import lock_location
from agent_telemetry.check._paths import display_path
from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.project import Project
from agent_telemetry.schema import EventSpec, TelemetryEvent, event_spec
from agent_telemetry.schema.lock import SchemaLock
from agent_telemetry.views import (
    GENERATED_DIR,
    LANE_VIEW,
    QUALITY_VIEW,
    BuildResult,
    binding_violations,
    build,
    dedupe_violations,
    lane_violations,
    parse_view,
    pruning_violations,
    sql_path,
    view_name,
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


def _dedupe_findings(
    view: CommittedView, layout: Layout, dedupe: bool, event: str | None
) -> list[Finding]:
    """VIEW_DEDUPE findings of a committed view, read from its one parse (the parse
    error, when the file does not parse)."""
    read = view.text if view.tree is None else view.tree
    return [
        Finding(
            BINDINGS_STAGE,
            "VIEW_DEDUPE",
            f"{layout} view: {problem}",
            event=event,
            file=display_path(view.path),
            line=_column_line(view.text, "QUALIFY") or 1,
        )
        for problem in dedupe_violations(read, layout, dedupe)
    ]


def _pruning_findings(view: CommittedView, layout: Layout, event: str) -> list[Finding]:
    """VIEW_PRUNING findings of a committed event view: a date filter on it that would not
    reach the sink's scan as one BigQuery prunes by (docs/views.md, "A date filter
    prunes"). Read from the parse before the bindings proof qualifies it."""
    assert view.tree is not None
    return [
        Finding(
            BINDINGS_STAGE,
            "VIEW_PRUNING",
            f"{layout} view: {problem}",
            event=event,
            file=display_path(view.path),
            line=_column_line(view.text, "QUALIFY") or 1,
        )
        for problem in pruning_violations(view.tree, layout)
    ]


@dataclass(frozen=True, slots=True)
class CommittedView:
    """One committed view file, read and parsed once for every stage that reads it.

    ``versions`` is taken from the tree as parsed, before the bindings stage qualifies
    ``tree`` in place (the proof needs a qualified tree; copying it would cost as much
    as the proof).
    """

    path: Path
    text: str
    tree: exp.Expr | None  # None: the file does not parse
    versions: frozenset[int] | None


class CommittedViews:
    """The committed view files under ``sql_dir``, each read and parsed at most once."""

    def __init__(self, sql_dir: Path = GENERATED_DIR) -> None:
        self.sql_dir = sql_dir
        self._read: dict[Path, CommittedView | None] = {}

    def get(self, layout: str, view: str) -> CommittedView | None:
        """The committed file of ``view`` in ``layout``; None when there is none."""
        path = sql_path(self.sql_dir, layout, view)
        if path not in self._read:
            self._read[path] = None
            if is_file(path):
                text = read_text(path)
                try:
                    tree: exp.Expr | None = parse_view(text)
                except SqlglotError:
                    tree = None
                versions = None if tree is None else frozenset(_versions_in(tree))
                self._read[path] = CommittedView(path, text, tree, versions)
        return self._read[path]


def binding_findings(
    models: Iterable[type[TelemetryEvent]],
    sql_dir: Path = GENERATED_DIR,
    committed: CommittedViews | None = None,
    *,
    dedupe: bool = True,
    layouts: tuple[Layout, ...] = LAYOUTS,
    config: DeploymentConfig | None = None,
) -> tuple[list[Finding], int]:
    """VIEW_BINDING for every column of a committed event view that is not bound to its
    field, read back from the SQL itself. ``models`` are every event version (the
    registry's values): each version's view is held to that version's fields. Returns
    the findings and the views checked. ``committed`` shares the parsed files with the
    versions stage (its trees are qualified in place here).

    VIEW_DEDUPE for every committed view (telemetry_quality too) whose rows are not one
    per log entry in the pruning-safe form (``dedupe``: telemetry.toml's switch), or,
    with dedupe off, that drops any row. VIEW_PRUNING for every committed event view on
    which a date filter (``timestamp``; a sharded view's ``table_suffix``) would not
    reach the sink's scan as one BigQuery prunes by.

    VIEW_BINDING, with ``config`` (its target dataset holds the event views), for a
    committed ``lane_health`` that reads anything but the event views' columns it
    declares (``lane_violations``); it reads deduplicated views, so no VIEW_DEDUPE."""
    committed = committed or CommittedViews(sql_dir)
    specs = tuple(event_spec(model) for model in models)
    findings: list[Finding] = []
    checked = 0
    for layout in layouts:
        for spec in specs:
            name = view_name(spec.name, spec.schema_version)
            view = committed.get(layout, name)
            if view is None:
                continue  # a missing file is the drift stage's finding
            checked += 1
            if view.tree is not None:  # a file that does not parse is reported once, below
                findings += _dedupe_findings(view, layout, dedupe, spec.name)
                findings += _pruning_findings(view, layout, spec.name)
            query = view.text if view.tree is None else view.tree
            for problem in binding_violations(query, spec, layout, name, specs):
                column = None if problem.column == "*" else problem.column
                findings.append(
                    Finding(
                        BINDINGS_STAGE,
                        "VIEW_BINDING",
                        f"{layout} view: {problem.problem}",
                        event=spec.name,
                        field=column,
                        file=display_path(view.path),
                        line=_column_line(view.text, column) if column else 1,
                    )
                )
        quality = committed.get(layout, QUALITY_VIEW)
        if quality is not None:  # held to the dedupe form too; the count is of event views
            findings += _dedupe_findings(quality, layout, dedupe, None)
        lanes = committed.get(layout, LANE_VIEW) if config is not None else None
        if lanes is not None and config is not None:
            checked += 1
            findings += _lane_findings(lanes, layout, config, specs)
    return findings, checked


def _lane_findings(
    view: CommittedView, layout: Layout, config: DeploymentConfig, specs: tuple[EventSpec, ...]
) -> list[Finding]:
    query = view.text if view.tree is None else view.tree
    return [
        Finding(
            BINDINGS_STAGE,
            "VIEW_BINDING",
            f"{layout} view {LANE_VIEW}: {problem.problem}",
            field=None if problem.column == "*" else problem.column,
            file=display_path(view.path),
            line=_column_line(view.text, problem.column) if problem.column != "*" else 1,
        )
        for problem in lane_violations(query, config, specs)
    ]


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


def drift_findings(result: BuildResult, flags: str = "") -> list[Finding]:
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
                f"{what}; run `agent-telemetry views build{flags}` and commit the result",
                file=shown,
                line=first.get(os.path.relpath(path)),
            )
        )
    return findings


def generated_drift(
    config: Path | Project,
    sql_dir: Path | None = None,
    docs_path: Path | None = None,
    specs: tuple[EventSpec, ...] | None = None,
    flags: str = "",
) -> list[Finding]:
    """GENERATED_DRIFT findings of the configured layouts' files and the dictionary;
    ``flags`` make the hint's ``views build`` command run as printed."""
    result = build(config, check=True, sql_dir=sql_dir, docs_path=docs_path, specs=specs)
    return drift_findings(result, flags)


def _versions_in(tree: exp.Expr) -> set[int]:
    """The ``schema_version`` values a view keeps (``... schema_version = N``)."""
    found: set[int] = set()
    for eq in tree.find_all(exp.EQ):
        sides = (eq.this, eq.expression)
        if any(isinstance(c, exp.Column) and c.name.lower() == "schema_version" for c in sides):
            found.update(
                int(side.this) for side in sides if isinstance(side, exp.Literal) and side.is_int
            )
    return found


def kept_view_findings(
    lock: SchemaLock,
    lock_text: str | None,
    lock_path: Path,
    sql_dir: Path = GENERATED_DIR,
    committed: CommittedViews | None = None,
    layouts: tuple[Layout, ...] = LAYOUTS,
    flags: str = "",
) -> list[Finding]:
    """VIEW_VERSION_KEPT: every locked version of every event has its own committed view
    in every configured layout, under its own name, that keeps exactly that version's lines.

    A version bump passes the compatibility rules because the old version's view stays;
    this reads the committed SQL back to hold the views to that promise (a v2 view
    written over the v1 file, or a version without a file, fails here).
    """
    committed = committed or CommittedViews(sql_dir)
    findings = []
    for name, version, _ in lock.versions():
        view = view_name(name, version)
        missing: list[str] = []
        problems: list[str] = []
        for layout in layouts:
            found = committed.get(layout, view)
            if found is None:
                missing.append(layout)
                continue
            read = found.versions
            if read != frozenset({version}):
                shown = ", ".join(str(v) for v in sorted(read or ())) or "no version filter"
                problems.append(f"the {layout} {view} keeps schema_version {shown}")
        if not (missing or problems):
            continue
        if missing:
            problems.insert(0, f"no committed view {view} in {', '.join(missing)}")
        file, line = lock_location(lock_text, lock_path, name, version) or (None, None)
        findings.append(
            Finding(
                VERSIONS_STAGE,
                "VIEW_VERSION_KEPT",
                f"version {version} has no view of its own ({'; '.join(problems)}); every "
                "event version keeps a view that reads only its lines (run "
                f"`agent-telemetry views build{flags}`)",
                event=name,
                version=version,
                file=file,
                line=line,
            )
        )
    return findings
