"""Read what is deployed from BigQuery and make the plan of it (``_plan`` judges it).

The server side of planning: the sink table's schema, each deployed view and its output
columns, the dry run of each generated query. Only the emulator tests reach this module;
``make mutation``'s deploy-server group mutates it against them.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.deploy._client import BigQueryWarehouse
from agent_telemetry.deploy._plan import (
    DeployedView,
    DeploymentPlan,
    PlanError,
    SinkPlan,
    ViewPlan,
    assemble_plan,
    view_plan,
)
from agent_telemetry.deploy._sink import missing_payload_fields, sink_table_name
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import (
    ViewDefinition,
    generate_views,
    inlined_query,
    one_day_query,
    table_ref,
)


def make_plan(
    warehouse: BigQueryWarehouse,
    config: DeploymentConfig,
    views: Sequence[ViewDefinition] | None = None,
    layout: Layout | None = None,
    specs: tuple[EventSpec, ...] | None = None,
) -> DeploymentPlan:
    """Read what is deployed, dry-run every generated view, and hash it all.

    ``specs``: every version of every event of the catalogue deployed (default: the
    package's own); the views (unless given) and the sink's payload are generated from it."""
    chosen: Layout = layout or config.source.layout
    if views is None:
        views = generate_views(config, chosen, specs)
    target = config.target
    if not warehouse.dataset_exists(target.project, target.dataset):
        raise PlanError(
            f"target dataset {target.project}.{target.dataset} does not exist; create it "
            f"first (bq mk --dataset {target.project}:{target.dataset})"
        )
    for view in views:
        if (view.project, view.dataset) != (target.project, target.dataset):
            raise PlanError(f"{view.name}: generated for another target dataset")
    sink = sink_plan(warehouse, config, chosen, specs)
    planned = tuple(plan_view(warehouse, v, costed_dry_run(warehouse, v, views)) for v in views)
    return assemble_plan(
        target=f"{target.project}.{target.dataset}",
        source=f"{config.source.project}.{config.source.dataset}.{config.source.table_for(chosen)}",
        layout=chosen,
        views=planned,
        sink=sink,
    )


def dry_run(
    warehouse: BigQueryWarehouse, view: ViewDefinition, views: Sequence[ViewDefinition]
) -> DryRun:
    """The dry run of ``view`` as it will read once applied: a view of views (lane_health)
    runs with the generated queries of the views it reads written in, so it is checked
    before they exist (a first deployment) and against what they are about to become."""
    return warehouse.dry_run(inlined_query(view, views))


def costed_dry_run(
    warehouse: BigQueryWarehouse, view: ViewDefinition, views: Sequence[ViewDefinition]
) -> DryRun:
    """``dry_run``, with the bytes a query of one day of the view would scan beside the
    whole view's (a second dry run, of ``one_day_query``, when ``DryRun.with_one_day``
    needs one)."""
    whole = dry_run(warehouse, view, views)
    return whole.with_one_day(lambda: warehouse.dry_run(one_day_query(view, views)))


def sink_plan(
    warehouse: BigQueryWarehouse,
    config: DeploymentConfig,
    layout: Layout,
    specs: tuple[EventSpec, ...] | None = None,
) -> SinkPlan:
    if layout == "analytics":
        return SinkPlan(table_id=None, state=None, missing=())
    source = config.source
    names = warehouse.list_table_ids(source.project, source.dataset) if layout == "sharded" else []
    table_id = f"{source.project}.{source.dataset}.{sink_table_name(config, layout, names)}"
    state = warehouse.get_table(table_id) if not table_id.endswith("*") else None
    missing = missing_payload_fields(state.schema, layout, specs) if state is not None else ()
    return SinkPlan(table_id=table_id, state=state, missing=missing)


def read_deployed(warehouse: BigQueryWarehouse, view: ViewDefinition) -> DeployedView:
    state = warehouse.get_table(view.table_id)
    if state is None or state.kind != "VIEW":
        return DeployedView(state)
    output = warehouse.dry_run(f"SELECT * FROM {table_ref(view.project, view.dataset, view.name)}")
    return DeployedView(state, output)


def plan_view(warehouse: BigQueryWarehouse, view: ViewDefinition, dry_run: DryRun) -> ViewPlan:
    return view_plan(view, read_deployed(warehouse, view), dry_run)
