"""Every breaking rule's ID reaches every output format, at the line to fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_telemetry.check import FORMATS, CheckReport, Finding, render
from agent_telemetry.check._schema_stages import compat_findings
from agent_telemetry.schema import EVENTS
from agent_telemetry.schema.lock import LOCK_PATH, dump_lock
from tests.schema.copies import LockData, Mutation, field, mutated
from tests.schema.test_compat import ADDITIVE, BASE, BREAKING

EVENTS_FILE = Path(__file__).parents[2] / "agent_telemetry" / "schema" / "events.py"


def report_for(mutation: Mutation) -> CheckReport:
    report = CheckReport()
    findings, report.classification = compat_findings(
        BASE, mutated(mutation), (), EVENTS, dump_lock(BASE), LOCK_PATH
    )
    report.stage("compat", findings)
    return report


CASES = [(m, rule) for _, m, rules in BREAKING for rule in sorted(rules)]
IDS = [f"{i}-{fmt}" for i, _, rules in BREAKING for _ in rules for fmt in FORMATS]


@pytest.mark.parametrize(
    ("mutation", "rule", "fmt"),
    [(m, r, fmt) for m, r in CASES for fmt in FORMATS],
    ids=IDS,
)
def test_the_rule_id_is_in_every_format(mutation: Mutation, rule: str, fmt: str) -> None:
    report = report_for(mutation)
    assert report.exit_code == 1
    out = render(report, fmt)
    assert rule in out
    if fmt == "json":
        data = json.loads(out)
        assert data["ok"] is False
        assert rule in {v["rule"] for v in data["violations"]}
    if fmt == "github":
        assert re.search(rf"^::error file=[^,]+,line=\d+,title={rule}::{rule} ", out, re.M)
    if fmt == "text":
        assert re.search(rf"^\S+:\d+: error: {rule} ", out, re.M)


def test_a_field_annotation_points_at_the_field_in_the_models() -> None:
    def narrow(d: LockData) -> None:
        field(d, "pipeline_run", "attempts")["le"] = 5  # the base was wider: models narrowed it

    report = CheckReport()
    findings, _ = compat_findings(mutated(narrow), BASE, (), EVENTS, dump_lock(BASE), LOCK_PATH)
    report.stage("compat", findings)
    out = render(report, "github")
    (line,) = re.findall(r"^::error file=([^,]+),line=(\d+),title=BOUND_NO_NARROW::", out, re.M)
    assert line[0].endswith("agent_telemetry/schema/events.py")
    source = EVENTS_FILE.read_text(encoding="utf-8").splitlines()
    assert source[int(line[1]) - 1].lstrip().startswith("attempts:")


def test_github_escapes_what_would_break_a_workflow_command() -> None:
    report = CheckReport()
    report.stage("x", [Finding("x", "RULE", "a%b\nc", file="a,b:c.py", line=3)])
    out = render(report, "github")
    # The newline is shown escaped (agent_telemetry._text): the message stays on its line.
    assert "::error file=a%2Cb%3Ac.py,line=3,title=RULE::RULE a%25b\\nc" in out


def reviewed(mutation: Mutation) -> Mutation:
    """``mutation``, with a new data review that covers any growth on every event version: the
    capacity growth an addition brings is then a notice too."""

    def mutate(d: LockData) -> None:
        mutation(d)
        for name, versions in d["events"].items():
            for version, entry in versions.items():
                review = {"reference": "r", "reason": "why", "bits": 999.0}
                # A review approves only the event version it names.
                review |= {"event": name, "schema_version": int(version)}
                entry["data_reviews"] = [review]

    return mutate


def test_additions_are_notices_not_errors() -> None:
    for _, mutation, rule in ADDITIVE:
        report = report_for(reviewed(mutation))
        assert report.exit_code == 0
        assert f"title={rule}::" in render(report, "github")
        assert "::error" not in render(report, "github")
        assert json.loads(render(report, "json"))["violations"] == []
