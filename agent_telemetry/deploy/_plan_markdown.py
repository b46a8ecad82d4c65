"""``views plan --format markdown``: the plan as a pull-request comment.

The summary, the sink's missing fields, the capacity in bits, the plan hash and the
approve command first (what an owner reads before approving), then the views' table and
one collapsed section per view that changes (the SQL diff in a ``diff`` block, or the new
view's SQL, and the columns added, removed or retyped). GitHub refuses a comment over
65,536 characters, so the whole is kept under ``COMMENT_MOST``: when it would not fit,
each section's SQL is cut to a fair share, with a pointer to the full plan (the review
page, the JSON). Rendered from the plan document, like the JSON. Deployed descriptions,
names and SQL come from the server (whoever can edit a description in the console writes
it), and the models' text from their authors: every such piece is an inert code span
(``_text.markdown_code``, ``<code>`` inside the HTML of a summary) and every fence is
longer than any backtick run inside, so no link, image, HTML or @mention renders in the
owner's review.
"""

from __future__ import annotations

import html
import re

from agent_telemetry._text import clean, markdown_code
from agent_telemetry.deploy._plan import ACTIONS
from agent_telemetry.deploy._plan_document import ColumnChange, PlanDocument, ViewChange

# GitHub refuses a comment over 65,536 characters; the margin leaves room for a bot's own
# header or footer around the plan.
GITHUB_COMMENT_LIMIT = 65_536
COMMENT_MOST = 60_000
# A line of server text (a description, a dry-run error) shown at most this long.
_LINE_MOST = 2_000
_WHERE_IN_FULL = (
    "the full plan is in the review page (`agent-telemetry views plan --html FILE`) and "
    "in `agent-telemetry views plan --format json`"
)
_TRIMMED = f"(SQL trimmed to fit a pull-request comment: {_WHERE_IN_FULL}.)"


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


def _section_head(view: ViewChange) -> list[str]:
    summary = f"<b>{view.action}</b> {_code(view.name)}"
    if view.reasons:
        summary += ": " + "; ".join(_code(reason) for reason in view.reasons)
    if view.blocked:
        summary += " (apply refuses without <code>--adopt</code>)"
    return [
        "<details>",
        _short(f"<summary>{summary}</summary>"),
        "",
        _short(f"Dry run: {_dry_run(view)}."),
    ]


def _short(line: str, most: int = _LINE_MOST) -> str:
    """One line at most ``most`` characters: server text (a dry-run error, a description)
    has no bound of its own. A longer line is left out whole, never cut: a cut through a
    code span would leave the rest of the server's text live Markdown."""
    if len(line) <= most:
        return line
    gone = f"(a line of {len(line):,} characters, left out: {_WHERE_IN_FULL})"
    if line.startswith("|"):
        return f"| {gone} |"  # stays a row of its table
    if line.startswith("### "):
        return f"### {gone}"
    if line.startswith("<summary>"):
        return f"<summary>{html.escape(gone, quote=False)}</summary>"
    return gone


def _view_body(view: ViewChange) -> tuple[list[str], list[str], str]:
    """The columns table, the code block's lines and its info string (``diff``/``sql``)."""
    table = [_short(line) for line in _columns(view.columns)]
    if view.diff:
        return table, view.diff.splitlines(), "diff"
    if view.action == "create":
        return table, view.sql_after.splitlines(), "sql"
    return table, [], ""


def _view_section(view: ViewChange, budget: int | None = None) -> list[str]:
    """One view, collapsed. With ``budget``, when the whole is longer: its head, then the
    leading lines of its columns and SQL (in reading order) that fit, and the pointer to
    the full plan; never over ``budget`` when that is at least ``_least(view)``."""
    head = _section_head(view)
    table, code, info = _view_body(view)
    # The whole SQL's fence, kept when the SQL is cut: longer than any run in what is left.
    fence = _fence("\n".join(code), info)
    closing = ["", "</details>"]
    whole = head + table + (["", *fence] if code else []) + closing
    if budget is None or _size(whole) <= budget:
        return whole
    room = budget - _least(view)
    body = _fit(table, room)
    if code and len(body) == len(table):
        opening, end = fence[0], fence[-1]
        kept = _fit(code, room - _size(body) - _size(["", opening, end]))
        if kept:
            body += ["", opening, *kept, end]
    return head + body + ["", _TRIMMED] + closing


def _least(view: ViewChange) -> int:
    """A cut section's least size: its head whole, the pointer and the closing tag."""
    return _size([*_section_head(view), "", _TRIMMED, "", "</details>"])


def _size(lines: list[str]) -> int:
    """Characters of ``lines`` joined as the comment joins them, each ended by a newline."""
    return sum(len(line) + 1 for line in lines)


def _fit(lines: list[str], room: int) -> list[str]:
    """The leading lines that fit in ``room`` characters."""
    kept: list[str] = []
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            break
        kept.append(line)
    return kept


def _shares(sizes: list[int], room: int) -> list[int]:
    """Split ``room`` over sections of ``sizes``: the small ones whole, the rest evenly."""
    shares = [0] * len(sizes)
    left, count = room, len(sizes)
    for index in sorted(range(len(sizes)), key=sizes.__getitem__):
        shares[index] = min(sizes[index], left // count)
        left -= shares[index]
        count -= 1
    return shares


def _more_views(count: int) -> list[str]:
    return ["", f"{count} more view(s) change; {_WHERE_IN_FULL}"]


def _sections(views: list[ViewChange], room: int) -> list[str]:
    """Every changing view, collapsed, within ``room`` characters: whole when all fit;
    else each gets its least (head and pointer) and the rest of the room is shared out
    (the small ones whole, the others evenly); when even their least does not fit, the
    views past the room are counted, not shown."""
    whole = [["", *_view_section(v)] for v in views]
    if _size([line for section in whole for line in section]) <= room:
        return [line for section in whole for line in section]
    sizes = [_size(section) for section in whole]
    # One more each for the blank line before a section; a section shorter than its
    # least (no columns, no SQL) is whole within it.
    least = [min(1 + _least(v), size) for v, size in zip(views, sizes, strict=True)]
    if sum(least) > room:
        lines: list[str] = []
        room -= _size(_more_views(len(views)))  # the longest that line can be
        shown = 0
        for view, size in zip(views, least, strict=True):
            if _size(lines) + size > room:
                break
            lines += ["", *_view_section(view, size - 1)]
            shown += 1
        return [*lines, *_more_views(len(views) - shown)]
    extra = _shares([s - m for s, m in zip(sizes, least, strict=True)], room - sum(least))
    lines = []
    for view, floor, more in zip(views, least, extra, strict=True):
        lines += ["", *_view_section(view, floor + more - 1)]
    return lines


def _more_rows(count: int) -> list[str]:
    return ["", f"{count} more row(s); {_WHERE_IN_FULL}"]


def _rows(header: list[str], rows: list[str], room: int) -> list[str]:
    """A table's header and the rows that fit in ``room``; a last line counts the rest."""
    rows = [_short(row) for row in rows]
    if _size([*header, *rows]) <= room:
        return [*header, *rows]
    used = _size(header)
    kept: list[str] = []
    for row in rows:
        used += len(row) + 1
        # The count shrinks as rows are kept (a digit fewer), never by more than a row.
        if used + _size(_more_rows(len(rows) - len(kept) - 1)) > room:
            break
        kept.append(row)
    return [*header, *kept, *_more_rows(len(rows) - len(kept))]


def render_markdown(doc: PlanDocument, limit: int = COMMENT_MOST) -> str:
    """The plan as a comment of at most ``limit`` characters: the summary, the capacity,
    the plan hash and the approve command first, then every changing view collapsed."""
    summary = ", ".join(f"{doc.counts[a]} {a}" for a in ACTIONS if doc.counts.get(a))
    head = [
        _short(
            f"### agent-telemetry views plan: {markdown_code(doc.target)} ({doc.layout} layout)"
        ),
        "",
        _short(f"Source: {markdown_code(doc.source)}."),
        "",
        f"Views: {summary}.",
    ]
    if not doc.pending:
        head += ["", "Nothing to do: every view is at its generated definition."]
    approve = [
        "",
        f"Plan hash: {markdown_code(doc.plan_hash)}",
        "",
        "Approve exactly this plan (the record binds to the hash above, so apply refuses "
        "anything else; `--by` defaults to your git identity):",
        "",
        *_fence(doc.approve_command, "sh"),
    ]
    # What the reader needs first takes at most a quarter each; the views get the rest.
    quarter = limit // 4
    lines = [*head, *_sink(doc, quarter), *_capacity(doc, quarter), *approve, ""]
    views_table = _rows(
        ["| view | action | dry run |", "|---|---|---|"],
        [f"| {_cell(v.name)} | {v.action} | {_dry_run(v)} |" for v in doc.views],
        quarter,
    )
    lines += views_table
    changing = [v for v in doc.views if v.action != "unchanged"]
    lines += _sections(changing, limit - _size(lines))
    return "\n".join(lines) + "\n"


def _sink(doc: PlanDocument, room: int) -> list[str]:
    if doc.sink.table is not None and doc.sink.missing:
        intro = [
            "",
            _short(
                f"Sink {markdown_code(doc.sink.table)} lacks {len(doc.sink.missing)} payload "
                "field(s); `apply --patch-sink` adds them:"
            ),
            "",
        ]
        return _rows(intro, [f"- {markdown_code(path)}" for path in doc.sink.missing], room)
    if doc.sink.table is not None and not doc.sink.found:
        return ["", _short(f"Sink {markdown_code(doc.sink.table)}: not found.")]
    return []


def _capacity(doc: PlanDocument, room: int) -> list[str]:
    if not doc.capacity:
        return []
    header = [
        "",
        "Capacity per line, in bits (how much one line can say; the deployed version's "
        "figure is the schema lock's):",
        "",
        "| event | deployed | generated | fields that change |",
        "|---|---:|---:|---|",
    ]
    rows = []
    for c in doc.capacity:
        before = "" if c.bits_before is None else f"{c.bits_before} (v{c.deployed_version})"
        fields = ", ".join(
            f"{_cell(f.name)} {f.bits_before or 'new'} → {f.bits_after or 'gone'}" for f in c.fields
        )
        rows.append(
            f"| {_cell(c.event)} | {before or 'not deployed'} | "
            f"{c.bits_after} (v{c.schema_version}) | {fields} |"
        )
    return _rows(header, rows, room)
