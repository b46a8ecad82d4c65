"""The text ``views plan``, ``views approve`` and ``views apply`` print, line for line:
each report rendered from a plan made without a server (as ``make_plan`` assembles one
from BigQuery), an approval record and an apply's result. The server's parts (a view's
diff, a dry run's error) are values here; the emulator tests print the same reports."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agent_telemetry.deploy._approval import approve
from agent_telemetry.deploy._decide import ApplyResult, Outcome, ViewResult
from agent_telemetry.deploy._plan import DeployedView, DeploymentPlan, SinkPlan, ViewPlan
from agent_telemetry.deploy._report import render_apply, render_approval, render_plan
from agent_telemetry.deploy._sink import MissingField, missing_payload_fields
from agent_telemetry.deploy._types import DryRun, TableState
from agent_telemetry.views import TableField
from tests.deploy.plan_cases import make_plan
from tests.deploy.test_approval_gate import PARTITIONED, SINK, plan, unmanaged
from tests.deploy.test_plan import as_applied

RUN, CHAT, RENDER = PARTITIONED[0], PARTITIONED[1], PARTITIONED[2]
HEAD = [
    "target: acme-agents-prod.telemetry (layout partitioned)",
    "source: acme-agents-prod.logs.run_googleapis_com_stdout",
]
# A unified diff as ``render_diff`` writes one: the colours go by each line's first mark.
DIFF = "\n".join(
    [
        "--- deployed/chat_turn",
        "+++ generated/chat_turn",
        "@@ -117,5 +117,3 @@",
        " WHERE",
        "-LIMIT 1",
        "+LIMIT 2",
    ]
)


def _edited_in_the_console() -> DeployedView:
    """chat_turn as applied, then its SQL and its description edited in the console."""
    applied = as_applied(CHAT)
    assert applied.state is not None
    state = replace(
        applied.state, view_query=CHAT.query + "\nLIMIT 1", description="Edited by hand."
    )
    return DeployedView(state, applied.output)


def _failing(planned: DeploymentPlan, name: str, error: str) -> DeploymentPlan:
    views = tuple(
        replace(v, dry_run=DryRun((), error)) if v.name == name else v for v in planned.views
    )
    return replace(planned, views=views)


def _blocked_and_failing() -> DeploymentPlan:
    """pipeline_run unmanaged, chat_turn drifted two ways, pipeline_render to create but
    failing its dry run."""
    planned = plan(
        views=[RUN, CHAT, RENDER],
        deployed={RUN.name: unmanaged(RUN), CHAT.name: _edited_in_the_console()},
    )
    return _failing(planned, RENDER.name, "Unrecognized name: lane at [12:5]")


def _shown(view: ViewPlan) -> list[str]:
    """The view's diff as the plan shows it: six blanks in, line for line."""
    assert view.diff
    return ["      " + line for line in view.diff.splitlines()]


def _view(planned: DeploymentPlan, name: str) -> ViewPlan:
    return next(v for v in planned.views if v.name == name)


def test_a_first_deploy_with_a_missing_sink_field_reads_as_one_create() -> None:
    planned = make_plan("create")
    assert render_plan(planned).splitlines() == [
        "target: acme-agents-prod.agent_telemetry (layout partitioned)",
        "source: acme-agents-prod.agent_logs.run_googleapis_com_stdout",
        "sink acme-agents-prod.agent_logs.run_googleapis_com_stdout: 1 payload field(s) missing",
        "  + jsonPayload.attempt INTEGER",
        "  (apply --patch-sink adds them; nothing is removed or retyped)",
        "",
        "  create     pipeline_render",
        "",
        "dry run: 1 ok, 0 failed",
        "views: 1 create",
        f"plan hash: {planned.plan_hash}",
    ]


def test_nothing_to_do_says_every_field_is_present_and_one_view_unchanged() -> None:
    planned = make_plan("noop")
    assert render_plan(planned) == (
        "target: acme-agents-prod.agent_telemetry (layout partitioned)\n"
        "source: acme-agents-prod.agent_logs.run_googleapis_com_stdout\n"
        "sink acme-agents-prod.agent_logs.run_googleapis_com_stdout: every payload field present\n"
        "\n"
        "  unchanged  pipeline_render\n"
        "\n"
        "dry run: 1 ok, 0 failed\n"
        "views: 1 unchanged\n"
        f"plan hash: {planned.plan_hash}\n"
    )


def test_blocked_views_say_why_and_that_apply_needs_adopt_and_failures_are_counted() -> None:
    planned = _blocked_and_failing()
    assert render_plan(planned).splitlines() == [
        *HEAD,
        f"sink {SINK}: not found",
        "",
        "  unmanaged  pipeline_run: exists without the label managed-by=agent-telemetry"
        " (apply refuses without --adopt)",
        *_shown(_view(planned, RUN.name)),
        "  drifted    chat_turn: its SQL differs from what agent-telemetry applied;"
        " its description or column descriptions differ from what was applied"
        " (apply refuses without --adopt)",
        *_shown(_view(planned, CHAT.name)),
        "  create     pipeline_render",
        "",
        "dry run: 2 ok, 1 failed",
        "  pipeline_render: Unrecognized name: lane at [12:5]",
        "views: 1 create, 1 drifted, 1 unmanaged",
        f"plan hash: {planned.plan_hash}",
    ]


def test_an_update_names_each_reason_and_shows_its_diff() -> None:
    planned = make_plan("update")
    (view,) = planned.views
    lines = render_plan(planned).splitlines()
    start = lines.index("")
    assert lines[start + 1 :] == [
        "  update     pipeline_render: SQL changed; description or column descriptions changed",
        *_shown(view),
        "",
        "dry run: 1 ok, 0 failed",
        "views: 1 update",
        f"plan hash: {planned.plan_hash}",
    ]


def test_colour_marks_the_diff_headers_bold_hunks_cyan_additions_green_removals_red() -> None:
    planned = _blocked_and_failing()
    views = tuple(replace(v, diff=DIFF) if v.name == CHAT.name else v for v in planned.views)
    planned = replace(planned, views=(views[1],))
    lines = render_plan(planned, colour=True).splitlines()
    assert lines[4:12] == [
        "  drifted    chat_turn: its SQL differs from what agent-telemetry applied;"
        " its description or column descriptions differ from what was applied"
        " (apply refuses without --adopt)",
        "      \x1b[1m--- deployed/chat_turn\x1b[0m",
        "      \x1b[1m+++ generated/chat_turn\x1b[0m",
        "      \x1b[36m@@ -117,5 +117,3 @@\x1b[0m",
        "       WHERE",
        "      \x1b[31m-LIMIT 1\x1b[0m",
        "      \x1b[32m+LIMIT 2\x1b[0m",
        "",
    ]
    assert "\x1b" not in "".join(lines[:4] + lines[12:])


def test_text_from_the_server_cannot_split_a_line_colour_the_terminal_or_issue_a_command() -> None:
    """Deployed SQL and dry-run errors are anyone's text: a newline, an escape or a
    ``::`` workflow command in them is shown escaped, one report line each, with and
    without colour (where the only escapes are the plan's own)."""
    hostile = "-x\x1b[2J\n::error::forged"
    diff = DIFF + "\n::warning::in the SQL"
    planned = _failing(_blocked_and_failing(), RENDER.name, hostile)
    views = tuple(replace(v, diff=diff) if v.name == CHAT.name else v for v in planned.views)
    planned = replace(planned, views=views)
    plain = render_plan(planned).splitlines()
    assert "  pipeline_render: -x\\x1b[2J\\n::error::forged" in plain
    assert "      \\x3a:warning::in the SQL" in plain
    assert "\x1b" not in "".join(plain)
    coloured = render_plan(planned, colour=True).splitlines()
    assert "  pipeline_render: -x\\x1b[2J\\n::error::forged" in coloured
    assert "      \\x3a:warning::in the SQL" in coloured
    assert len(coloured) == len(plain)


def test_the_sink_line_says_which_of_the_four_states_the_sink_is_in() -> None:
    analytics = plan(layout="analytics", sink=SinkPlan(table_id=None, state=None, missing=()))
    assert render_plan(analytics).splitlines()[2:4] == [
        "sink: none to check (analytics layout reads Log Analytics' _AllLogs)",
        "",
    ]
    assert render_plan(plan()).splitlines()[2:4] == [f"sink {SINK}: not found", ""]
    assert render_plan(make_plan("noop")).splitlines()[2].endswith(": every payload field present")
    missing = missing_payload_fields((), "partitioned")
    no_payload = TableState(SINK, "TABLE", {}, None, (), None, 1)  # no line logged yet
    whole = plan(sink=SinkPlan(SINK, no_payload, missing))
    assert render_plan(whole).splitlines()[2:6] == [
        f"sink {SINK}: 1 payload field(s) missing",
        "  + jsonPayload RECORD",
        "  (apply --patch-sink adds them; nothing is removed or retyped)",
        "",
    ]


NOW = datetime(2026, 12, 1, 10, 30, 5, tzinfo=UTC)


def test_approve_prints_who_what_until_when_and_the_next_command() -> None:
    planned = plan(
        deployed={RUN.name: unmanaged(RUN), CHAT.name: as_applied(CHAT)},
        sink=SinkPlan(
            SINK,
            None,
            (
                MissingField("jsonPayload.attempt", TableField("attempt", "INTEGER")),
                MissingField("jsonPayload.lane", TableField("lane", "STRING")),
            ),
        ),
    )
    identity = {"git_user": "Ana Analyst <ana@example.com>", "gcloud_account": "ana@example.com"}
    record = approve(planned, "Ana Analyst", now=NOW, identity=identity, valid_days=7)
    assert render_approval(record, "approvals/plan.json").splitlines() == [
        f"approved {planned.plan_hash}",
        "  target acme-agents-prod.telemetry, by Ana Analyst at 2026-12-01T10:30:05Z, valid 7 days",
        "  views: 4 create, 1 unchanged, 1 unmanaged",
        "  identity: git Ana Analyst <ana@example.com>, gcloud ana@example.com",
        "  sink fields to add: jsonPayload.attempt INTEGER, jsonPayload.lane STRING",
        "wrote approvals/plan.json: review it, commit it,"
        " then run views apply --approval approvals/plan.json",
    ]


def test_approve_says_when_only_by_names_the_approver_and_which_one_else_does() -> None:
    planned = plan()
    alone = approve(planned, "Ana Analyst", now=NOW)
    assert render_approval(alone, "a.json").splitlines()[1:4] == [
        "  target acme-agents-prod.telemetry, by Ana Analyst at 2026-12-01T10:30:05Z,"
        " valid 14 days",
        "  views: 6 create",
        "  identity: only --by (no git user, no gcloud)",
    ]
    gcloud = approve(planned, "Ana Analyst", now=NOW, identity={"gcloud_account": "ana@x.io"})
    assert render_approval(gcloud, "a.json").splitlines()[3] == "  identity: gcloud ana@x.io"
    git = approve(planned, "Ana Analyst", now=NOW, identity={"git_user": "Ana <ana@x.io>"})
    assert render_approval(git, "a.json").splitlines()[3:5] == [
        "  identity: git Ana <ana@x.io>",
        "wrote a.json: review it, commit it, then run views apply --approval a.json",
    ]


def test_an_apply_lists_each_outcome_in_order_and_the_totals() -> None:
    planned = make_plan("create")
    result = ApplyResult(
        planned,
        sink_patched=("jsonPayload.attempt INTEGER", "jsonPayload.lane STRING"),
        results=(
            ViewResult("pipeline_run", "unchanged"),
            ViewResult("chat_turn", "adopted", "was unmanaged"),
            ViewResult("pipeline_render", "created"),
            ViewResult("provider_status", "updated", "SQL changed"),
            ViewResult("lane_health", "created"),
        ),
    )
    assert render_apply(result) == (
        f"apply to acme-agents-prod.agent_telemetry (plan {planned.plan_hash})\n"
        "sink acme-agents-prod.agent_logs.run_googleapis_com_stdout: added"
        " jsonPayload.attempt INTEGER, jsonPayload.lane STRING\n"
        "  unchanged  pipeline_run\n"
        "  adopted    chat_turn: was unmanaged\n"
        "  created    pipeline_render\n"
        "  updated    provider_status: SQL changed\n"
        "  created    lane_health\n"
        "applied: 2 created, 1 updated, 1 adopted, 1 unchanged\n"
    )


def test_an_apply_with_nothing_to_write_says_so() -> None:
    planned = make_plan("noop")
    result = ApplyResult(planned, results=(ViewResult("pipeline_render", "unchanged"),))
    assert render_apply(result).splitlines()[1:] == [
        "  unchanged  pipeline_render",
        "applied: 1 unchanged (nothing to do)",
    ]


@pytest.mark.parametrize("outcome", ["created", "updated", "adopted"])
def test_an_apply_that_wrote_one_view_never_says_nothing_to_do(outcome: Outcome) -> None:
    planned = make_plan("create")
    result = ApplyResult(planned, results=(ViewResult("pipeline_render", outcome),))
    assert render_apply(result).splitlines()[1:] == [
        f"  {outcome:<9}  pipeline_render",
        f"applied: 1 {outcome}",
    ]


def test_an_apply_that_only_patched_the_sink_never_says_nothing_to_do() -> None:
    """The sink table was written even though every view was already as generated."""
    planned = make_plan("noop")
    result = ApplyResult(
        planned,
        sink_patched=("jsonPayload.attempt INTEGER",),
        results=(ViewResult("pipeline_render", "unchanged"),),
    )
    assert render_apply(result).splitlines()[1:] == [
        "sink acme-agents-prod.agent_logs.run_googleapis_com_stdout: added"
        " jsonPayload.attempt INTEGER",
        "  unchanged  pipeline_render",
        "applied: 1 unchanged",
    ]


def test_a_failed_view_makes_the_apply_incomplete_and_asks_for_a_rerun() -> None:
    planned = make_plan("update")
    failed = ViewResult("pipeline_render", "failed", "Access Denied: table")
    alone = ApplyResult(planned, results=(failed,))
    assert render_apply(alone).splitlines()[1:] == [
        "  failed     pipeline_render: Access Denied: table",
        "incomplete: 1 failed; rerun apply",
    ]
    after_one = ApplyResult(planned, results=(ViewResult("chat_turn", "created"), failed))
    assert render_apply(after_one).splitlines()[-1] == (
        "incomplete: 1 created, 1 failed; rerun apply"
    )


def test_a_refused_apply_lists_every_reason_and_says_what_was_written() -> None:
    planned = make_plan("create")
    reasons = ("pipeline_run: unmanaged (exists); rerun with --adopt", "approval expired")
    nothing = ApplyResult(planned, refused=reasons)
    assert render_apply(nothing) == (
        f"apply to acme-agents-prod.agent_telemetry (plan {planned.plan_hash})\n"
        "refused; nothing written:\n"
        "  - pipeline_run: unmanaged (exists); rerun with --adopt\n"
        "  - approval expired\n"
    )
    sink_only = ApplyResult(planned, refused=reasons[1:], sink_patched=("jsonPayload.a INTEGER",))
    assert render_apply(sink_only).splitlines()[1:] == [
        "sink acme-agents-prod.agent_logs.run_googleapis_com_stdout: added jsonPayload.a INTEGER",
        "refused; no view written:",
        "  - approval expired",
    ]


def test_an_approval_for_one_day_says_one_day() -> None:
    record = approve(plan(), "Ana Analyst", now=NOW, valid_days=1)
    assert render_approval(record, "a.json").splitlines()[1].endswith(", valid 1 day")
