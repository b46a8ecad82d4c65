"""Per-session state of the manual's examples: one PageRun per page, and in update mode
(AGENT_TELEMETRY_DOCS_UPDATE=1) the outputs to write back into the pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.blocks import load_page
from tests.docs.runner import EXECUTORS, PageRun, rewrite, updating


class Runs:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.runs: dict[str, PageRun] = {}

    def page(self, path: str) -> PageRun:
        if path not in self.runs:
            self.runs[path] = PageRun(load_page(path), self.base / "pages", EXECUTORS)
        return self.runs[path]


@pytest.fixture(scope="session")
def docs_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    runs = Runs(tmp_path_factory.mktemp("docs"))
    yield runs
    if updating():
        replacements = [
            outcome.replacement
            for run in runs.runs.values()
            for outcome in run.outcomes.values()
            if outcome.replacement is not None
        ]
        for page in rewrite(replacements):
            print(f"\nupdated {page}")
