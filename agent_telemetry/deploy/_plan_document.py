"""The plan as one documented, stable JSON document (``views plan --format json``).

Bots read this, and the markdown comment and the review page are rendered from it, so
the three never disagree. Its JSON Schema is ``PlanDocument.model_json_schema()``,
committed as docs/plan.schema.json (a test keeps the two equal and validates real
output against the file). Adding a field is compatible; renaming or removing one bumps
``format``.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_telemetry._text import clean
from agent_telemetry.deploy._plan import ACTIONS, Action, DeploymentPlan, ViewPlan

PLAN_DOCUMENT_FORMAT: Final = "agent-telemetry-plan/1"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ColumnChange(_Doc):
    """One column whose name, type or description differs between deployed and generated."""

    name: str
    change: Literal["added", "removed", "retyped", "redescribed"]
    type_before: str | None = Field(description="Deployed type; null for an added column.")
    type_after: str | None = Field(description="Generated type; null for a removed column.")
    description_before: str | None
    description_after: str | None


class DryRunResult(_Doc):
    ok: bool
    error: str | None = Field(description="The server's error, first line; null when ok.")
    bytes_processed: int | None = Field(
        description="Bytes a query of the whole view would scan, as the dry run reports it."
    )
    one_day_bytes_processed: int | None = Field(
        default=None,
        description=(
            "Bytes a query of one day of the view (today, UTC, filtered in the form that "
            "prunes partitions or shards) would scan, as its dry run reports it; 0 without "
            "that dry run when the whole view scans 0 bytes (a day of it scans no more); "
            "null when that dry run failed or reported none."
        ),
    )


class ViewChange(_Doc):
    name: str
    table_id: str
    action: Action
    reasons: list[str]
    blocked: bool = Field(description="Drifted or unmanaged: apply refuses without --adopt.")
    dry_run: DryRunResult
    columns: list[ColumnChange] = Field(
        description="Every column of a view to create; the changed ones of a view to update."
    )
    sql_before: str | None = Field(
        description="Deployed SQL: null when the view does not exist or the server hides it."
    )
    sql_after: str
    diff: str = Field(description="Unified diff, deployed to generated: metadata, then SQL.")


class SinkState(_Doc):
    table: str | None = Field(description="Null for a layout without a sink table.")
    found: bool
    missing: list[str] = Field(description="Payload fields apply --patch-sink would add.")


class FieldBits(_Doc):
    name: str
    bits_before: str | None = Field(description="Null: the field is new.")
    bits_after: str | None = Field(description="Null: the field is gone.")


class CapacityChange(_Doc):
    """One event view's capacity in bits (schema.capacity), deployed and generated."""

    view: str
    event: str
    schema_version: int
    deployed_version: int | None = Field(
        description="The version the deployed view serves (its schema-version label), when "
        "the lock records it; null for a view to create."
    )
    bits_before: str | None = Field(description="That version's capacity, as the lock has it.")
    bits_after: str
    fields: list[FieldBits] = Field(description="Fields whose capacity differs.")


class PlanDocument(_Doc):
    format: Literal["agent-telemetry-plan/1"] = PLAN_DOCUMENT_FORMAT
    target: str
    source: str
    layout: Literal["partitioned", "sharded", "analytics"]
    plan_hash: str = Field(description="What an approval binds to: sha256 over the plan.")
    pending: bool = Field(description="Anything for apply, or a person, to do.")
    counts: dict[Action, int]
    sink: SinkState
    views: list[ViewChange]
    approve_command: str = Field(description="The command that approves exactly this plan.")
    capacity: list[CapacityChange] = Field(
        default_factory=list,
        description="Per event view: capacity in bits, deployed version and generated.",
    )


def column_changes(plan: ViewPlan) -> list[ColumnChange]:
    """Columns added, removed, retyped or with a new description, in generated order."""
    after = {
        c.name.lower(): (c.name, c.schema_field().type_label(), c.description)
        for c in plan.view.columns
    }
    state = plan.deployed.state
    before = (
        {}
        if state is None or state.kind != "VIEW"
        else {
            f.name.lower(): (clean(f.name), clean(f.type_label()), _clean_optional(f.description))
            for f in state.schema
        }
    )
    changes: list[ColumnChange] = []
    for key, (name, kind, text) in after.items():
        old = before.get(key)
        if old is None:
            changes.append(
                ColumnChange(
                    name=name,
                    change="added",
                    type_before=None,
                    type_after=kind,
                    description_before=None,
                    description_after=text,
                )
            )
        elif old[1] != kind or (old[2] or "") != (text or ""):
            changes.append(
                ColumnChange(
                    name=name,
                    change="retyped" if old[1] != kind else "redescribed",
                    type_before=old[1],
                    type_after=kind,
                    description_before=old[2],
                    description_after=text,
                )
            )
    changes += [
        ColumnChange(
            name=name,
            change="removed",
            type_before=kind,
            type_after=None,
            description_before=text,
            description_after=None,
        )
        for key, (name, kind, text) in before.items()
        if key not in after
    ]
    return changes


def _clean_optional(text: str | None) -> str | None:
    return None if text is None else clean(text)


def _clean_lines(text: str | None) -> str | None:
    """Server text kept line by line (SQL shown side by side), each line cleaned."""
    return None if text is None else "\n".join(clean(line) for line in text.split("\n"))


def approve_command(config: Path | None, layout: str | None, endpoint: str | None) -> str:
    """``views approve`` with the options this plan was made with, quoted for a shell."""
    words = ["agent-telemetry", "views", "approve"]
    if config is not None:
        words += ["--config", str(config)]
    if layout is not None:
        words += ["--layout", layout]
    if endpoint is not None:
        words += ["--endpoint", endpoint]
    return shlex.join(words)


def plan_document(
    plan: DeploymentPlan, command: str, capacity: list[CapacityChange] | None = None
) -> PlanDocument:
    counts = plan.counts()
    # The server's text (descriptions, SQL, errors) and the config's names enter the document
    # here, cleaned once (agent_telemetry._text), so markdown, JSON and the review page
    # all print them safely.
    return PlanDocument(
        target=clean(plan.target),
        source=clean(plan.source),
        layout=plan.layout,
        plan_hash=plan.plan_hash,
        pending=plan.pending,
        counts={a: counts[a] for a in ACTIONS},
        sink=SinkState(
            table=_clean_optional(plan.sink.table_id),
            found=plan.sink.state is not None,
            missing=[clean(path) for path in plan.sink.missing_paths],
        ),
        views=[
            ViewChange(
                name=v.name,
                table_id=clean(v.view.table_id),
                action=v.action,
                reasons=[clean(reason) for reason in v.verdict.reasons],
                blocked=v.blocked,
                dry_run=DryRunResult(
                    ok=v.dry_run.ok,
                    error=_clean_optional(v.dry_run.error),
                    bytes_processed=v.dry_run.bytes_processed,
                    one_day_bytes_processed=v.dry_run.one_day_bytes,
                ),
                columns=column_changes(v),
                sql_before=None
                if v.deployed.state is None
                else _clean_lines(v.deployed.state.view_query),
                sql_after=v.view.query,
                diff=v.diff,
            )
            for v in plan.views
        ],
        approve_command=command,
        capacity=capacity or [],
    )
