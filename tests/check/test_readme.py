"""The README's rule catalogue and the code's are the same list."""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.schema.compat import COMPAT_RULES

README = Path(__file__).parents[2] / "README.md"


def test_every_compat_rule_is_in_the_readme_with_its_purpose() -> None:
    text = README.read_text(encoding="utf-8").split("## Evolving the schema", 1)[1]
    section = text.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {row.split("`")[1]: row.split("|")[2].strip() for row in rows}
    assert listed == {rule.id: rule.purpose for rule in COMPAT_RULES}
