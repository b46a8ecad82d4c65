"""The install page lists every extra of pyproject.toml, and its repository row installs
what the Makefile installs: the table went stale once (no `[analyze]`, no `[docs]`)."""

from __future__ import annotations

import re
import tomllib

from tests.docs.blocks import REPO

INSTALL = REPO / "docs" / "install.md"


def _extras() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def _table_rows() -> list[str]:
    return [
        line for line in INSTALL.read_text(encoding="utf-8").splitlines() if line.startswith("| ")
    ]


def test_every_extra_is_in_the_install_table() -> None:
    named = {
        extra
        for row in _table_rows()
        for group in re.findall(r"\[([a-z,]+)\]", row)
        for extra in group.split(",")
    }
    assert _extras() <= named, f"extras missing from docs/install.md: {_extras() - named}"


def test_the_repository_row_installs_what_the_makefile_installs() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    installed = re.search(r"pip install --quiet -e '(\.\[[a-z,]+\])'", makefile)
    assert installed is not None
    repository = [row for row in _table_rows() if "working on this repository" in row]
    assert len(repository) == 1
    assert f"pip install -e '{installed[1]}'" in repository[0]
