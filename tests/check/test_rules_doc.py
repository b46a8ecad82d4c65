"""The rule tables users read (docs/rules.md) and the code's are the same lists."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.schema.compat import COMPAT_RULES
from agent_telemetry.schema.rules import RULES
from agent_telemetry.schema.versions import VERSION_RULES

RULES_DOC = Path(__file__).parents[2] / "docs" / "rules.md"


def table(section: str) -> list[list[str]]:
    """The cells of each rule row (``| `ID` | ...``) in the section's first table."""
    text = RULES_DOC.read_text(encoding="utf-8").split(f"\n## {section}\n", 1)[1]
    body = text.split("\n## ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.replace("\\|", "/").split("|")[1:-1]] for row in rows]


def rule_id(cell: str) -> str:
    return cell.strip("`")


def test_the_definition_rule_table_is_rules_in_order() -> None:
    # Every rule ID in the table, every table row in RULES, in the order they are checked.
    assert [rule_id(row[0]) for row in table("Definition rules")] == [r.id for r in RULES]


def test_each_definition_rule_row_says_what_it_refuses_why_and_how_to_fix() -> None:
    for row in table("Definition rules"):
        assert len(row) == 4, row
        assert all(row), row


def test_the_compat_rule_table_is_compat_rules_with_their_purpose() -> None:
    listed = {rule_id(row[0]): row[1] for row in table("Compatibility rules")}
    assert listed == {rule.id: rule.purpose for rule in COMPAT_RULES}


def test_the_version_rule_table_is_version_rules_with_their_purpose() -> None:
    listed = {rule_id(row[0]): row[1] for row in table("Version rules")}
    assert listed == {rule.id: rule.purpose for rule in VERSION_RULES}
