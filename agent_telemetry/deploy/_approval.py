"""The approval record: a reviewed, committed file that binds apply to one plan.

It holds the plan hash, the target, each view's SQL sha256 and definition sha256 with the
deployed state it was planned against, the sink fields to add, who approved and when
(UTC). Its own hash is recomputed on load, so a hand-edited record is refused.

Apply accepts a record when the plan it recomputes has the same hash, or differs only
by work already done: views now at their approved definition (or half-written by an
apply of exactly it) and sink fields already added. Everything else that differs (a
changed definition, a view changed by someone else, a new field to add) refuses, with
the view named. So a rerun after a part-way failure converges, a second apply is a
no-op, and nothing is ever written that the record does not cover.
"""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_telemetry.deploy._plan import DeploymentPlan, compute_plan_hash
from agent_telemetry.errors import AgentTelemetryError

APPROVAL_FORMAT: Final = "agent-telemetry-approval/1"
MAX_APPROVER_CHARS = 100


class ApprovalError(AgentTelemetryError, ValueError):
    """An approval record cannot be written or read; says which file and what is wrong."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ApprovedView(_Strict):
    name: str
    action: Literal["create", "update", "unchanged", "drifted", "unmanaged"]
    sql_sha256: str
    definition_sha256: str
    deployed_sha256: str


class ApprovedSink(_Strict):
    table: str | None
    missing: tuple[str, ...]


class Approval(_Strict):
    format: Literal["agent-telemetry-approval/1"] = APPROVAL_FORMAT
    plan_hash: str
    target: str
    source: str
    layout: Literal["partitioned", "sharded", "analytics"]
    approved_by: str
    approved_at: str
    views: tuple[ApprovedView, ...]
    sink: ApprovedSink

    def recomputed_hash(self) -> str:
        return compute_plan_hash(
            target=self.target,
            source=self.source,
            layout=self.layout,
            views=(
                (v.name, v.action, v.sql_sha256, v.definition_sha256, v.deployed_sha256)
                for v in self.views
            ),
            sink_table=self.sink.table,
            sink_missing=self.sink.missing,
        )

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def check_approver(name: str) -> str:
    """A name or handle: 1-100 printable characters. Errors never repeat the value."""
    name = name.strip()
    if not name:
        raise ApprovalError("--by: the approver's name is empty")
    if len(name) > MAX_APPROVER_CHARS:
        raise ApprovalError(f"--by: longer than {MAX_APPROVER_CHARS} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise ApprovalError("--by: contains control or unprintable characters")
    return name


def approve(plan: DeploymentPlan, by: str, now: datetime | None = None) -> Approval:
    """The approval record for ``plan``, signed off by ``by`` at ``now`` (UTC)."""
    when = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    return Approval(
        plan_hash=plan.plan_hash,
        target=plan.target,
        source=plan.source,
        layout=plan.layout,
        approved_by=check_approver(by),
        approved_at=when.isoformat().replace("+00:00", "Z"),
        views=tuple(
            ApprovedView(
                name=v.name,
                action=v.action,
                sql_sha256=v.view.sql_sha256,
                definition_sha256=v.definition_sha256,
                deployed_sha256=v.deployed_sha256,
            )
            for v in plan.views
        ),
        sink=ApprovedSink(table=plan.sink.table_id, missing=plan.sink.missing_paths),
    )


def write_approval(approval: Approval, path: Path) -> None:
    try:
        path.write_text(approval.to_json(), encoding="utf-8")
    except OSError as exc:
        raise ApprovalError(f"{path}: cannot write ({type(exc).__name__})") from None


def parse_approval(text: str, origin: str = "approval") -> Approval:
    """Validate an approval record's JSON text, then its own hash."""
    try:
        approval = Approval.model_validate_json(text)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise ApprovalError(f"{origin}: not JSON") from None
        where = sorted({".".join(str(p) for p in e["loc"]) or "(top level)" for e in exc.errors()})
        raise ApprovalError(f"{origin}: not an approval record ({', '.join(where)})") from None
    if approval.recomputed_hash() != approval.plan_hash:
        raise ApprovalError(
            f"{origin}: the record does not match its own plan hash (edited after approval?)"
        )
    return approval


def read_approval(path: Path) -> Approval:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ApprovalError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ApprovalError(f"{path}: cannot read ({type(exc).__name__})") from None
    return parse_approval(text, str(path))


def approval_problems(approval: Approval, plan: DeploymentPlan) -> list[str]:
    """Why ``plan`` is not covered by ``approval`` (empty: it is)."""
    if approval.plan_hash == plan.plan_hash:
        return []
    problems: list[str] = []
    for what, approved, now in (
        ("target", approval.target, plan.target),
        ("source", approval.source, plan.source),
        ("layout", approval.layout, plan.layout),
    ):
        if approved != now:
            problems.append(f"{what} is {now}, the approval is for {approved}")
    approved_views = {v.name: v for v in approval.views}
    names = [v.name for v in plan.views]
    if sorted(names) != sorted(approved_views):
        problems.append("the set of views differs from the approved one")
    for view in plan.views:
        record = approved_views.get(view.name)
        if record is None:
            continue
        if record.definition_sha256 != view.definition_sha256:
            problems.append(f"{view.name}: its generated definition changed since approval")
        elif record.deployed_sha256 != view.deployed_sha256 and not view.settled:
            problems.append(
                f"{view.name}: the deployed view changed since approval (now: {view.action})"
            )
    if approval.sink.table != plan.sink.table_id:
        problems.append("the sink table differs from the approved one")
    extra = sorted(set(plan.sink.missing_paths) - set(approval.sink.missing))
    if extra:
        problems.append(f"sink fields to add that the approval does not cover: {', '.join(extra)}")
    return problems
