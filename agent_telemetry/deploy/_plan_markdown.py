"""``views plan --format markdown``: the plan as a pull-request comment.

One collapsible section per view that changes (the SQL diff in a ``diff`` block, the
columns added, removed or retyped), then the plan hash and the approve command. Rendered
from the plan document, like the JSON. Deployed descriptions, names and SQL come from
the server (whoever can edit a description in the console writes it), and the models'
text from their authors: every such piece is an inert code span (``_text.markdown_code``,
``<code>`` inside the HTML of a summary) and every fence is longer than any backtick run
inside, so no link, image, HTML or @mention renders in the owner's review.
"""

from __future__ import annotations

import html
import re

from agent_telemetry._text import clean, markdown_code
from agent_telemetry.deploy._plan import ACTIONS
from agent_telemetry.deploy._plan_document import ColumnChange, PlanDocument, ViewChange


def _cell(text: str | None) -> str:
    """Outside text in a table cell: one code span, its pipes escaped."""
    return markdown_code(text or "", table=True)


def _fence(body: str, info: str) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body.splitlines(), fence]


def _code(text: str) -> str:
    """Outside text inside HTML (a summary): escaped, in code (GitHub links no @mention
    there)."""
    return "<code>" + html.escape(clean(text), quote=False) + "</code>"


def _columns(changes: list[ColumnChange]) -> list[str]:
    if not changes:
        return []
    lines = ["| column | change | type | description |", "|---|---|---|---|"]
    for c in changes:
        kind = c.type_after or c.type_before or ""
        if c.change == "retyped":
            kind = f"{c.type_before} → {c.type_after}"
        text = _cell(c.description_after if c.change != "removed" else c.description_before)
        if c.change == "redescribed":
            text = f"was: {_cell(c.description_before)}<br>now: {text}"
        lines.append(f"| {_cell(c.name)} | {c.change} | {_cell(kind)} | {text} |")
    return ["", *lines, ""]


def _dry_run(view: ViewChange) -> str:
    if not view.dry_run.ok:
        return "failed: " + _cell(view.dry_run.error)
    if view.dry_run.bytes_processed is None:
        return "ok"
    text = f"ok, {view.dry_run.bytes_processed:,} bytes"
    if view.dry_run.one_day_bytes_processed is not None:
        text += f" ({view.dry_run.one_day_bytes_processed:,} for one day)"
    return text


def _view_section(view: ViewChange) -> list[str]:
    summary = f"<b>{view.action}</b> {_code(view.name)}"
    if view.reasons:
        summary += ": " + "; ".join(_code(reason) for reason in view.reasons)
    if view.blocked:
        summary += " (apply refuses without <code>--adopt</code>)"
    lines = ["<details>", f"<summary>{summary}</summary>", ""]
    lines.append(f"Dry run: {_dry_run(view)}.")
    lines += _columns(view.columns)
    if view.diff:
        lines += ["", *_fence(view.diff, "diff")]
    elif view.action == "create":
        lines += ["", *_fence(view.sql_after, "sql")]
    lines += ["", "</details>"]
    return lines


def render_markdown(doc: PlanDocument) -> str:
    lines = [
        f"### agent-telemetry views plan: {markdown_code(doc.target)} ({doc.layout} layout)",
        "",
        f"Source: {markdown_code(doc.source)}.",
        "",
        "| view | action | dry run |",
        "|---|---|---|",
        *(f"| {_cell(v.name)} | {v.action} | {_dry_run(v)} |" for v in doc.views),
        "",
    ]
    summary = ", ".join(f"{doc.counts[a]} {a}" for a in ACTIONS if doc.counts.get(a))
    lines.append(f"Views: {summary}.")
    if doc.sink.table is not None and doc.sink.missing:
        lines += [
            "",
            f"Sink {markdown_code(doc.sink.table)} lacks {len(doc.sink.missing)} payload "
            "field(s); `apply --patch-sink` adds them:",
            "",
        ]
        lines += [f"- {markdown_code(path)}" for path in doc.sink.missing]
    elif doc.sink.table is not None and not doc.sink.found:
        lines += ["", f"Sink {markdown_code(doc.sink.table)}: not found."]
    if doc.capacity:
        lines += [
            "",
            "Capacity per line, in bits (how much one line can say; the deployed version's "
            "figure is the schema lock's):",
            "",
            "| event | deployed | generated | fields that change |",
            "|---|---:|---:|---|",
        ]
        for c in doc.capacity:
            before = "" if c.bits_before is None else f"{c.bits_before} (v{c.deployed_version})"
            fields = ", ".join(
                f"{_cell(f.name)} {f.bits_before or 'new'} → {f.bits_after or 'gone'}"
                for f in c.fields
            )
            lines.append(
                f"| {_cell(c.event)} | {before or 'not deployed'} | "
                f"{c.bits_after} (v{c.schema_version}) | {fields} |"
            )
    for view in doc.views:
        if view.action != "unchanged":
            lines += ["", *_view_section(view)]
    lines += [
        "",
        f"Plan hash: {markdown_code(doc.plan_hash)}",
        "",
        "Approve exactly this plan (the record binds to the hash above, so apply refuses "
        "anything else; `--by` defaults to your git identity):",
        "",
        *_fence(doc.approve_command, "sh"),
    ]
    if not doc.pending:
        lines += ["", "Nothing to do: every view is at its generated definition."]
    return "\n".join(lines) + "\n"
