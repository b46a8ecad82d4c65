"""The rule catalogues in docs/evolving-the-schema.md are the code's lists: a rule added,
removed or reworded in the code fails here until the page says the same."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.schema.compat import COMPAT_RULES
from agent_telemetry.schema.rules import RULES

PAGE = Path(__file__).parents[2] / "docs" / "evolving-the-schema.md"


def table_under(heading: str) -> dict[str, list[str]]:
    """Rows of the first table in the section ``heading``: rule id -> the other cells."""
    text = PAGE.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1]
    section = text.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return {row[0].strip("`"): row[1:] for row in cells}


def test_every_compat_rule_is_in_the_docs_with_its_purpose() -> None:
    listed = {rule: cells[0] for rule, cells in table_under("The compatibility rules").items()}
    assert listed == {rule.id: rule.purpose for rule in COMPAT_RULES}


def test_every_definition_rule_is_in_the_docs_with_its_scope_and_purpose() -> None:
    listed = {rule: tuple(cells) for rule, cells in table_under("Defining an event").items()}
    assert listed == {rule.id: (rule.scope, rule.purpose) for rule in RULES}
