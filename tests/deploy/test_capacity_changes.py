"""The capacity change a plan reports per event view (``views plan --format json`` and
the review page): after = the catalogue's version, before = the version the deployed view
serves (its ``schema-version`` label) as the committed lock records it. Plans are made
without a server; the deployed view is a state with that label."""

from __future__ import annotations

from dataclasses import replace

from agent_telemetry.deploy._capacity import capacity_changes
from agent_telemetry.deploy._plan import (
    DeployedView,
    DeploymentPlan,
    SinkPlan,
    assemble_plan,
    view_plan,
)
from agent_telemetry.deploy._plan_document import CapacityChange, FieldBits
from agent_telemetry.deploy._types import DryRun, TableState
from agent_telemetry.schema.capacity import event_capacity
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, load_catalogue
from agent_telemetry.schema.lock import SchemaLock, build_lock
from agent_telemetry.schema.spec import EventSpec
from agent_telemetry.views import generate_views
from tests.deploy.plan_cases import CONFIG, SINK_TABLE

SPECS = load_catalogue(DEFAULT_MODULE).version_specs()
V1 = next(s for s in SPECS if s.name == "pipeline_render")


def _v2() -> EventSpec:
    """pipeline_render 2: a third theme, ``passed`` dropped, ``cached`` added."""
    fields = []
    for field in V1.fields:
        if field.name == "theme":
            fields.append(replace(field, members=(*field.members, "sepia")))
        elif field.name == "passed":
            fields.append(replace(field, name="cached"))
        else:
            fields.append(field)
    return replace(V1, schema_version=2, fields=tuple(fields))


V2 = _v2()
CATALOGUE = (*SPECS, V2)  # the catalogue once version 2 is written
LOCK = build_lock([*SPECS])  # the reviewed state: version 1 of every event


def _plan(spec: EventSpec, label: str | None, *, quality_first: bool = False) -> DeploymentPlan:
    """The plan of ``spec``'s views, its event view deployed with ``schema-version``
    ``label`` (None: no label; "-": not deployed)."""
    views = generate_views(CONFIG, specs=(spec,))
    if quality_first:
        views = tuple(reversed(views))
    lines = []
    for view in views:
        deployed = DeployedView(None)
        if view.event is not None and label != "-":
            labels = {} if label is None else {"schema-version": label}
            state = TableState(view.table_id, "VIEW", labels, None, (), view.query, 1)
            deployed = DeployedView(state)
        lines.append(view_plan(view, deployed, DryRun(())))
    return assemble_plan(
        target="p.d",
        source=SINK_TABLE,
        layout="partitioned",
        views=tuple(lines),
        sink=SinkPlan(SINK_TABLE, None, ()),
    )


def _bits(spec: EventSpec, field: str) -> str:
    found = event_capacity(spec).field(field)
    assert found is not None
    return found.bits


def test_a_new_version_shows_each_changed_new_and_dropped_fields_bits() -> None:
    (change,) = capacity_changes(_plan(V2, "1"), CATALOGUE, LOCK)
    assert change == CapacityChange(
        view="pipeline_render_v2",
        event="pipeline_render",
        schema_version=2,
        deployed_version=1,
        bits_before=event_capacity(V1).bits,
        bits_after=event_capacity(V2).bits,
        fields=[
            FieldBits(name="theme", bits_before=_bits(V1, "theme"), bits_after=_bits(V2, "theme")),
            FieldBits(name="cached", bits_before=None, bits_after=_bits(V2, "cached")),
            FieldBits(name="passed", bits_before=_bits(V1, "passed"), bits_after=None),
        ],
    )
    assert _bits(V1, "theme") != _bits(V2, "theme")


def test_the_same_version_deployed_changes_no_field() -> None:
    (change,) = capacity_changes(_plan(V1, "1"), SPECS, LOCK)
    assert (change.deployed_version, change.fields) == (1, [])
    assert change.bits_before == change.bits_after == event_capacity(V1).bits


def test_before_is_unknown_where_the_lock_cannot_say_what_is_deployed() -> None:
    """Not deployed, no label, a label that is not a version, a version or an event the
    lock does not hold, no lock: after only, and no field list."""
    after_only = CapacityChange(
        view="pipeline_render_v2",
        event="pipeline_render",
        schema_version=2,
        deployed_version=None,
        bits_before=None,
        bits_after=event_capacity(V2).bits,
        fields=[],
    )
    without_render = SchemaLock(
        events={k: v for k, v in LOCK.events.items() if k != "pipeline_render"}
    )
    for label, lock in (
        ("-", LOCK),
        (None, LOCK),
        ("v1", LOCK),
        ("", LOCK),
        ("7", LOCK),
        ("1", without_render),
        ("1", None),
    ):
        assert capacity_changes(_plan(V2, label), CATALOGUE, lock) == [after_only], (label, lock)


def test_views_without_an_event_or_without_a_spec_are_left_out_wherever_they_are() -> None:
    """telemetry_quality has no event of its own; a view whose version the catalogue given
    does not hold has nothing to measure. The event views after them still count."""
    planned = _plan(V2, "1", quality_first=True)
    assert [v.view.event for v in planned.views] == [None, "pipeline_render"]
    (change,) = capacity_changes(planned, CATALOGUE, LOCK)
    assert change.schema_version == 2
    both = replace(planned, views=(*_plan(V1, "1").views, *planned.views))
    assert [c.schema_version for c in capacity_changes(both, [V2], LOCK)] == [2]
