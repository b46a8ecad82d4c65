"""The cut that fits a plan in a pull-request comment, exactly: never over the limit
whatever the plan (views whose heads are long take their head and the pointer to the full
plan, never more than their share), never trimmed when the whole fits, and when trimmed
as full as it can be (the next line would not have fit)."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent_telemetry.deploy._capacity import capacity_changes
from agent_telemetry.deploy._plan import SQL_LABEL, view_plan
from agent_telemetry.deploy._plan_document import PlanDocument, approve_command, plan_document
from agent_telemetry.deploy._plan_markdown import COMMENT_MOST, _least, render_markdown
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.schema.catalogue import load_catalogue
from agent_telemetry.schema.spec import EventSpec
from tests.deploy.plan_cases import VIEW, first_deploy, make_plan
from tests.deploy.test_plan_fits import THIRTY
from tests.service import write_module

COMMAND = approve_command(Path("telemetry.toml"), None, None)
WHERE = (
    "the full plan is in the review page (`agent-telemetry views plan --html FILE`) and "
    "in `agent-telemetry views plan --format json`"
)


@pytest.fixture
def thirty_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[EventSpec, ...]:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    return load_catalogue(write_module(tmp_path, THIRTY)).version_specs()


def _first_deploy(specs: tuple[EventSpec, ...]) -> PlanDocument:
    plan = first_deploy(specs)
    return plan_document(plan, COMMAND, capacity_changes(plan, specs, None))


def test_views_with_long_heads_take_no_more_than_the_comment_has(
    thirty_events: tuple[EventSpec, ...],
) -> None:
    """Twenty views whose dry run failed with a server error of 1,500 characters (each
    head about 1,600), eleven with short heads, every one with more SQL than fits: the
    heads all fit, so every view is shown, but a share split evenly (about 1,400) is
    smaller than a long head. The long heads must come out of the room, not on top of it
    (they made a comment of 66,475 characters, which GitHub refuses)."""
    doc = _first_deploy(thirty_events)
    failed = [
        v.model_copy(
            update={"dry_run": v.dry_run.model_copy(update={"ok": False, "error": "e" * 1_500})}
        )
        for v in doc.views[:20]
    ]
    noisy = doc.model_copy(update={"views": [*failed, *doc.views[20:]]})
    text = render_markdown(noisy)
    assert len(text) <= COMMENT_MOST
    assert text.count("<details>") == text.count("</details>") == 31
    assert "more view(s) change" not in text


def _code_lines(section: str) -> list[str]:
    match = re.search(r"(?ms)^(`{3,})diff\n(.*?)\n\1$", section)
    return match.group(2).split("\n") if match else []


def test_a_plan_that_fits_exactly_is_whole_and_one_character_less_is_trimmed() -> None:
    doc = plan_document(make_plan("update"), COMMAND)
    whole = render_markdown(doc)
    assert render_markdown(doc, len(whole)) == whole
    trimmed = render_markdown(doc, len(whole) - 1)
    assert len(trimmed) <= len(whole) - 1
    assert "trimmed to fit a pull-request comment" in trimmed


def test_a_trimmed_plan_is_as_full_as_it_can_be() -> None:
    """For every limit from the whole plan down to where only the view's head is left: at
    most the limit; the section's lines a prefix in reading order (no SQL under a cut
    columns table); and the next line would not have fit."""
    doc = plan_document(make_plan("update"), COMMAND)
    code = doc.views[0].diff.splitlines()
    whole = render_markdown(doc)
    columns = [ln for ln in whole.splitlines() if ln.startswith(("| `passed`", "| `attempt`"))]
    tables = set()
    for limit in range(len(whole) - 1, len(whole) - 4_300, -3):
        text = render_markdown(doc, limit)
        if "<details>" not in text:
            break  # not even the view's head fits: it is counted (another test)
        assert len(text) <= limit
        kept = _code_lines(text)
        rows = [row for row in columns if row in text.splitlines()]
        tables.add(len(rows))
        assert rows == columns[: len(rows)]
        if kept:
            assert rows == columns
            assert kept == code[: len(kept)]
            assert len(text) + len(code[len(kept)]) + 1 > limit, limit
        elif "|---|---|---|---|" in text and len(rows) < len(columns):
            assert len(text) + len(columns[len(rows)]) + 1 > limit, limit
    assert tables == {0, 1, 2}  # the sweep went through the columns table


def test_when_not_every_view_fits_the_rest_are_counted_exactly(
    thirty_events: tuple[EventSpec, ...],
) -> None:
    """Each view shown takes at least its head and the pointer; the limit that has room
    for exactly n of them and the closing count shows n, one character less n - 1."""
    doc = _first_deploy(thirty_events)
    prefix = render_markdown(doc, 10_000).index("\n\n<details>") + 1  # before the views
    least = [1 + _least(v) for v in doc.views]  # the blank line before each, too
    for shown in (9, 16, 27):
        limit = prefix + sum(least[:shown]) + len(f"\n31 more view(s) change; {WHERE}\n")
        for room, expected in ((limit, shown), (limit - 1, shown - 1)):
            text = render_markdown(doc, room)
            assert len(text) <= room
            assert text.count("<details>") == expected
            assert text.endswith(f"\n\n{31 - expected} more view(s) change; {WHERE}\n")
    every = render_markdown(doc, prefix + sum(least))  # room for every view's least, no more
    assert len(every) <= prefix + sum(least)
    assert every.count("<details>") == 31
    assert "more view(s) change" not in every


def _sections(text: str) -> list[str]:
    return re.findall(r"(?ms)^<details>$.*?^</details>$", text)


def test_the_room_is_shared_small_sections_whole_the_rest_evenly(
    thirty_events: tuple[EventSpec, ...],
) -> None:
    """Two views with long SQL and, last, one with a single short line: the short one is
    whole, the two long ones get halves of what it leaves (within a line of each other),
    and nothing is left unused but less than a line each."""
    doc = _first_deploy(thirty_events)
    big = doc.views[:2]
    small = doc.views[2].model_copy(update={"sql_after": "SELECT 1", "columns": []})
    three = doc.model_copy(update={"views": [*big, small]})
    longest = max(len(line) for v in big for line in v.sql_after.splitlines()) + 1
    for limit in range(6_000, 14_000, 1_009):
        text = render_markdown(three, limit)
        assert len(text) <= limit
        first, second, last = _sections(text)
        assert "trimmed" in first
        assert "trimmed" in second
        assert "trimmed" not in last
        assert "SELECT 1" in last
        assert abs(len(first) - len(second)) < longest
        assert len(text) > limit - 2 * longest
        # The short one takes only its own size: without it, and its size fewer
        # characters, the two long ones are cut exactly the same.
        room = limit - (text.index("\n\n<details>") + 1)
        two = doc.model_copy(update={"views": list(big)})
        prefix = render_markdown(two).index("\n\n<details>") + 1
        alone = render_markdown(two, prefix + room - (len(last) + 2))
        assert _sections(alone) == [first, second]


def test_a_table_of_exactly_its_quarter_is_whole_and_one_character_less_counts_the_rest() -> None:
    """The sink's missing fields take at most a quarter of the limit: all of them when
    they fit exactly, else the rows that fit and a count of the rest, within the quarter."""
    plan = make_plan("create")
    doc = plan_document(plan, COMMAND)
    missing = [f"jsonPayload.field_{n} INTEGER" for n in range(200)]
    doc = doc.model_copy(update={"sink": doc.sink.model_copy(update={"missing": missing})})
    lines = render_markdown(doc).splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("Sink "))
    part = lines[start - 1 : lines.index("", start + 2 + len(missing))]
    assert part[-1] == f"- `{missing[-1]}`"
    quarter = sum(len(line) + 1 for line in part)  # the sink's part, as the comment joins it
    whole = render_markdown(doc, 4 * quarter).splitlines()
    assert whole[start - 1 : start - 1 + len(part)] == part
    assert "more row(s)" not in "\n".join(whole)
    for less in range(1, 420):  # a quarter one less, and on, till the count has two digits
        cut = render_markdown(doc, 4 * (quarter - less)).splitlines()
        end = next(n for n, line in enumerate(cut) if "more row(s)" in line)
        shown = cut[start - 1 : end + 1]
        assert sum(len(line) + 1 for line in shown) <= quarter - less
        rows = [line for line in shown if line.startswith("- ")]
        assert shown[-2:] == ["", f"{200 - len(rows)} more row(s); {WHERE}"]
        assert rows == part[3 : 3 + len(rows)]
        following = part[3 + len(rows)]  # as many rows as fit: one more would not have
        assert sum(len(line) + 1 for line in shown) + len(following) + 1 > quarter - less


def test_no_room_is_lost_to_rounding_the_last_section_takes_the_remainder() -> None:
    """Two identical views share an odd room: the second gets the character the first
    could not, so at some limit it keeps one more line than the first."""
    doc = plan_document(make_plan("update"), COMMAND)
    twice = doc.model_copy(update={"views": doc.views * 2})
    whole = render_markdown(twice)
    longer = 0
    for limit in range(len(whole) - 1, len(whole) - 600, -1):
        first, second = _sections(render_markdown(twice, limit))
        assert len(second) >= len(first)
        longer += len(second) > len(first)
    assert longer


def test_a_view_with_nothing_to_cut_is_shown_whole_among_views_counted() -> None:
    """A view changed by hand whose SQL the server hides has no columns or SQL to show:
    shown, it is whole (no pointer to a trimmed SQL it never had), even where the views
    past the room are counted."""
    plan = make_plan("noop")
    (view,) = plan.views
    assert view.deployed.state is not None
    labels = {**view.deployed.state.labels, SQL_LABEL: "0" * 32}
    state = replace(view.deployed.state, labels=labels)
    drifted = view_plan(VIEW, replace(view.deployed, state=state), DryRun((), error="no"))
    doc = plan_document(replace(plan, views=(drifted,)), COMMAND)
    assert doc.views[0].action == "drifted"
    assert doc.views[0].diff == ""
    many = doc.model_copy(update={"views": doc.views * 60})
    whole = _sections(render_markdown(doc))[0]
    text = render_markdown(many, 6_000)
    assert "more view(s) change" in text
    assert "trimmed" not in text
    assert set(_sections(text)) == {whole}
