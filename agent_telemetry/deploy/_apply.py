"""apply: recompute the plan, refuse anything the approval does not cover, then write.

The server side of applying; what it refuses and the schema it writes are decided in
``_decide``, without a server. Nothing is written when the approval does not cover the
plan, when a view is blocked (changed outside this tool, or not this tool's) without
``--adopt``, when a table (not a view) holds a view's name, or when any generated view
fails its dry run (``--patch-sink`` first adds the sink fields the approval lists, then
the failing views are dry-run again).

Each view is written in two patches so that a failure between them is recognisable:
1. the SQL with labels ``sql-sha256=<new>`` and ``meta-sha256=pending`` (create, or
   update of ``view.query`` and labels);
2. description, column descriptions and the final labels together.
Just before the first patch the view is read again and must be exactly what the plan
read (``changed_since_plan``), and each patch carries the etag it was read at, so a
console edit made meanwhile is refused by name, never overwritten. Then it is read back
and must plan as unchanged. A view that fails is reported and the
others still go ahead; the next apply, with the same approval, finishes the job.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.deploy._approval import Approval
from agent_telemetry.deploy._client import BigQueryWarehouse
from agent_telemetry.deploy._decide import (
    ApplyResult,
    ViewResult,
    changed_since_plan,
    column_schema,
    refusals,
)
from agent_telemetry.deploy._plan import (
    META_LABEL,
    PENDING,
    DeploymentPlan,
    ViewPlan,
    deployment_labels,
    judge_view,
)
from agent_telemetry.deploy._read import dry_run, make_plan, read_deployed
from agent_telemetry.deploy._sink import patched_schema
from agent_telemetry.deploy._types import BigQueryError, DryRun
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import ViewDefinition


def _write_view(
    warehouse: BigQueryWarehouse, planned: ViewPlan, output: DryRun, *, adopt: bool
) -> ViewResult:
    view = planned.view
    final = deployment_labels(view)
    state = planned.deployed.state
    kept = dict(state.labels) if state is not None else {}
    try:
        changed = changed_since_plan(view.name, state, warehouse.get_table(view.table_id))
        if changed is not None:
            return ViewResult(view.name, "failed", changed)
        if state is None:
            warehouse.create_view(
                view.table_id,
                query=view.query,
                description=view.description,
                labels={**final, META_LABEL: PENDING},
            )
        else:
            warehouse.set_view_query(
                view.table_id,
                query=view.query,
                labels={**kept, **final, META_LABEL: PENDING},
                etag=state.etag,
            )
        live = warehouse.get_table(view.table_id)
        if live is None:
            raise BigQueryError(f"{view.table_id} is gone after it was written")
        warehouse.set_metadata(
            view.table_id,
            description=view.description,
            schema=column_schema(view, live.schema, output.schema),
            labels={**live.labels, **final},
            etag=live.etag,
        )
    except BigQueryError as exc:
        return ViewResult(view.name, "failed", str(exc))
    verdict = judge_view(view, read_deployed(warehouse, view))
    if verdict.action != "unchanged":
        return ViewResult(
            view.name, "failed", "written, but reads back as " + "; ".join(verdict.reasons)
        )
    if state is None:
        return ViewResult(view.name, "created")
    return ViewResult(view.name, "adopted" if adopt and planned.blocked else "updated")


def apply_plan(
    warehouse: BigQueryWarehouse,
    config: DeploymentConfig,
    approval: Approval,
    *,
    views: Sequence[ViewDefinition] | None = None,
    layout: Layout | None = None,
    adopt: bool = False,
    patch_sink: bool = False,
    specs: tuple[EventSpec, ...] | None = None,
) -> ApplyResult:
    """Apply the approved plan; see the module docstring for when it writes nothing.
    ``specs``: the catalogue's event versions, as ``make_plan`` takes them."""
    plan = make_plan(warehouse, config, views, layout, specs)
    return apply_planned(warehouse, plan, approval, adopt=adopt, patch_sink=patch_sink)


def apply_planned(
    warehouse: BigQueryWarehouse,
    plan: DeploymentPlan,
    approval: Approval,
    *,
    adopt: bool = False,
    patch_sink: bool = False,
) -> ApplyResult:
    """Apply ``plan``, just read from ``warehouse``, if ``approval`` covers it."""
    refused = refusals(plan, approval, adopt=adopt, patch_sink=patch_sink)
    if refused:
        return ApplyResult(plan, refused=refused)

    outputs = {v.name: v.dry_run for v in plan.views}
    sink_patched: tuple[str, ...] = ()
    sink = plan.sink
    if patch_sink and sink.missing and sink.state is not None and sink.table_id is not None:
        try:
            warehouse.set_schema(
                sink.table_id,
                base=sink.state.schema,
                schema=patched_schema(sink.state.schema, sink.missing),
            )
        except BigQueryError as exc:
            return ApplyResult(plan, refused=(str(exc),))
        sink_patched = sink.missing_paths
        generated = [v.view for v in plan.views]
        for view in plan.views:
            if not outputs[view.name].ok:
                outputs[view.name] = dry_run(warehouse, view.view, generated)
        failures = [f"{n}: dry run failed: {d.error}" for n, d in outputs.items() if not d.ok]
        if failures:
            return ApplyResult(plan, refused=tuple(failures), sink_patched=sink_patched)

    # In the plan's order, a view after the views it reads (generate_views); a view whose
    # read view failed to be written is not written over them.
    results: list[ViewResult] = []
    failed: set[str] = set()
    for view in plan.views:
        broken = sorted(failed.intersection(view.view.reads))
        if broken:
            reason = f"not written: it reads {', '.join(broken)}, which failed"
            results.append(ViewResult(view.name, "failed", reason))
        elif view.action == "unchanged":
            results.append(ViewResult(view.name, "unchanged"))
        else:
            results.append(_write_view(warehouse, view, outputs[view.name], adopt=adopt))
        if results[-1].outcome == "failed":
            failed.add(view.name)
    return ApplyResult(plan, sink_patched=sink_patched, results=tuple(results))
