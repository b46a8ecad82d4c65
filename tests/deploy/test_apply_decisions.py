"""What ``views apply`` decides before it writes, without a server: ``refusals`` (the
approval, blocked views, failed dry runs, ``--adopt`` and ``--patch-sink``) and
``column_schema`` (the schema written with the column descriptions). Plans are assembled
as ``make_plan`` assembles them (see test_approval_gate.py); tests/deploy/bigquery runs
the same decisions through ``apply_plan`` against the emulator."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_telemetry.deploy._approval import approval_problems, approve
from agent_telemetry.deploy._decide import column_schema, refusals
from agent_telemetry.deploy._plan import DeployedView, DeploymentPlan, SinkPlan
from agent_telemetry.deploy._sink import missing_payload_fields
from agent_telemetry.deploy._types import DryRun, TableState
from agent_telemetry.views import TableField, ViewDefinition
from tests.deploy.test_approval_gate import FIRST, PARTITIONED, SECOND, SINK, plan, unmanaged
from tests.deploy.test_plan import as_applied

APPROVER = "Ana Analyst"


def _refusals(
    planned: DeploymentPlan, *, adopt: bool = False, patch: bool = False
) -> tuple[str, ...]:
    """What apply refuses for ``planned`` under an approval of exactly that plan."""
    return refusals(planned, approve(planned, APPROVER), adopt=adopt, patch_sink=patch)


def drifted(view: ViewDefinition) -> DeployedView:
    """The view as applied, then its SQL edited by hand in the console."""
    applied = as_applied(view)
    assert applied.state is not None
    edited = replace(applied.state, view_query=view.query + "\nLIMIT 1")
    return DeployedView(edited, applied.output)


def a_table(view: ViewDefinition) -> DeployedView:
    """A table (not a view) where the view goes."""
    applied = as_applied(view)
    assert applied.state is not None
    return DeployedView(replace(applied.state, kind="TABLE", labels={}, view_query=None))


def _failing(planned: DeploymentPlan, name: str, error: str) -> DeploymentPlan:
    """``planned`` with ``name``'s generated view failing its dry run with ``error``."""
    views = tuple(
        replace(v, dry_run=DryRun((), error)) if v.name == name else v for v in planned.views
    )
    return replace(planned, views=views)


def _sink_missing_fields() -> SinkPlan:
    return SinkPlan(table_id=SINK, state=None, missing=missing_payload_fields((), "partitioned"))


def test_a_covering_approval_with_nothing_blocked_and_every_dry_run_ok_goes_ahead() -> None:
    assert _refusals(plan()) == ()
    updated = {v.name: as_applied(v) for v in PARTITIONED}
    assert _refusals(plan(deployed=updated)) == ()


def test_an_approval_that_does_not_cover_the_plan_is_refused_before_anything_else() -> None:
    approved = plan()
    later = plan(deployed={FIRST: unmanaged(PARTITIONED[0])})
    later = _failing(later, SECOND, "Unrecognized name: lane")
    problems = approval_problems(approve(approved, APPROVER), later)
    assert problems  # the record was of another plan
    assert refusals(later, approve(approved, APPROVER), adopt=False, patch_sink=False) == tuple(
        problems
    )


@pytest.mark.parametrize(
    ("deployed", "reason", "action"),
    [
        (drifted, "its SQL differs from what agent-telemetry applied", "drifted"),
        (unmanaged, "exists without the label managed-by=agent-telemetry", "unmanaged"),
    ],
)
def test_a_blocked_view_is_refused_by_name_unless_adopted(
    deployed: object, reason: str, action: str
) -> None:
    assert callable(deployed)
    planned = plan(deployed={FIRST: deployed(PARTITIONED[0])})
    assert _refusals(planned) == (
        f"{FIRST}: {action} ({reason}); rerun with --adopt to overwrite it",
    )
    assert _refusals(planned, adopt=True) == ()


def test_a_table_in_a_views_place_is_refused_even_with_adopt() -> None:
    planned = plan(deployed={FIRST: a_table(PARTITIONED[0])})
    expected = (f"{FIRST}: a table of this name exists; agent-telemetry only writes views",)
    assert _refusals(planned) == expected
    assert _refusals(planned, adopt=True) == expected


def test_every_blocked_view_is_named_in_plan_order_and_blocks_before_dry_runs() -> None:
    planned = plan(deployed={SECOND: a_table(PARTITIONED[1]), FIRST: drifted(PARTITIONED[0])})
    planned = _failing(planned, SECOND, "Unrecognized name: lane")
    assert _refusals(planned) == (
        f"{FIRST}: drifted (its SQL differs from what agent-telemetry applied); "
        "rerun with --adopt to overwrite it",
        f"{SECOND}: a table of this name exists; agent-telemetry only writes views",
    )


def test_a_failed_dry_run_is_refused_with_the_servers_first_line() -> None:
    planned = _failing(plan(), SECOND, "Unrecognized name: lane at [3:5]")
    planned = _failing(planned, FIRST, "Not found: Table p:d.t")
    assert _refusals(planned) == (
        f"{FIRST}: dry run failed: Not found: Table p:d.t",
        f"{SECOND}: dry run failed: Unrecognized name: lane at [3:5]",
    )
    # --patch-sink cannot help when the sink lacks nothing.
    assert _refusals(planned, patch=True) == _refusals(planned)


def test_a_failed_dry_run_with_sink_fields_missing_points_at_patch_sink() -> None:
    sink = _sink_missing_fields()
    planned = _failing(plan(sink=sink), FIRST, "Field name lane does not exist")
    assert _refusals(planned) == (
        f"{FIRST}: dry run failed: Field name lane does not exist",
        f"the sink lacks {len(sink.missing)} payload field(s); "
        "--patch-sink adds them (NULLABLE) before the views are written",
    )
    # With --patch-sink, apply adds the fields and dry-runs the failed views again.
    assert _refusals(planned, patch=True) == ()


def test_missing_sink_fields_alone_refuse_nothing() -> None:
    # Every view dry-runs: the views do not need the fields yet; apply writes them.
    assert _refusals(plan(sink=_sink_missing_fields())) == ()


VIEW = FIRST_VIEW = PARTITIONED[0]
NAMES = [c.name for c in VIEW.columns]


def _field(name: str, type_: str, mode: str = "NULLABLE", *sub: TableField) -> TableField:
    return TableField(name, type_, mode, "the server's words", tuple(sub))


def test_the_written_schema_is_the_generated_columns_with_their_descriptions() -> None:
    schema = column_schema(VIEW, (), ())
    assert [f.name for f in schema] == NAMES
    assert [f.description for f in schema] == [c.description for c in VIEW.columns]
    assert schema == tuple(
        replace(c.schema_field(), description=c.description) for c in VIEW.columns
    )


def test_the_dry_run_of_the_written_query_wins_over_the_live_view_for_types() -> None:
    first, second = VIEW.columns[0], VIEW.columns[1]
    live = [_field(first.name.upper(), "STRING"), _field(second.name, "BOOLEAN")]
    nested = _field("inner", "INTEGER")
    output = [_field(first.name, "TIMESTAMP", "REQUIRED", nested)]
    schema = column_schema(VIEW, live, output)
    by_name = {f.name: f for f in schema}
    # The dry run's name, type, mode and sub-fields; the generated description.
    assert by_name[first.name] == TableField(
        first.name, "TIMESTAMP", "REQUIRED", first.description, (nested,)
    )
    # Not in the dry run: the live view's (matched case-insensitively).
    assert by_name[second.name] == TableField(
        second.name, "BOOLEAN", "NULLABLE", second.description
    )
    # Neither: the generated column.
    third = VIEW.columns[2]
    assert by_name[third.name] == replace(third.schema_field(), description=third.description)
    assert [f.name for f in schema] == NAMES  # the view's order, never the server's


def test_a_live_field_keeps_the_servers_spelling_of_its_name() -> None:
    first = VIEW.columns[0]
    (written, *_) = column_schema(VIEW, [_field(first.name.upper(), "TIMESTAMP")], ())
    assert written.name == first.name.upper()
    assert written.description == first.description


def test_a_table_is_blocked_by_its_kind_whatever_its_labels_say() -> None:
    view = PARTITIONED[0]
    applied = as_applied(view)
    assert applied.state is not None
    labelled = DeployedView(replace(applied.state, kind="TABLE"))
    assert isinstance(labelled.state, TableState)
    assert _refusals(plan(deployed={FIRST: labelled}), adopt=True) == (
        f"{FIRST}: a table of this name exists; agent-telemetry only writes views",
    )


def test_a_blocked_view_with_several_reasons_names_them_all() -> None:
    applied = as_applied(FIRST_VIEW)
    assert applied.state is not None
    edited = replace(applied.state, view_query=FIRST_VIEW.query + "\nLIMIT 1", description="x")
    planned = plan(deployed={FIRST: DeployedView(edited, applied.output)})
    assert _refusals(planned) == (
        f"{FIRST}: drifted (its SQL differs from what agent-telemetry applied; "
        "its description or column descriptions differ from what was applied); "
        "rerun with --adopt to overwrite it",
    )
