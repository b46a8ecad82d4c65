"""What ``views apply`` decides before and after it writes, without a server.

``refusals``: why nothing may be written (the approval, blocked views, failed dry runs);
``column_schema``: the schema a view is written with; ``ApplyResult``: what happened.
``_apply`` does the writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agent_telemetry.deploy._approval import Approval, approval_problems, timing_problem
from agent_telemetry.deploy._plan import DeploymentPlan
from agent_telemetry.deploy._types import TableState
from agent_telemetry.views import TableField, ViewDefinition

Outcome = Literal["created", "updated", "adopted", "unchanged", "failed"]


@dataclass(frozen=True, slots=True)
class ViewResult:
    name: str
    outcome: Outcome
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ApplyResult:
    plan: DeploymentPlan
    refused: tuple[str, ...] = ()
    sink_patched: tuple[str, ...] = ()
    results: tuple[ViewResult, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.refused and all(r.outcome != "failed" for r in self.results)

    @property
    def wrote(self) -> bool:
        return bool(self.sink_patched) or any(
            r.outcome in ("created", "updated", "adopted") for r in self.results
        )


def column_schema(
    view: ViewDefinition, live: Sequence[TableField], output: Sequence[TableField]
) -> tuple[TableField, ...]:
    """The view's schema with the generated column descriptions.

    Names, types and modes come from a dry run of the query just written (what BigQuery
    derives the view's schema from; a patch that changes a type or mode is rejected), else
    from the view as the server reports it, else from the generated column list. Only the
    descriptions are ours.
    """
    by_name = {f.name.lower(): f for f in live}
    by_name.update({f.name.lower(): f for f in output})
    schema = []
    for column in view.columns:
        base = by_name.get(column.name.lower()) or column.schema_field()
        schema.append(TableField(base.name, base.type, base.mode, column.description, base.fields))
    return tuple(schema)


def _blocked(plan: DeploymentPlan, adopt: bool) -> list[str]:
    problems = []
    for view in plan.views:
        state = view.deployed.state
        if state is not None and state.kind != "VIEW":
            problems.append(f"{view.name}: {view.verdict.reasons[0]}")
        elif view.blocked and not adopt:
            problems.append(
                f"{view.name}: {view.action} ({'; '.join(view.verdict.reasons)}); "
                "rerun with --adopt to overwrite it"
            )
    return problems


def refusals(
    plan: DeploymentPlan,
    approval: Approval,
    *,
    adopt: bool,
    patch_sink: bool,
    now: datetime | None = None,
) -> tuple[str, ...]:
    """Why apply must write nothing for ``plan``, in the order it checks; empty: go ahead.

    The approval must be neither expired nor dated in the future (at ``now``, default:
    the clock) and must cover
    the plan; no view may be blocked (a table in a view's place
    always is, a drifted or unmanaged view is unless ``adopt``); every generated view must
    dry-run, unless ``patch_sink`` is to add the sink fields first (then the views that
    failed are dry-run again after the patch).
    """
    expired = timing_problem(approval, now)
    if expired is not None:
        return (expired,)
    problems = approval_problems(approval, plan)
    if problems:
        return tuple(problems)
    blocked = _blocked(plan, adopt)
    if blocked:
        return tuple(blocked)
    sink = plan.sink
    if plan.dry_run_failures and not (patch_sink and sink.missing):
        failures = [f"{v.name}: dry run failed: {v.dry_run.error}" for v in plan.dry_run_failures]
        if sink.missing:
            failures.append(
                f"the sink lacks {len(sink.missing)} payload field(s); "
                "--patch-sink adds them (NULLABLE) before the views are written"
            )
        return tuple(failures)
    return ()


def changed_since_plan(
    name: str, planned: TableState | None, current: TableState | None
) -> str | None:
    """Why a view may not be written now: it is not what the plan read (None: it is).

    BigQuery refuses a patch whose etag is stale, but a create has no etag, and a server
    that ignores etags would overwrite a console edit made between plan and write; so
    apply reads each view again just before writing it and compares everything read.
    """
    if planned is None and current is None:
        return None
    if planned is None:
        return f"{name}: it was created by someone else since the plan; run views plan again"
    if current is None:
        return f"{name}: it was deleted since the plan; run views plan again"
    if current != planned:
        return f"{name}: it changed since the plan (not overwritten); run views plan again"
    return None
