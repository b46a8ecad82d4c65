"""views plan --html: the owner's review page, rendered from a plan made without a server,
opened in headless chromium from file://; docs/img/review-page.png is its screenshot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_telemetry.deploy._capacity import capacity_changes
from agent_telemetry.deploy._plan import assemble_plan
from agent_telemetry.deploy._plan_document import approve_command, plan_document
from agent_telemetry.deploy._review_page import render_review_page, write_review_page
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, load_catalogue
from agent_telemetry.schema.lock import LOCK_PATH, read_lock
from tests.browser import DESKTOP, PHONE, file_url, visit
from tests.deploy.plan_cases import first_deploy, make_plan
from tests.pages import assert_no_page_scroll, assert_quiet_and_offline, screenshot

COMMAND = approve_command(Path("telemetry.toml"), None, None)
SPECS = load_catalogue(DEFAULT_MODULE).version_specs()


def _document(plan: Any) -> Any:
    return plan_document(plan, COMMAND, capacity_changes(plan, SPECS, read_lock(LOCK_PATH)))


HOSTILE = '<img src="http://example.invalid/pixel.png" onerror="alert(1)"><script>alert(2)</script>'


def _hostile_update() -> Any:
    """The update plan, its deployed view carrying a description that is markup."""
    plan = make_plan("update")
    (view,) = plan.views
    assert view.deployed.state is not None
    state = view.deployed.state
    schema = tuple(
        replace(f, description=HOSTILE) if f.name == "passed" else f for f in state.schema
    )
    state = replace(
        state,
        description=HOSTILE,
        schema=schema,  # a column description the page shows (was -> now)
        view_query=state.view_query + f"\n-- {HOSTILE}",  # and a line of the SQL
    )
    deployed = replace(view.deployed, state=state)
    return assemble_plan(
        target=plan.target,
        source=plan.source,
        layout=plan.layout,
        views=(replace(view, deployed=deployed),),
        sink=plan.sink,
    )


def test_the_page_names_everything_the_owner_approves() -> None:
    doc = _document(make_plan("update"))
    html = render_review_page(doc)
    assert doc.plan_hash in html
    assert "agent-telemetry views approve --config telemetry.toml" in html
    assert "48,213,504 bytes" in html
    assert "<code>attempt</code></td><td>added</td>" in html
    assert "redescribed" in html
    assert 'class="diff"' in html  # the SQL side by side
    assert "can say at most <strong>31.3 bits</strong>" in html  # the whole line, per event


def test_deployed_text_cannot_become_markup_or_a_request(browser: Any, tmp_path: Path) -> None:
    doc = _document(_hostile_update())
    page = tmp_path / "review.html"
    write_review_page(doc, page)
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "<img" not in html
    with visit(browser, file_url(page)) as seen:
        assert_quiet_and_offline(seen)  # an <img src=http://...> would have requested


def test_the_review_page_in_the_browser(browser: Any, tmp_path: Path) -> None:
    for case in ("create", "update", "noop"):
        page = tmp_path / f"review-{case}.html"
        write_review_page(_document(make_plan(case)), page)
        with visit(browser, file_url(page)) as seen:
            shown = seen.page.evaluate(
                "() => ({hash: document.getElementById('plan-hash').textContent,"
                " command: document.getElementById('approve-command').textContent,"
                " diffs: document.querySelectorAll('table.diff').length})"
            )
            if case == "update":
                screenshot(seen, "review-page.png", tmp_path)
            assert_quiet_and_offline(seen)
        assert shown["hash"].startswith("sha256:")
        assert shown["command"] == COMMAND
        assert shown["diffs"] == (1 if case == "update" else 0)


# Where the reader's eye lands first, laid out by chromium: the approve command above every
# view, each view a <details> that opens on a click.
FIRST_SCREEN_JS = """
() => {
  const top = (el) => el.getBoundingClientRect().top + window.scrollY;
  const views = Array.from(document.querySelectorAll('details.view'));
  return {
    command: top(document.getElementById('approve-command')),
    summary: top(document.getElementById('summary')),
    firstView: views.length ? top(views[0]) : null,
    views: views.length,
    open: views.filter((d) => d.open).length,
    height: document.documentElement.scrollHeight,
  };
}
"""


def test_a_first_deploy_starts_with_the_summary_and_the_approve_command(
    browser: Any, tmp_path: Path
) -> None:
    plan = first_deploy(SPECS)
    page = tmp_path / "first.html"
    write_review_page(_document(plan), page)
    for viewport in (DESKTOP, PHONE):
        with visit(browser, file_url(page), viewport) as seen:
            laid = seen.page.evaluate(FIRST_SCREEN_JS)
            assert laid["views"] == 6
            assert laid["summary"] < laid["command"] < laid["firstView"]
            assert laid["command"] < viewport["height"]  # on the first screen
            assert laid["open"] == 0  # six views: each collapsed, a click opens it
            assert_no_page_scroll(seen)
            seen.page.click("details.view summary")  # the first view opens
            assert seen.page.evaluate(FIRST_SCREEN_JS)["open"] == 1
            assert_no_page_scroll(seen)  # its SQL scrolls inside itself, if at all
    with visit(browser, file_url(page)) as seen:
        assert seen.page.evaluate(FIRST_SCREEN_JS)["height"] < 3 * DESKTOP["height"]


def test_no_review_page_scrolls_sideways_on_a_phone(browser: Any, tmp_path: Path) -> None:
    for case in ("create", "update", "noop"):
        page = tmp_path / f"review-{case}.html"
        write_review_page(_document(make_plan(case)), page)
        with visit(browser, file_url(page), PHONE) as seen:
            assert_no_page_scroll(seen)
