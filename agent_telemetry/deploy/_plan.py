"""The plan: what is deployed in the target dataset against what the models generate.

Pure: ``_read.make_plan`` reads the server and assembles the plan with ``view_plan`` and
``assemble_plan``, so every judgement here is tested without one.

Per view the plan says create, update (with a diff), unchanged, drifted (changed outside
agent-telemetry) or unmanaged (a view or table of that name this tool did not create),
dry-runs every generated query against the real source tables, lists the payload fields
the sink table lacks, and hashes all of it into one plan hash that an approval binds to.

What this tool applied is recorded on each view in labels, because the view itself is the
only place that survives between runs and some servers do not return a view's SQL:
``sql-sha256`` (the applied query) and ``meta-sha256`` (its description and column
descriptions), 32 hex characters each. ``meta-sha256=pending`` marks a write that stopped
between setting the SQL and setting the descriptions: the next apply finishes it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_telemetry._text import clean
from agent_telemetry.config import Layout
from agent_telemetry.deploy._sink import MissingField
from agent_telemetry.deploy._types import BigQueryError, DryRun, TableState
from agent_telemetry.views import MANAGED_BY, TableField, ViewDefinition

Action = Literal["create", "update", "unchanged", "drifted", "unmanaged"]
ACTIONS: tuple[Action, ...] = ("create", "update", "unchanged", "drifted", "unmanaged")

MANAGED_BY_LABEL = "managed-by"
SQL_LABEL = "sql-sha256"
META_LABEL = "meta-sha256"
PENDING = "pending"
DIGEST_CHARS = 32  # label values hold at most 63 characters
PLAN_FORMAT = 1


class PlanError(BigQueryError):
    """The plan cannot be made (target dataset missing, server unreachable, ...)."""


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of ``value``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def sql_digest(query: str) -> str:
    """sha256 of a view query, insensitive to leading and trailing blank space."""
    return hashlib.sha256((query.strip() + "\n").encode()).hexdigest()


def meta_digest(description: str | None, columns: Iterable[tuple[str, str | None]]) -> str:
    """sha256 of a view's description and its (column, description) pairs in order."""
    return digest(
        {
            "description": description or "",
            "columns": [[name.lower(), text or ""] for name, text in columns],
        }
    )


def deployment_labels(view: ViewDefinition) -> dict[str, str]:
    """The view's labels plus the record of what is being applied."""
    return {
        **view.labels,
        SQL_LABEL: sql_digest(view.query)[:DIGEST_CHARS],
        META_LABEL: meta_digest(view.description, ((c.name, c.description) for c in view.columns))[
            :DIGEST_CHARS
        ],
    }


def definition_digest(view: ViewDefinition) -> str:
    """sha256 of everything apply writes for ``view``."""
    return digest(
        {
            "table": view.table_id,
            "query": view.query,
            "description": view.description,
            "columns": [[c.name, c.type, c.description] for c in view.columns],
            "labels": deployment_labels(view),
        }
    )


@dataclass(frozen=True, slots=True)
class DeployedView:
    """A view as deployed: ``tables.get``, and a dry run of ``SELECT *`` from it."""

    state: TableState | None
    output: DryRun | None = None

    def fingerprint(self) -> str:
        state = self.state
        if state is None:
            return digest({"exists": False})
        output = self.output
        return digest(
            {
                "exists": True,
                "kind": state.kind,
                "labels": state.labels,
                "description": state.description or "",
                "schema": [f.to_api() for f in state.schema],
                "query": state.view_query,
                "modified_ms": state.modified_ms,
                # Error texts may carry job ids; whether the view reads at all is enough.
                "output": None
                if output is None
                else ([list(f.shape()) for f in output.schema] if output.ok else "error"),
            }
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Action
    reasons: tuple[str, ...] = ()
    resumable: bool = False  # an earlier apply of exactly this SQL stopped half-way


def _shapes(fields: Sequence[TableField]) -> list[tuple[Any, ...]]:
    return [f.shape() for f in fields]


def judge_view(view: ViewDefinition, deployed: DeployedView) -> Verdict:
    """Compare deployed to what this tool last applied (drift), then to what it would apply."""
    state = deployed.state
    if state is None:
        return Verdict("create")
    if state.kind != "VIEW":
        return Verdict(
            "unmanaged",
            (f"a {state.kind.lower()} of this name exists; agent-telemetry only writes views",),
        )
    if state.labels.get(MANAGED_BY_LABEL) != MANAGED_BY:
        return Verdict("unmanaged", (f"exists without the label {MANAGED_BY_LABEL}={MANAGED_BY}",))
    applied_sql, applied_meta = state.labels.get(SQL_LABEL), state.labels.get(META_LABEL)
    if not applied_sql or not applied_meta:
        return Verdict(
            "drifted", (f"labelled managed but carries no {SQL_LABEL}/{META_LABEL} record",)
        )
    drift: list[str] = []
    if state.view_query is not None and sql_digest(state.view_query)[:DIGEST_CHARS] != applied_sql:
        drift.append("its SQL differs from what agent-telemetry applied")
    if applied_meta != PENDING:
        deployed_meta = meta_digest(
            state.description, ((f.name, f.description) for f in state.schema)
        )
        if deployed_meta[:DIGEST_CHARS] != applied_meta:
            drift.append("its description or column descriptions differ from what was applied")
        output = deployed.output
        if output is not None and output.ok and _shapes(output.schema) != _shapes(state.schema):
            drift.append("its output columns differ from the schema agent-telemetry applied")
    if drift:
        return Verdict("drifted", tuple(drift))

    wanted = deployment_labels(view)
    reasons: list[str] = []
    resumable = applied_meta == PENDING and applied_sql == wanted[SQL_LABEL]
    if applied_meta == PENDING:
        reasons.append("an earlier apply stopped before it set descriptions and labels")
    if applied_sql != wanted[SQL_LABEL]:
        reasons.append("SQL changed")
    if applied_meta not in (PENDING, wanted[META_LABEL]):
        reasons.append("description or column descriptions changed")
    for key, value in view.labels.items():
        if state.labels.get(key) != value:
            reasons.append(f"label {key} changes")
    if reasons:
        return Verdict("update", tuple(reasons), resumable)
    return Verdict("unchanged")


def _view_document(
    *,
    query: str | None,
    sql_label: str | None,
    description: str | None,
    columns: Iterable[tuple[str, str, str | None]],
    labels: dict[str, str],
) -> list[str]:
    # Metadata lines start with "# ", not SQL's "-- ": a removed "-- description" line
    # would print as "--- description", which reads like a diff's file header. The
    # deployed side is whatever the console holds: each item stays on its own line (a
    # newline in a description must not start a line of its own in the plan).
    lines = [f"# description: {clean(description or '')}"]
    lines += [
        f"# column {clean(name)} {clean(kind)}: {clean(text or '')}" for name, kind, text in columns
    ]
    lines += [
        f"# label {clean(key)}={clean(value)}"
        for key, value in sorted(labels.items())
        if key not in (SQL_LABEL, META_LABEL)
    ]
    if query is None:
        lines.append(f"# {SQL_LABEL}: {clean(sql_label or '(none)')}")
    else:
        lines += [clean(line) for line in query.strip().splitlines()]
    return lines


def render_diff(view: ViewDefinition, state: TableState) -> str:
    """A unified diff from the deployed view to the generated one: metadata, then SQL.

    When the server does not return the deployed SQL, the diff shows the recorded
    ``sql-sha256`` against the new one; the SQL change itself is reviewed in the
    committed generated files.
    """
    wanted = deployment_labels(view)
    sql_known = state.view_query is not None
    before = _view_document(
        query=state.view_query,
        sql_label=state.labels.get(SQL_LABEL),
        description=state.description,
        columns=((f.name, f.type_label(), f.description) for f in state.schema),
        labels=state.labels,
    )
    after = _view_document(
        query=view.query if sql_known else None,
        sql_label=wanted[SQL_LABEL],
        description=view.description,
        columns=((c.name, c.schema_field().type_label(), c.description) for c in view.columns),
        labels={**state.labels, **wanted},
    )
    diff = difflib.unified_diff(
        before,
        after,
        fromfile=f"deployed/{view.name}",
        tofile=f"generated/{view.name}",
        lineterm="",
    )
    text = "\n".join(diff)
    if not sql_known and state.labels.get(SQL_LABEL) != wanted[SQL_LABEL]:
        text += "\n(the server did not return the deployed SQL; compare sql-sha256)"
    return text


@dataclass(frozen=True, slots=True)
class ViewPlan:
    """One view's line in the plan."""

    view: ViewDefinition
    verdict: Verdict
    deployed: DeployedView
    dry_run: DryRun
    diff: str
    definition_sha256: str
    deployed_sha256: str

    @property
    def name(self) -> str:
        return self.view.name

    @property
    def action(self) -> Action:
        return self.verdict.action

    @property
    def blocked(self) -> bool:
        """Changed outside this tool, or not this tool's: apply needs ``--adopt``."""
        return self.action in ("drifted", "unmanaged")

    @property
    def settled(self) -> bool:
        """At its generated definition, or half-written by an apply of exactly it."""
        return self.action == "unchanged" or self.verdict.resumable


@dataclass(frozen=True, slots=True)
class SinkPlan:
    """The sink table the views read, against the sink schema the models imply."""

    table_id: str | None  # None: the layout has no sink table (analytics)
    state: TableState | None
    missing: tuple[MissingField, ...]

    @property
    def missing_paths(self) -> tuple[str, ...]:
        return tuple(m.describe() for m in self.missing)


@dataclass(frozen=True, slots=True)
class DeploymentPlan:
    target: str
    source: str
    layout: Layout
    views: tuple[ViewPlan, ...]
    sink: SinkPlan
    plan_hash: str

    @property
    def dry_run_failures(self) -> tuple[ViewPlan, ...]:
        return tuple(v for v in self.views if not v.dry_run.ok)

    @property
    def pending(self) -> bool:
        """Anything for apply (or a person) to do."""
        return any(v.action != "unchanged" for v in self.views) or bool(self.sink.missing)

    def counts(self) -> dict[Action, int]:
        return {a: sum(1 for v in self.views if v.action == a) for a in ACTIONS}

    def exit_code(self) -> int:
        """``--exit-code``: 0 nothing to do, 1 changes pending or the plan cannot be applied
        (failed dry runs). Errors (2) never get as far as a plan."""
        return 1 if self.dry_run_failures or self.pending else 0


def compute_plan_hash(
    *,
    target: str,
    source: str,
    layout: str,
    views: Iterable[tuple[str, str, str, str, str]],
    sink_table: str | None,
    sink_missing: Iterable[str],
) -> str:
    """One hash over the target, every view (name, action, SQL sha256, definition sha256,
    deployed-state sha256) and the sink fields to add."""
    return "sha256:" + digest(
        {
            "format": PLAN_FORMAT,
            "target": target,
            "source": source,
            "layout": layout,
            "views": [list(v) for v in views],
            "sink": {"table": sink_table, "missing": list(sink_missing)},
        }
    )


def view_plan(view: ViewDefinition, deployed: DeployedView, dry_run: DryRun) -> ViewPlan:
    """One view's line in the plan, from what is deployed and the generated view's dry run."""
    verdict = judge_view(view, deployed)
    state = deployed.state
    diff = ""
    if state is not None and state.kind == "VIEW" and verdict.action != "unchanged":
        diff = render_diff(view, state)
    return ViewPlan(
        view=view,
        verdict=verdict,
        deployed=deployed,
        dry_run=dry_run,
        diff=diff,
        definition_sha256=definition_digest(view),
        deployed_sha256=deployed.fingerprint(),
    )


def assemble_plan(
    *, target: str, source: str, layout: Layout, views: tuple[ViewPlan, ...], sink: SinkPlan
) -> DeploymentPlan:
    """The plan of ``views`` and ``sink``, with the hash an approval records."""
    plan_hash = compute_plan_hash(
        target=target,
        source=source,
        layout=layout,
        views=(
            (v.name, v.action, v.view.sql_sha256, v.definition_sha256, v.deployed_sha256)
            for v in views
        ),
        sink_table=sink.table_id,
        sink_missing=sink.missing_paths,
    )
    return DeploymentPlan(
        target=target, source=source, layout=layout, views=views, sink=sink, plan_hash=plan_hash
    )
