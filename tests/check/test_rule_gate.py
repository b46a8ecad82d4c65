"""``agent-telemetry check`` on a copy of the repository whose events.py carries an
attack: exit 1, the exact rule ID, the class and field, and the line to fix. One row
per rule ID (the first in the attack table) and the issue's own reports; every row of
the table is refused at definition in tests/schema/test_attacks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_telemetry.schema.rules import RULES
from tests.schema.attacks import ATTACKS, IMPORTS, Attack
from tests.schema.copies import EVENTS_IN_REPO, REPO, repo_copy, run_cli_in

ORIGINAL = (REPO / EVENTS_IN_REPO).read_text(encoding="utf-8")


# Beside the first row of each rule: the issue's other reports, and the hook overrides
# (raised from __init_subclass__, before pydantic builds anything).
EXTRA_ROWS = (
    "annotated-wrap-validator",
    "annotated-after-validator-returns-text",
    "field-validator-after",
    "model-validator-after-sets-a-field",
    "enum-missing-makes-a-member",
    "override-pydantic-init-subclass",
    "override-hook-in-a-base",
)


def _gate_rows() -> list[Attack]:
    by_id = {a.id: a for a in ATTACKS}
    rows = [a for a in ATTACKS if a.id.startswith("issue-")]
    rows += [next(a for a in ATTACKS if a.rule == rule.id) for rule in RULES]
    rows += [by_id[name] for name in EXTRA_ROWS]
    return list({a.id: a for a in rows}.values())


GATE_ROWS = _gate_rows()


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return repo_copy(tmp_path_factory.mktemp("repo"))


def check_json(copy: Path, events: str, *args: str) -> tuple[int, dict[str, object]]:
    (copy / EVENTS_IN_REPO).write_text(events, encoding="utf-8")
    run = run_cli_in(copy, "check", "--format", "json", *args)
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, json.loads(run.stdout)


@pytest.mark.parametrize("attack", GATE_ROWS, ids=[a.id for a in GATE_ROWS])
def test_check_fails_with_the_rule_id_on_a_copy_carrying_the_attack(
    copy: Path, attack: Attack
) -> None:
    code, report = check_json(copy, ORIGINAL + "\n\n" + IMPORTS + "\n\n" + attack.source)
    assert code == 1
    (violation,) = report["violations"]  # type: ignore[misc]
    assert violation["rule"] == attack.rule
    assert violation["field"] == attack.field
    assert violation["stage"] == "definition"
    assert str(violation["file"]).endswith("events.py")
    line = (copy / EVENTS_IN_REPO).read_text(encoding="utf-8").splitlines()[violation["line"] - 1]
    if attack.field is not None:
        assert line.lstrip().startswith(f"{attack.field}:")
    else:
        assert line.startswith("class ")


def test_every_rule_is_in_the_gate() -> None:
    assert {a.rule for a in GATE_ROWS} == {r.id for r in RULES}


def test_the_issues_change_to_events_py_fails_the_check(copy: Path) -> None:
    """The report, verbatim: one field of ChatTurn given a pass-through validator."""
    old = '    tier: ChatTier = Field(description="Tier of the caller.")\n'
    new = (
        '    tier: Annotated[ChatTier, PlainValidator(lambda v: v)] = Field(description="Tier.")\n'
    )
    assert old in ORIGINAL
    events = ORIGINAL.replace(
        "from pydantic import Field\n",
        "from typing import Annotated\n\nfrom pydantic import Field, PlainValidator\n",
    ).replace(old, new)
    code, report = check_json(copy, events)
    assert code == 1
    (violation,) = report["violations"]  # type: ignore[misc]
    assert (violation["rule"], violation["event"], violation["field"]) == (
        "FIELD_VALIDATOR",
        "ChatTurn",
        "tier",
    )


def test_the_unchanged_copy_passes(copy: Path) -> None:
    # The failures above come from the attacks, not from the copy. (The view stages,
    # which need no copy, are checked on the repository itself in test_cli.)
    code, report = check_json(copy, ORIGINAL, "--schema-only")
    assert code == 0, report
