"""``views plan --html FILE``: the owner's review page, one self-contained offline file.

Written for a person who did not write the change: per view what happens and why, the
SQL side by side (deployed | generated), the columns added, removed, retyped or
re-described with their descriptions, the dry run's verdict and bytes, then the plan hash
and the exact ``views approve`` command. No script, no font, no image from anywhere: the
CSS is inline and the page makes no request. Rendered from the plan document (the JSON
bots read), by jinja2 with autoescaping: deployed SQL and descriptions come from the
server and are escaped like everything else.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import jinja2

from agent_telemetry._files import trusted_folder, write_text
from agent_telemetry.deploy._plan import ACTIONS
from agent_telemetry.deploy._plan_document import PlanDocument, ViewChange

_TEMPLATES = Path(__file__).with_name("templates")
# HtmlDiff writes six empty column groups (link, line number, text, per side): give the
# text columns the room, so a long line wraps in CSS instead of in the diff.
_COLUMNS = (
    '<col style="width:1.2rem"><col style="width:2.8rem"><col>'
    '<col style="width:1.2rem"><col style="width:2.8rem"><col>'
)


def side_by_side(view: ViewChange) -> str | None:
    """The SQL change as an HTML table (deployed | generated), or None without both sides."""
    if view.sql_before is None or view.sql_before.strip() == view.sql_after.strip():
        return None
    table = difflib.HtmlDiff(tabsize=4).make_table(
        view.sql_before.strip().splitlines(),
        view.sql_after.strip().splitlines(),
        "deployed",
        "generated",
        context=True,
        numlines=3,
    )
    # HtmlDiff escapes the lines; its only markup is the table, spans and in-page links.
    table = table.replace(' nowrap="nowrap"', "")
    return re.sub(r"(?:\s*<colgroup></colgroup>){6}", _COLUMNS, table, count=1)


def render_review_page(doc: PlanDocument) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    changed = [v for v in doc.views if v.action != "unchanged"]
    return env.get_template("review.html.j2").render(
        doc=doc,
        changed=changed,
        unchanged=[v for v in doc.views if v.action == "unchanged"],
        actions=[(a, doc.counts.get(a, 0)) for a in ACTIONS if doc.counts.get(a)],
        tables={v.name: side_by_side(v) for v in changed},
        capacity={c.view: c for c in doc.capacity},
    )


def write_review_page(doc: PlanDocument, path: Path) -> None:
    write_text(path, render_review_page(doc), trusted_folder(path))
