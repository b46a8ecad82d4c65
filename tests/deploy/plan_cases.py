"""Three plans made without a server, for the plan's formats and the review page: a view
to create, a view to update (a column added, a description changed) and nothing to do."""

from __future__ import annotations

import re
from dataclasses import replace

from agent_telemetry.config import load_config
from agent_telemetry.deploy._decide import column_schema
from agent_telemetry.deploy._plan import (
    DeployedView,
    DeploymentPlan,
    SinkPlan,
    assemble_plan,
    deployment_labels,
    view_plan,
)
from agent_telemetry.deploy._sink import MissingField
from agent_telemetry.deploy._types import DryRun, TableState
from agent_telemetry.schema.spec import EventSpec
from agent_telemetry.views import TableField, ViewDefinition, generate_views
from tests.conftest import EXAMPLE_CONFIG

CONFIG = load_config(EXAMPLE_CONFIG)
VIEW = next(v for v in generate_views(CONFIG) if v.name == "pipeline_render")
SINK_TABLE = f"{CONFIG.source.project}.{CONFIG.source.dataset}.run_googleapis_com_stdout"
CASES = ("create", "update", "noop")


def deployed_as(view: ViewDefinition) -> DeployedView:
    schema = column_schema(view, (), ())
    state = TableState(
        table_id=view.table_id,
        kind="VIEW",
        labels=deployment_labels(view),
        description=view.description,
        schema=schema,
        view_query=view.query,
        modified_ms=1,
    )
    return DeployedView(state, DryRun(schema))


def _older(view: ViewDefinition) -> ViewDefinition:
    """The view one release ago: no ``attempt`` column, another ``passed`` description."""
    columns = tuple(
        replace(c, description="Whether the render passed <b>its</b> checks | old.")
        if c.name == "passed"
        else c
        for c in view.columns
        if c.name != "attempt"
    )
    query = re.sub(r"  CASE\n(?:(?!  CASE\n).)*?END AS attempt,\n", "", view.query, flags=re.S)
    query = query.replace(", 'attempt'", "")
    query = "\n".join(ln for ln in query.splitlines() if "jsonPayload.attempt" not in ln)
    return replace(view, columns=columns, query=query)


def make_plan(case: str) -> DeploymentPlan:
    dry_run = DryRun(
        column_schema(VIEW, (), ()), bytes_processed=48_213_504, one_day_bytes=1_204_224
    )
    if case == "create":
        deployed = DeployedView(None)
        missing: tuple[MissingField, ...] = (
            MissingField("jsonPayload.attempt", TableField("attempt", "INTEGER")),
        )
    elif case == "update":
        deployed = deployed_as(_older(VIEW))
        missing = ()
    else:
        deployed = deployed_as(VIEW)
        missing = ()
    sink_state = TableState(SINK_TABLE, "TABLE", {}, None, (), None, 1)
    return assemble_plan(
        target=f"{CONFIG.target.project}.{CONFIG.target.dataset}",
        source=SINK_TABLE,
        layout="partitioned",
        views=(view_plan(VIEW, deployed, dry_run),),
        sink=SinkPlan(SINK_TABLE, sink_state, missing),
    )


def first_deploy(specs: tuple[EventSpec, ...]) -> DeploymentPlan:
    """Every view of ``specs`` to create, on a sink not found: a first deploy."""
    views = generate_views(CONFIG, specs=specs)
    plans = tuple(
        view_plan(v, DeployedView(None), DryRun((), bytes_processed=1_000)) for v in views
    )
    return assemble_plan(
        target=f"{CONFIG.target.project}.{CONFIG.target.dataset}",
        source=SINK_TABLE,
        layout="partitioned",
        views=plans,
        sink=SinkPlan(SINK_TABLE, None, ()),
    )
