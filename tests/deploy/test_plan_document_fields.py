"""The plan document's fields (what bots read as JSON, and what the comment and the review
page print), for the plans the golden files do not show: the summary of several actions,
a sink not found, capacity fields new and gone, deployed SQL the server hides, and the
columns that change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agent_telemetry.deploy._plan import SinkPlan, assemble_plan
from agent_telemetry.deploy._plan_document import (
    CapacityChange,
    FieldBits,
    PlanDocument,
    approve_command,
    column_changes,
    plan_document,
)
from agent_telemetry.deploy._plan_markdown import render_markdown
from agent_telemetry.views import TableField, ViewDefinition
from tests.deploy.plan_cases import SINK_TABLE, VIEW, make_plan

COMMAND = approve_command(Path("telemetry.toml"), None, None)


def _doc(case: str) -> PlanDocument:
    return plan_document(make_plan(case), COMMAND)


def test_the_summary_counts_every_action_in_order() -> None:
    create, update = _doc("create").views[0], _doc("update").views[0]
    doc = _doc("update").model_copy(
        update={"views": [update, create, update], "counts": {"create": 1, "update": 2}}
    )
    assert "\nViews: 1 create, 2 update.\n" in render_markdown(doc)


def test_a_sink_not_found_is_said_and_a_layout_without_one_says_nothing() -> None:
    plan = make_plan("update")
    missing = assemble_plan(
        target=plan.target,
        source=plan.source,
        layout=plan.layout,
        views=plan.views,
        sink=SinkPlan(SINK_TABLE, None, ()),
    )
    doc = plan_document(missing, COMMAND)
    assert (doc.sink.table, doc.sink.found, doc.sink.missing) == (SINK_TABLE, False, [])
    lines = render_markdown(doc).splitlines()
    assert lines[5:8] == ["", f"Sink `{SINK_TABLE}`: not found.", ""]
    none = doc.model_copy(update={"sink": doc.sink.model_copy(update={"table": None})})
    assert "Sink" not in render_markdown(none)


def test_capacity_fields_new_and_gone() -> None:
    doc = _doc("update").model_copy(
        update={
            "capacity": [
                CapacityChange(
                    view="pipeline_render",
                    event="pipeline_render",
                    schema_version=2,
                    deployed_version=1,
                    bits_before="31.3",
                    bits_after="33.1",
                    fields=[
                        FieldBits(name="attempt", bits_before=None, bits_after="1.0"),
                        FieldBits(name="passed", bits_before="1.0", bits_after=None),
                        FieldBits(name="render_ms", bits_before="9.2", bits_after="9.9"),
                    ],
                )
            ]
        }
    )
    assert (
        "| `pipeline_render` | 31.3 (v1) | 33.1 (v2) | "
        "`attempt` new → 1.0, `passed` 1.0 → gone, `render_ms` 9.2 → 9.9 |"
    ) in render_markdown(doc).splitlines()


def test_deployed_sql_the_server_hides_is_null_not_a_guess() -> None:
    plan = make_plan("update")
    (view,) = plan.views
    assert view.deployed.state is not None
    hidden = replace(view.deployed, state=replace(view.deployed.state, view_query=None))
    plan = replace(plan, views=(replace(view, deployed=hidden),))
    (changed,) = plan_document(plan, COMMAND).views
    assert changed.sql_before is None
    assert changed.sql_after == view.view.query


def _columns(
    deployed_schema: tuple[TableField, ...], kind: str = "VIEW", view: ViewDefinition = VIEW
) -> list[tuple[str | None, ...]]:
    """Column changes from the generated ``view`` to one deployed with ``deployed_schema``."""
    plan = make_plan("update")
    (planned,) = plan.views
    assert planned.deployed.state is not None
    state = replace(planned.deployed.state, schema=deployed_schema, kind=kind)
    changed = replace(planned, view=view, deployed=replace(planned.deployed, state=state))
    return [
        (c.name, c.change, c.type_before, c.type_after, c.description_before, c.description_after)
        for c in column_changes(changed)
    ]


GENERATED = tuple(c.schema_field() for c in VIEW.columns)


def test_a_column_deployed_as_generated_is_no_change_whatever_the_case_of_its_name() -> None:
    assert _columns(GENERATED) == []
    assert _columns(tuple(replace(f, name=f.name.upper()) for f in GENERATED)) == []


def test_no_description_and_an_empty_one_are_the_same() -> None:
    """BigQuery leaves an empty description out: generated "" and deployed none is no
    change; "" against a text is."""
    blank = replace(
        VIEW,
        columns=tuple(replace(c, description="") if c.name == "theme" else c for c in VIEW.columns),
    )
    undescribed = tuple(replace(f, description=None) if f.name == "theme" else f for f in GENERATED)
    assert _columns(undescribed, view=blank) == []
    described = tuple(replace(f, description="Old.") if f.name == "theme" else f for f in GENERATED)
    assert _columns(described, view=blank) == [
        ("theme", "redescribed", "STRING", "STRING", "Old.", "")
    ]


def test_a_table_where_the_view_should_be_adds_every_column() -> None:
    changes = _columns(GENERATED, kind="TABLE")
    assert [(c[0], c[1], c[2]) for c in changes] == [(f.name, "added", None) for f in GENERATED]


def test_deployed_columns_retyped_and_removed_in_order_their_server_text_cleaned() -> None:
    """Generated order first, then the removed ones in the deployed order; every piece of
    server text (name, type, description) cleaned once, here."""
    retyped = tuple(
        replace(f, type="STRING", description="Old\ttext\x1b[2J") if f.name == "passed" else f
        for f in GENERATED
    )
    schema = (
        *retyped,
        TableField("gone\u202e", "INT64\n", description="Was\nhere."),
        TableField("also_gone", "BOOL", mode="REPEATED"),
    )
    assert _columns(schema)[0] == (
        "passed",
        "retyped",
        "STRING",
        "BOOLEAN",
        "Old\\ttext\\x1b[2J",
        "Whether the rendered output passed its checks.",
    )
    assert _columns(schema)[1:] == [
        ("gone\\u202e", "removed", "INT64\\n", None, "Was\\nhere.", None),
        ("also_gone", "removed", "ARRAY<BOOL>", None, None, None),
    ]
