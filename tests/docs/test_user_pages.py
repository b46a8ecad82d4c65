"""User pages speak to users: no page of the manual but the contributor pages names a
``make`` target of this repository or its ``tests/`` (a service author or an analyst has
neither). Checked on what a reader sees: the page without its HTML comments (the
``docs-test`` directives that tie a block to its test are comments)."""

from __future__ import annotations

import re

from tests.docs.blocks import REPO

# The contributor pages are the manual's "Contributing" section (mkdocs.yml's nav).
_NAV = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
_SECTION = re.search(r"^  - Contributing:\n((?:      - .*\n)+)", _NAV, flags=re.M)
CONTRIBUTOR_PAGES = (
    set(re.findall(r": (\w[\w-]*)\.md$", _SECTION.group(1), flags=re.M)) if _SECTION else set()
)
TARGETS = re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(), flags=re.M)
MAKE = re.compile(r"`make`|\bmake (?:" + "|".join(map(re.escape, TARGETS)) + r")\b")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def test_the_targets_are_read_from_the_makefile() -> None:
    assert {"test", "demo", "generate", "docs"} <= set(TARGETS)


def test_the_contributor_pages_are_read_from_the_nav() -> None:
    assert {"contributing", "testing", "design", "performance", "security"} <= CONTRIBUTOR_PAGES
    assert not {"evolving-the-schema", "analyst-bigquery", "index"} & CONTRIBUTOR_PAGES


def test_no_user_page_names_make_or_tests() -> None:
    found = []
    for page in sorted((REPO / "docs").glob("*.md")):
        if page.stem in CONTRIBUTOR_PAGES:
            continue
        shown = COMMENT.sub("", page.read_text(encoding="utf-8"))
        for number, line in enumerate(shown.splitlines(), start=1):
            if MAKE.search(line) or "tests/" in line:
                found.append(f"{page.name}:{number}: {line.strip()[:80]}")
    assert found == []
