"""views plan --format markdown | json: golden files for a create, an update and a no-op;
the JSON against its documented schema (docs/plan.schema.json); the text diff's colours.

After an intended change, AGENT_TELEMETRY_GOLDEN_UPDATE=1 rewrites the golden files (and
the schema file): review the diff, then commit it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from agent_telemetry.deploy._capacity import capacity_changes
from agent_telemetry.deploy._plan_document import PlanDocument, approve_command, plan_document
from agent_telemetry.deploy._plan_markdown import render_markdown
from agent_telemetry.deploy._report import render_plan
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, load_catalogue
from agent_telemetry.schema.lock import LOCK_PATH, read_lock
from tests.conftest import REPO
from tests.deploy.plan_cases import CASES, make_plan

GOLDEN = Path(__file__).with_name("golden")
SCHEMA_FILE = REPO / "docs" / "plan.schema.json"
UPDATE = os.environ.get("AGENT_TELEMETRY_GOLDEN_UPDATE") == "1"
COMMAND = approve_command(Path("telemetry.toml"), None, None)
LOCK = read_lock(LOCK_PATH)
SPECS = load_catalogue(DEFAULT_MODULE).version_specs()


def _golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def document(case: str) -> PlanDocument:
    plan = make_plan(case)
    return plan_document(plan, COMMAND, capacity_changes(plan, SPECS, LOCK))


@pytest.mark.parametrize("case", CASES)
def test_markdown_golden(case: str) -> None:
    _golden(f"plan-{case}.md", render_markdown(document(case)))


@pytest.mark.parametrize("case", CASES)
def test_json_golden(case: str) -> None:
    _golden(f"plan-{case}.json", document(case).model_dump_json(indent=2) + "\n")


def test_the_documented_schema_is_the_models_schema() -> None:
    schema = json.dumps(PlanDocument.model_json_schema(), indent=2) + "\n"
    if UPDATE:
        SCHEMA_FILE.write_text(schema, encoding="utf-8")
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == json.loads(schema)


@pytest.mark.parametrize("case", CASES)
def test_json_output_validates_against_the_documented_schema(case: str) -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    output = json.loads(document(case).model_dump_json())
    jsonschema.Draft202012Validator(schema).validate(output)
    broken = {**output, "views": [{**output["views"][0], "action": "rewritten"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def test_update_lists_the_added_and_redescribed_columns() -> None:
    (view,) = document("update").views
    assert [(c.name, c.change) for c in view.columns] == [
        ("passed", "redescribed"),
        ("attempt", "added"),
    ]
    assert view.dry_run.bytes_processed == 48_213_504


def test_markdown_cannot_be_broken_by_deployed_text() -> None:
    text = render_markdown(document("update"))
    outside_fences = re.sub(r"(?ms)^(`{3,}).*?^\1$", "", text)
    assert "<b>its</b>" in text  # in the diff block, where markdown shows it as it is
    assert "<b>its</b>" not in re.sub(r"`[^`]*`", "", outside_fences)  # else in code
    assert "was: `Whether the render passed <b>its</b> checks \\| old.`<br>" in text  # code
    assert text.count("<details>") == text.count("</details>") == 1


def test_no_diff_line_reads_like_a_diff_file_header() -> None:
    (view,) = make_plan("update").views
    lines = view.diff.splitlines()
    assert lines[0].startswith("--- deployed/")
    assert lines[1].startswith("+++ generated/")
    assert not [ln for ln in lines[2:] if ln.startswith(("---", "+++"))]


def test_text_is_plain_unless_colour_is_asked() -> None:
    plan = make_plan("update")
    assert "\x1b[" not in render_plan(plan)
    coloured = render_plan(plan, colour=True)
    assert "\x1b[32m+" in coloured
    assert "\x1b[31m-" in coloured


def test_capacity_per_event_comes_from_the_one_capacity_function() -> None:
    from agent_telemetry.schema.capacity import event_capacity

    (change,) = document("update").capacity
    spec = next(s for s in SPECS if s.name == "pipeline_render")
    assert change.bits_after == event_capacity(spec).bits
    assert change.deployed_version == 1
    assert change.bits_before == change.bits_after  # version 1 as the lock records it
    (created,) = document("create").capacity
    assert created.bits_before is None
    assert "not deployed" in render_markdown(document("create"))
