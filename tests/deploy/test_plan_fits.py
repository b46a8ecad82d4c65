"""A plan fits where it is read: ``views plan --format markdown`` is a pull-request
comment, and GitHub refuses one over 65,536 characters. Whatever the plan, the summary,
the capacity in bits and the approve command come first; the SQL is collapsed, and
trimmed with a pointer to the full review when the whole would not fit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_telemetry.deploy._capacity import capacity_changes
from agent_telemetry.deploy._plan_document import PlanDocument, approve_command, plan_document
from agent_telemetry.deploy._plan_markdown import GITHUB_COMMENT_LIMIT, render_markdown
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, load_catalogue
from agent_telemetry.schema.spec import EventSpec
from tests.deploy.plan_cases import first_deploy
from tests.service import write_module

COMMAND = approve_command(Path("telemetry.toml"), None, None)


def _event(number: int) -> str:
    members = "\n".join(f'    STEP_{m} = "step_{m}"' for m in range(12))
    fields = "\n".join(
        f'    stage_{f}: Stage{number} | None = Field(default=None, description="Stage {f}.")'
        for f in range(6)
    )
    counts = "\n".join(
        f'    wait_{f}_ms: int | None = count(0, 600_000, "Wait {f} in milliseconds.", precision=3)'
        for f in range(3)
    )
    return f'''
class Stage{number}(StrEnum):
{members}


class Job{number}(TelemetryEvent):
    """One line per job of kind {number}."""

    event_name: ClassVar[str] = "job_{number}"
    schema_version: ClassVar[int] = 1

{fields}
{counts}
'''


THIRTY = (
    "from enum import StrEnum\nfrom typing import ClassVar\n\nfrom pydantic import Field\n\n"
    "from agent_telemetry.schema import TelemetryEvent, count\n"
    + "".join(_event(n) for n in range(30))
    + "\nEVENTS = {m.event_name: m for m in ["
    + ", ".join(f"Job{n}" for n in range(30))
    + "]}\n"
)


@pytest.fixture
def thirty_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[EventSpec, ...]:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    module = write_module(tmp_path, THIRTY)
    return load_catalogue(module).version_specs()


def _first_deploy(specs: tuple[EventSpec, ...]) -> PlanDocument:
    plan = first_deploy(specs)
    return plan_document(plan, COMMAND, capacity_changes(plan, specs, None))


def _first_screen(text: str, doc: PlanDocument) -> None:
    """Summary, bits and the approve command come before any view's SQL."""
    first_sql = text.index("<details>")
    assert text.index("Views: ") < first_sql
    assert text.index("Capacity per line, in bits") < first_sql
    assert text.index(doc.approve_command) < first_sql


def test_a_first_deploy_of_thirty_events_fits_a_comment(
    thirty_events: tuple[EventSpec, ...],
) -> None:
    doc = _first_deploy(thirty_events)
    assert len(doc.views) == 31  # thirty event views and telemetry_quality
    text = render_markdown(doc)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    _first_screen(text, doc)
    assert text.count("<details>") == 31  # every view is there, collapsed
    assert "trimmed to fit a pull-request comment" in text
    assert "--html" in text  # where the full SQL is
    assert "--format json" in text
    for view in doc.views:
        assert f"<code>{view.name}</code>" in text
    assert text.count("```") % 2 == 0  # every fence that was opened is closed


def test_the_packages_own_first_deploy_fits_a_comment() -> None:
    specs = load_catalogue(DEFAULT_MODULE).version_specs()
    doc = _first_deploy(specs)
    text = render_markdown(doc)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    _first_screen(text, doc)


def test_a_plan_that_fits_whole_is_not_trimmed() -> None:
    specs = load_catalogue(DEFAULT_MODULE).version_specs()[:1]
    doc = _first_deploy(specs)
    text = render_markdown(doc)
    assert "trimmed" not in text
    for view in doc.views:
        assert view.sql_after.splitlines()[-1] in text


def test_no_plan_is_too_long_for_a_comment(thirty_events: tuple[EventSpec, ...]) -> None:
    # A messy production plan: thousands of views, and a server's dry-run error and a
    # deployed description far longer than any line should be.
    doc = _first_deploy(thirty_events)
    noisy = doc.views[0].model_copy(
        update={
            "dry_run": doc.views[0].dry_run.model_copy(update={"ok": False, "error": "x" * 90_000})
        }
    )
    huge = doc.model_copy(update={"views": [noisy, *doc.views * 80], "capacity": doc.capacity * 80})
    text = render_markdown(huge)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    _first_screen(text, huge)
    assert "more view(s) change" in text
    assert "more row(s)" in text
