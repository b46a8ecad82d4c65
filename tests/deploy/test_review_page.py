"""views plan --html: the owner's review page, rendered from a plan made without a server,
opened in headless chromium from file://; docs/img/review-page.png is its screenshot."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_telemetry.deploy._plan import assemble_plan
from agent_telemetry.deploy._plan_document import approve_command, plan_document
from agent_telemetry.deploy._review_page import render_review_page, write_review_page
from tests.browser import file_url, visit
from tests.deploy.plan_cases import make_plan
from tests.pages import assert_quiet_and_offline, screenshot

COMMAND = approve_command(Path("telemetry.toml"), None, None)
HOSTILE = '<img src="http://example.invalid/pixel.png" onerror="alert(1)"><script>alert(2)</script>'


def _hostile_update() -> Any:
    """The update plan, its deployed view carrying a description that is markup."""
    plan = make_plan("update")
    (view,) = plan.views
    assert view.deployed.state is not None
    state = replace(
        view.deployed.state,
        description=HOSTILE,
        view_query=view.deployed.state.view_query + f"\n-- {HOSTILE}",
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
    doc = plan_document(make_plan("update"), COMMAND)
    html = render_review_page(doc)
    assert doc.plan_hash in html
    assert "agent-telemetry views approve --config telemetry.toml" in html
    assert "48,213,504 bytes" in html
    assert "<code>attempt</code></td><td>added</td>" in html
    assert "redescribed" in html
    assert 'class="diff"' in html  # the SQL side by side


def test_deployed_text_cannot_become_markup_or_a_request(browser: Any, tmp_path: Path) -> None:
    doc = plan_document(_hostile_update(), COMMAND)
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
        write_review_page(plan_document(make_plan(case), COMMAND), page)
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
