"""views plan --format markdown, line by line: what the owner reads in the pull-request
comment for the plans the golden files do not show (a view changed by hand whose dry run
failed, a dry run with no byte count, a column retyped or removed, server text with quotes
or backticks, a server line too long to show), each line asserted exactly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.deploy._plan import (
    SQL_LABEL,
    DeployedView,
    DeploymentPlan,
    SinkPlan,
    assemble_plan,
    view_plan,
)
from agent_telemetry.deploy._plan_document import PlanDocument, approve_command, plan_document
from agent_telemetry.deploy._plan_markdown import render_markdown
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.views import TableField
from tests.deploy.plan_cases import SINK_TABLE, VIEW, deployed_as

COMMAND = approve_command(Path("telemetry.toml"), None, None)
TRUNCATED = (
    "the full plan is in the review page (`agent-telemetry views plan --html FILE`) and "
    "in `agent-telemetry views plan --format json`"
)


def _plan(
    deployed: DeployedView, dry_run: DryRun, target: str = "p.d", source: str = SINK_TABLE
) -> DeploymentPlan:
    return assemble_plan(
        target=target,
        source=source,
        layout="partitioned",
        views=(view_plan(VIEW, deployed, dry_run),),
        sink=SinkPlan(None, None, ()),
    )


def _document(
    deployed: DeployedView, dry_run: DryRun, target: str = "p.d", source: str = SINK_TABLE
) -> PlanDocument:
    return plan_document(_plan(deployed, dry_run, target, source), COMMAND)


def _deployed(**changes: Any) -> DeployedView:
    """The generated view as deployed, with ``changes`` to its state."""
    deployed = deployed_as(VIEW)
    assert deployed.state is not None
    return replace(deployed, state=replace(deployed.state, **changes))


def _section(text: str) -> list[str]:
    """The one view's collapsed section, ``<details>`` to ``</details>``."""
    lines = text.splitlines()
    return lines[lines.index("<details>") : lines.index("</details>") + 1]


def _row(text: str) -> str:
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| `pipeline_render` |")]
    return row


def test_a_view_changed_by_hand_whose_dry_run_failed() -> None:
    """Drifted (its SQL label no longer matches): blocked without --adopt, no diff to show
    (so no empty code block), and the server's error in code."""
    labels = deployed_as(VIEW).state.labels  # type: ignore[union-attr]
    deployed = _deployed(labels={**labels, SQL_LABEL: "0" * 32})
    doc = _document(deployed, DryRun((), error="Syntax error: Unexpected `x` at [1:2]"))
    text = render_markdown(doc)
    assert _section(text) == [
        "<details>",
        "<summary><b>drifted</b> <code>pipeline_render</code>: <code>its SQL differs from "
        "what agent-telemetry applied</code> (apply refuses without <code>--adopt</code>)"
        "</summary>",
        "",
        "Dry run: failed: ``Syntax error: Unexpected `x` at [1:2]``.",
        "",
        "</details>",
    ]
    assert _row(text) == (
        "| `pipeline_render` | drifted | failed: ``Syntax error: Unexpected `x` at [1:2]`` |"
    )


def test_a_dry_run_that_reports_no_bytes_reads_ok() -> None:
    doc = _document(_deployed(labels={}), DryRun(()))  # unmanaged: no managed-by label
    text = render_markdown(doc)
    assert _row(text) == "| `pipeline_render` | unmanaged | ok |"
    assert "Dry run: ok." in _section(text)
    blocked = doc.model_copy(update={"views": [doc.views[0].model_copy(update={"blocked": False})]})
    assert "refuses" not in _section(render_markdown(blocked))[1]


def test_a_dry_run_failure_without_a_message_shows_an_empty_cell() -> None:
    doc = _document(_deployed(labels={}), DryRun((), error=""))
    assert _row(render_markdown(doc)) == "| `pipeline_render` | unmanaged | failed:  |"


def _columns_table(text: str) -> list[str]:
    lines = _section(text)
    start = lines.index("| column | change | type | description |")
    return lines[start : lines.index("", start)]


def test_retyped_and_removed_columns() -> None:
    """A column retyped shows both types; a removed one its deployed type and description;
    a removed one the server gave no type and no description shows empty cells."""
    state = deployed_as(VIEW).state
    assert state is not None
    schema = tuple(replace(f, type="STRING") if f.name == "passed" else f for f in state.schema)
    schema += (
        TableField("retired_ms", "INTEGER", description="Milliseconds, retired."),
        TableField("blank", ""),
    )
    text = render_markdown(_document(_deployed(schema=schema), DryRun((), bytes_processed=0)))
    assert _columns_table(text) == [
        "| column | change | type | description |",
        "|---|---|---|---|",
        "| `passed` | retyped | `STRING → BOOLEAN` | "
        "`Whether the rendered output passed its checks.` |",
        "| `retired_ms` | removed | `INTEGER` | `Milliseconds, retired.` |",
        "| `blank` | removed |  |  |",
    ]


def test_a_quote_in_a_reason_stays_a_quote() -> None:
    """HTML-escaped for the summary, but only what HTML needs: the comment's text (what a
    bot or a plain-text notification carries) keeps a quote as written."""
    doc = _document(_deployed(labels={}), DryRun(()))
    view = doc.views[0].model_copy(update={"reasons": ["label \"team\" is 'ops' <b>&"]})
    summary = _section(render_markdown(doc.model_copy(update={"views": [view]})))[1]
    assert summary == (
        "<summary><b>unmanaged</b> <code>pipeline_render</code>: "
        "<code>label \"team\" is 'ops' &lt;b&gt;&amp;</code> "
        "(apply refuses without <code>--adopt</code>)</summary>"
    )


@pytest.mark.parametrize(("run", "fence"), [("`", "```"), ("```", "````"), ("`````", "``````")])
def test_the_code_block_fence_is_as_long_as_needed(run: str, fence: str) -> None:
    """Longer than any backtick run in the deployed text (else the block closes early and
    the rest renders live), and no longer than needed."""
    state = deployed_as(VIEW).state
    assert state is not None
    schema = tuple(
        replace(f, description=f"Old {run}passed{run} text.") if f.name == "passed" else f
        for f in state.schema
    )
    text = render_markdown(_document(_deployed(schema=schema), DryRun(())))
    section = _section(text)
    opening = section.index(f"{fence}diff")
    assert section[-3] == fence
    assert f"-# column passed BOOLEAN: Old {run}passed{run} text." in section[opening:]
    assert "```sh" in text.splitlines()  # the approve command: no backtick, three


def _gone(characters: int) -> str:
    return f"(a line of {characters:,} characters, left out: {TRUNCATED})"


def test_a_server_line_of_2000_characters_is_kept_and_a_longer_one_left_out_whole() -> None:
    """ "Source: `...`." is 11 characters around the source's name."""
    for name, shown in (("s" * 1_989, f"Source: `{'s' * 1_989}`."), ("s" * 1_990, _gone(2_001))):
        lines = render_markdown(_document(_deployed(labels={}), DryRun(()), source=name))
        assert lines.splitlines()[2] == shown


def test_a_line_left_out_keeps_its_kind() -> None:
    """A heading stays a heading, a table row a row of its table, a summary a summary (so
    the section still opens), any other line plain text."""
    long = "x" * 3_000
    view = DryRun((), error=f"Syntax error: {long}")
    text = render_markdown(_document(_deployed(labels={}), view, target=long))
    lines = text.splitlines()
    assert lines[0] == f"### {_gone(3_055)}"
    assert lines[lines.index("|---|---|---|") + 1] == f"| {_gone(3_060)} |"
    doc = _document(_deployed(labels={}), DryRun(()))
    view_change = doc.views[0].model_copy(update={"reasons": [long]})
    section = _section(render_markdown(doc.model_copy(update={"views": [view_change]})))
    assert section[1] == f"<summary>{_gone(3_124)}</summary>"
    assert _section(text)[3] == _gone(3_034)
