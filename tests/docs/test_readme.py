"""README.md is the landing page: short, and every link into the manual resolves."""

from __future__ import annotations

import re

from tests.docs.blocks import REPO

README = REPO / "README.md"
MAX_LINES = 250


def test_the_readme_is_a_landing_page_not_the_manual() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_every_relative_link_in_the_readme_resolves() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local, "the README links into docs/"
    assert [link for link in local if not (REPO / link).is_file()] == []
