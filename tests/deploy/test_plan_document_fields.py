"""The plan document's fields (what bots read as JSON, and what the comment and the review
page print), for the plans the golden files do not show: the summary of several actions,
a sink not found, capacity fields new and gone, deployed SQL the server hides, and the
review page's SQL side by side."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agent_telemetry.deploy._plan import SinkPlan, assemble_plan
from agent_telemetry.deploy._plan_document import (
    CapacityChange,
    FieldBits,
    PlanDocument,
    approve_command,
    plan_document,
)
from agent_telemetry.deploy._plan_markdown import render_markdown
from agent_telemetry.deploy._review_page import render_review_page
from tests.deploy.plan_cases import SINK_TABLE, make_plan

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


def test_the_review_page_shows_the_sql_side_by_side_folded() -> None:
    """Deployed on the left, generated on the right, each side named; unchanged stretches
    folded to three lines of context."""
    doc = _doc("update")
    html = render_review_page(doc)
    start = html.index('<table class="diff"')
    table = html[start : html.index("</table>", start) + 8]
    assert '<th colspan="2" class="diff_header">deployed</th>' in table
    assert '<th colspan="2" class="diff_header">generated</th>' in table
    (added,) = [row for row in table.split("<tr>") if "attempt&nbsp;AS&nbsp;FLOAT64" in row]
    assert added.index('id="to0_') < added.index("jsonPayload.attempt")  # on the right
    assert 'id="from0_' not in added  # nothing on the left
    first = doc.views[0].sql_after.splitlines()[0].replace(" ", "&nbsp;")
    assert first not in table  # far from any change: folded
    assert "&nbsp;AS&nbsp;render_ms," in table  # three lines above a change: shown
