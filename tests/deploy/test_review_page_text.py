"""views plan --html, as text: what the review page says for a create, an update and a
no-op, and its SQL side by side (deployed | generated), asserted on the HTML without a
browser (test_review_page.py opens the page in chromium)."""

from __future__ import annotations

import re
from pathlib import Path

from agent_telemetry.deploy._plan_document import PlanDocument, approve_command, plan_document
from agent_telemetry.deploy._review_page import render_review_page, write_review_page
from tests.deploy.plan_cases import make_plan

COMMAND = approve_command(Path("telemetry.toml"), None, None)


def _doc(case: str) -> PlanDocument:
    return plan_document(make_plan(case), COMMAND)


def _diff_table(html: str) -> str:
    """The page's one SQL table; its in-page ids numbered as for the first table of a
    process (difflib numbers every table it makes)."""
    start = html.index('<table class="diff"')
    return _first(html[start : html.index("</table>", start) + len("</table>")])


def _first(html: str) -> str:
    html = re.sub(r"difflib_chg_to\d+__", "difflib_chg_to0__", html)
    return re.sub(r'id="(to|from)\d+_', r'id="\g<1>0_', html)


def test_a_noop_page_lists_the_view_as_unchanged_and_opens_no_section() -> None:
    html = render_review_page(_doc("noop"))
    assert '<details class="view"' not in html
    assert (
        "<h2>Unchanged</h2>\n<p><code>pipeline_render</code>: deployed exactly as generated; "
        "apply leaves them alone.</p>"
    ) in html
    assert "Nothing to do: every view is at its generated definition." in html


def test_an_update_page_opens_its_one_view_and_lists_nothing_unchanged() -> None:
    html = render_review_page(_doc("update"))
    assert html.count('<details class="view" id="view-pipeline_render" open>') == 1
    assert "<h2>Unchanged</h2>" not in html
    assert "\n1 update.\n" in html


def test_the_page_ends_with_a_newline() -> None:
    html = render_review_page(_doc("create"))
    assert html.endswith("</body>\n</html>\n")


def test_outside_text_is_escaped_on_the_page() -> None:
    doc = _doc("update")
    view = doc.views[0].model_copy(update={"reasons": ['<img src=x onerror="alert(1)">']})
    html = render_review_page(doc.model_copy(update={"views": [view]}))
    assert "<img" not in html
    assert ": &lt;img src=x onerror=&#34;alert(1)&#34;&gt;.</p>" in html


def test_the_sql_side_by_side_named_folded_and_wrapping() -> None:
    """Deployed on the left, generated on the right, each side named; unchanged stretches
    folded to three lines of context; no cell kept from wrapping; the text columns given
    the width."""
    table = _diff_table(render_review_page(_doc("update")))
    assert '<th colspan="2" class="diff_header">deployed</th>' in table
    assert '<th colspan="2" class="diff_header">generated</th>' in table
    assert table.count('<col style="width:1.2rem"><col style="width:2.8rem"><col>') == 2
    assert "colgroup" not in table
    assert "nowrap" not in table
    context = [
        "SAFE_CAST(sink.jsonPayload.render_ms&nbsp;AS&nbsp;FLOAT64)&nbsp;AS&nbsp;render_ms,",
        "SAFE_CAST(sink.jsonPayload.slot_wait_ms&nbsp;AS&nbsp;FLOAT64)&nbsp;AS&nbsp;slot_wait_ms,",
        "SAFE_CAST(sink.jsonPayload.render_lane&nbsp;AS&nbsp;STRING)&nbsp;AS&nbsp;render_lane,",
    ]
    assert f'<td class="diff_header" id="from0_8">8</td><td>{"&nbsp;" * 4}{context[1]}' in table
    assert context[0] in table  # three lines above the first change, shown
    assert context[2] not in table  # the fourth, folded
    (added,) = [row for row in table.split("<tr>") if "attempt&nbsp;AS&nbsp;FLOAT64" in row]
    assert added.index('id="to0_') < added.index("jsonPayload.attempt")  # on the right
    assert 'id="from0_' not in added  # nothing on the left


def test_a_tab_in_the_sql_is_four_columns() -> None:
    doc = _doc("update")
    view = doc.views[0]
    tabbed = view.model_copy(
        update={"sql_after": view.sql_after.replace("    SAFE_CAST", "\tSAFE_CAST")}
    )
    table = _diff_table(render_review_page(doc.model_copy(update={"views": [tabbed]})))
    assert f'diff_add">{"&nbsp;" * 4}SAFE_CAST(sink.jsonPayload.attempt&nbsp;AS' in table


def test_the_page_written_is_the_page_rendered(tmp_path: Path) -> None:
    doc = _doc("update")
    page = tmp_path / "review.html"
    write_review_page(doc, page)
    assert _first(page.read_text(encoding="utf-8")) == _first(render_review_page(doc))
