"""The approval gate without a server: ``approve`` records a plan, and
``approval_problems`` refuses every plan the record does not cover, naming each reason.
Plans are assembled from the generated views and hand-made deployed states exactly as
``make_plan`` assembles them from BigQuery (tests/deploy/bigquery runs the same gate
against the emulator, through ``views apply``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from agent_telemetry.deploy._approval import approval_problems, approve
from agent_telemetry.deploy._plan import (
    DeployedView,
    DeploymentPlan,
    SinkPlan,
    ViewPlan,
    assemble_plan,
    view_plan,
)
from agent_telemetry.deploy._sink import missing_payload_fields
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.views import ViewDefinition
from tests.deploy.test_plan import VIEWS, as_applied

TARGET = "acme-agents-prod.telemetry"
SOURCE = "acme-agents-prod.logs.run_googleapis_com_stdout"
SINK = SOURCE
PARTITIONED = [v for v in VIEWS if v.layout == "partitioned"]
FIRST, SECOND = PARTITIONED[0].name, PARTITIONED[1].name


def _line(view: ViewDefinition, deployed: DeployedView) -> ViewPlan:
    return view_plan(view, deployed, DryRun(()))


def unmanaged(view: ViewDefinition) -> DeployedView:
    """A table someone else made where the view goes: no labels of this tool."""
    applied = as_applied(view)
    assert applied.state is not None
    return DeployedView(replace(applied.state, labels={}), applied.output)


def plan(
    *,
    deployed: dict[str, DeployedView] | None = None,
    views: list[ViewDefinition] | None = None,
    target: str = TARGET,
    source: str = SOURCE,
    layout: str = "partitioned",
    sink: SinkPlan | None = None,
) -> DeploymentPlan:
    """A first deployment (nothing deployed) unless ``deployed`` says otherwise."""
    chosen = PARTITIONED if views is None else views
    states = deployed or {}
    return assemble_plan(
        target=target,
        source=source,
        layout=layout,  # type: ignore[arg-type]
        views=tuple(_line(v, states.get(v.name, DeployedView(None))) for v in chosen),
        sink=sink or SinkPlan(table_id=SINK, state=None, missing=()),
    )


def test_an_approval_covers_exactly_the_plan_it_records() -> None:
    first = plan()
    assert approval_problems(approve(first, "Ana Analyst"), first) == []


def test_the_record_holds_each_views_hashes_and_the_sink() -> None:
    missing = missing_payload_fields((), "partitioned")
    planned = plan(sink=SinkPlan(table_id=SINK, state=None, missing=missing))
    when = datetime(2026, 12, 1, 12, 30, 5, 999_999, tzinfo=timezone(timedelta(hours=2)))
    approval = approve(planned, "Ana Analyst", now=when)
    assert approval.plan_hash == planned.plan_hash
    assert (approval.target, approval.source, approval.layout) == (TARGET, SOURCE, "partitioned")
    assert approval.approved_by == "Ana Analyst"
    assert approval.approved_at == "2026-12-01T10:30:05Z"  # UTC, whole seconds
    assert [
        (r.name, r.action, r.sql_sha256, r.definition_sha256, r.deployed_sha256)
        for r in approval.views
    ] == [
        (v.name, v.action, v.view.sql_sha256, v.definition_sha256, v.deployed_sha256)
        for v in planned.views
    ]
    assert (approval.sink.table, approval.sink.missing) == (SINK, planned.sink.missing_paths)
    assert approval.sink.missing  # the case is not vacuous


@pytest.mark.parametrize(
    ("changed", "problem"),
    [
        (
            {"target": "acme-agents-prod.other"},
            f"target is acme-agents-prod.other, the approval is for {TARGET}",
        ),
        (
            {"source": "acme-agents-prod.logs.other"},
            f"source is acme-agents-prod.logs.other, the approval is for {SOURCE}",
        ),
        ({"layout": "sharded"}, "layout is sharded, the approval is for partitioned"),
    ],
)
def test_another_target_source_or_layout_is_refused_by_name(
    changed: dict[str, str], problem: str
) -> None:
    approval = approve(plan(), "Ana Analyst")
    assert approval_problems(approval, plan(**changed)) == [problem]  # type: ignore[arg-type]


def test_a_view_more_or_less_is_refused() -> None:
    approval = approve(plan(views=PARTITIONED[:-1]), "Ana Analyst")
    refused = "the set of views differs from the approved one"
    assert approval_problems(approval, plan()) == [refused]
    approval = approve(plan(), "Ana Analyst")
    assert approval_problems(approval, plan(views=PARTITIONED[:-1])) == [refused]


def test_a_generated_definition_changed_since_approval_is_refused() -> None:
    approval = approve(plan(), "Ana Analyst")
    edited = [replace(v, description="edited") if v.name == FIRST else v for v in PARTITIONED]
    assert approval_problems(approval, plan(views=edited)) == [
        f"{FIRST}: its generated definition changed since approval"
    ]


@pytest.mark.parametrize("now", ["unmanaged", "drifted"])
def test_a_deployed_view_changed_between_approve_and_apply_is_refused(now: str) -> None:
    """Approved as a create (nothing there); by apply, someone made a table there, or
    edited the view this tool had applied."""
    approval = approve(plan(), "Ana Analyst")
    view = PARTITIONED[0]
    if now == "unmanaged":
        there = unmanaged(view)
    else:
        applied = as_applied(view)
        assert applied.state is not None
        there = DeployedView(replace(applied.state, view_query="SELECT 1"), applied.output)
    changed = plan(deployed={FIRST: there})
    assert changed.views[0].action == now
    assert approval_problems(approval, changed) == [
        f"{FIRST}: the deployed view changed since approval (now: {now})"
    ]


def test_an_adopted_view_changed_again_after_approval_is_refused() -> None:
    """``--adopt`` approves overwriting one table as it was; another edit is not covered."""
    view = PARTITIONED[0]
    before = unmanaged(view)
    approval = approve(plan(deployed={FIRST: before}), "Ana Analyst")
    assert before.state is not None
    later = DeployedView(replace(before.state, modified_ms=2), before.output)
    assert approval_problems(approval, plan(deployed={FIRST: later})) == [
        f"{FIRST}: the deployed view changed since approval (now: unmanaged)"
    ]


def test_a_view_that_reached_its_generated_definition_meanwhile_is_covered() -> None:
    """Approved as a create; another apply of the same definition got there first: the
    plan's hash differs, but there is nothing left that the approval did not cover."""
    approval = approve(plan(), "Ana Analyst")
    done = plan(deployed={FIRST: as_applied(PARTITIONED[0])})
    assert done.plan_hash != approval.plan_hash
    assert done.views[0].action == "unchanged"
    assert approval_problems(approval, done) == []


def test_another_sink_table_is_refused() -> None:
    approval = approve(plan(), "Ana Analyst")
    moved = plan(sink=SinkPlan(table_id=SINK + "_v2", state=None, missing=()))
    assert approval_problems(approval, moved) == ["the sink table differs from the approved one"]


def test_sink_fields_to_add_that_the_approval_does_not_cover_are_refused() -> None:
    approval = approve(plan(), "Ana Analyst")
    missing = missing_payload_fields((), "partitioned")
    lacking = plan(sink=SinkPlan(table_id=SINK, state=None, missing=missing))
    paths = ", ".join(sorted(lacking.sink.missing_paths))
    assert approval_problems(approval, lacking) == [
        f"sink fields to add that the approval does not cover: {paths}"
    ]
    # Fewer fields to add than approved (someone patched the sink meanwhile) is covered.
    assert approval_problems(approve(lacking, "Ana Analyst"), plan()) == []


def test_every_reason_is_given_at_once() -> None:
    approval = approve(plan(), "Ana Analyst")
    everything = plan(
        target="acme-agents-prod.other",
        deployed={SECOND: unmanaged(PARTITIONED[1])},
        sink=SinkPlan(table_id=SINK + "_v2", state=None, missing=()),
    )
    assert approval_problems(approval, everything) == [
        f"target is acme-agents-prod.other, the approval is for {TARGET}",
        f"{SECOND}: the deployed view changed since approval (now: unmanaged)",
        "the sink table differs from the approved one",
    ]
