"""Plain-text reports of a plan, an approval and an apply, as the CLI prints them.

Most of what they quote came from outside: deployed descriptions and SQL (anyone with
console access edits them), server error messages, config names, approver names. Every
line leaves through ``_text.clean`` (``_lines``): one output line per report line, no
control character, no workflow command.
"""

from __future__ import annotations

import click

from agent_telemetry._text import clean
from agent_telemetry.deploy._approval import Approval, days
from agent_telemetry.deploy._decide import ApplyResult
from agent_telemetry.deploy._plan import ACTIONS, DeploymentPlan

_WIDTH = max(len(a) for a in (*ACTIONS, "created", "updated", "adopted", "failed"))


def _indent(text: str, prefix: str = "      ") -> list[str]:
    return [prefix + line for line in text.splitlines()]


class _Shown(str):
    """A line already made safe (cleaned, then coloured by us): ``_lines`` keeps it."""

    __slots__ = ()


def _lines(lines: list[str]) -> str:
    return "".join((line if isinstance(line, _Shown) else clean(line)) + "\n" for line in lines)


def _styled(line: str) -> str:
    if line.startswith(("--- ", "+++ ")):
        return click.style(line, bold=True)
    if line.startswith("@@"):
        return click.style(line, fg="cyan")
    if line.startswith("+"):
        return click.style(line, fg="green")
    if line.startswith("-"):
        return click.style(line, fg="red")
    return line


def colour_diff(text: str) -> str:
    """A unified diff with ANSI colours: only for a terminal, or when asked. Each line is
    cleaned first: the colours are the only escapes in it."""
    return "\n".join(_styled(clean(line)) for line in text.splitlines())


def sink_lines(plan: DeploymentPlan) -> list[str]:
    sink = plan.sink
    if sink.table_id is None:
        return [f"sink: none to check ({plan.layout} layout reads Log Analytics' _AllLogs)"]
    if sink.state is None:
        return [f"sink {sink.table_id}: not found"]
    if not sink.missing:
        return [f"sink {sink.table_id}: every payload field present"]
    lines = [f"sink {sink.table_id}: {len(sink.missing)} payload field(s) missing"]
    lines += [f"  + {path}" for path in sink.missing_paths]
    lines.append("  (apply --patch-sink adds them; nothing is removed or retyped)")
    return lines


def render_plan(plan: DeploymentPlan, *, colour: bool = False) -> str:
    lines = [
        f"target: {plan.target} (layout {plan.layout})",
        f"source: {plan.source}",
        *sink_lines(plan),
        "",
    ]
    for view in plan.views:
        head = f"  {view.action:<{_WIDTH}}  {view.name}"
        if view.verdict.reasons:
            head += ": " + "; ".join(view.verdict.reasons)
        if view.blocked:
            head += " (apply refuses without --adopt)"
        lines.append(head)
        if view.diff:
            if colour:
                lines += [_Shown(line) for line in _indent(colour_diff(view.diff))]
            else:
                lines += _indent(view.diff)
    failures = plan.dry_run_failures
    lines.append("")
    ok = len(plan.views) - len(failures)
    lines.append(f"dry run: {ok} ok, {len(failures)} failed")
    lines += [f"  {v.name}: {v.dry_run.error}" for v in failures]
    counts = plan.counts()
    summary = ", ".join(f"{counts[a]} {a}" for a in ACTIONS if counts[a])
    lines.append(f"views: {summary}")
    lines.append(f"plan hash: {plan.plan_hash}")
    return _lines(lines)


def render_approval(approval: Approval, path: str) -> str:
    actions = [v.action for v in approval.views]
    summary = ", ".join(f"{actions.count(a)} {a}" for a in ACTIONS if a in actions)
    lines = [
        f"approved {approval.plan_hash}",
        f"  target {approval.target}, by {approval.approved_by} at {approval.approved_at}, "
        f"valid {days(approval.valid_days)}",
        f"  views: {summary}",
    ]
    identity = approval.approver_identity
    known = [
        f"{label} {value}"
        for label, value in (("git", identity.git_user), ("gcloud", identity.gcloud_account))
        if value is not None
    ]
    lines.append(
        f"  identity: {', '.join(known) if known else 'only --by (no git user, no gcloud)'}"
    )
    if approval.sink.missing:
        lines.append(f"  sink fields to add: {', '.join(approval.sink.missing)}")
    lines.append(f"wrote {path}: review it, commit it, then run views apply --approval {path}")
    return _lines(lines)


def render_apply(result: ApplyResult) -> str:
    plan = result.plan
    lines = [f"apply to {plan.target} (plan {plan.plan_hash})"]
    if result.sink_patched:
        lines.append(f"sink {plan.sink.table_id}: added {', '.join(result.sink_patched)}")
    if result.refused:
        lines.append(
            "refused; " + ("no view written:" if result.sink_patched else "nothing written:")
        )
        lines += [f"  - {reason}" for reason in result.refused]
        return _lines(lines)
    for item in result.results:
        line = f"  {item.outcome:<{_WIDTH}}  {item.name}"
        if item.detail:
            line += f": {item.detail}"
        lines.append(line)
    outcomes = [r.outcome for r in result.results]
    order = ("created", "updated", "adopted", "unchanged", "failed")
    summary = ", ".join(f"{outcomes.count(o)} {o}" for o in order if o in outcomes)
    if not result.wrote and result.ok:
        summary += " (nothing to do)"
    lines.append(f"applied: {summary}" if result.ok else f"incomplete: {summary}; rerun apply")
    return _lines(lines)
