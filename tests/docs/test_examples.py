"""Every code block of the manual (README.md, docs/*.md) runs and prints what it shows.

The convention is docs/testing.md's ("Every example is a test"); blocks.py classifies
the blocks, runner.py runs them. Each block is its own test id (``page:line``). BigQuery
transcripts run in tests/deploy/bigquery/test_docs_transcripts.py; blocks that cannot
run are listed in NOT_RUN below, so one cannot be added without this file changing.
"""

from __future__ import annotations

import pytest

from tests.docs.blocks import BlockError, Page, Step, load_page, pages
from tests.docs.conftest import Runs

# (page, reason) of every block marked not-run, in page order.
NOT_RUN: list[tuple[str, str]] = [
    (
        "README.md",
        "builds .venv from nothing; .ci/run is make test, and make demo runs the first "
        "transcript of docs/analyst-local.md",
    ),
    ("docs/analyst-bigquery.md", "installs from PyPI and signs in to Google Cloud"),
    ("docs/analyst-guide.md", "a synopsis of the two commands"),
    ("docs/analyst-guide.md", "needs Google Cloud credentials and a project"),
    ("docs/analyst-guide.md", "needs Google Cloud credentials and a project"),
    ("docs/analyst-guide.md", "needs Google Cloud credentials and a project"),
    ("docs/analyst-guide.md", "needs Google Cloud credentials and a project"),
    ("docs/analyst-guide.md", "a telemetry.toml fragment"),
    ("docs/analyze.md", "installs from PyPI"),
    ("docs/ci.md", "installs from a git host"),
    ("docs/ci.md", "tags and pushes a release of this repository"),
    ("docs/ci.md", "runs pre-commit in a service repository"),
    ("docs/ci.md", "GitHub Actions steps"),
    ("docs/ci.md", "a service's own log file"),
    ("docs/ci.md", "GitHub Actions steps"),
    ("docs/performance.md", "timings depend on the machine; bench/emit.py prints its own target"),
    ("docs/performance.md", "counts depend on the machine's load; the script prints its own"),
    (
        "docs/performance.md",
        "timings depend on the machine; bench/warehouse.py prints its own target",
    ),
    (
        "docs/performance.md",
        "timings depend on the machine; bench/warehouse.py prints its own target",
    ),
    ("docs/performance.md", "timings depend on the machine"),
    (
        "docs/performance.md",
        "timings depend on the machine; bench/warehouse.py prints its own target",
    ),
    ("docs/performance.md", "timings depend on the machine"),
    ("docs/service-guide.md", "imports a service's own catalogue module"),
    ("docs/testing.md", "rewrites the pages it runs"),
]


def loadable(page: str) -> Page | None:
    try:
        return load_page(page)
    except BlockError:
        return None  # test_page_follows_the_convention says why


def local_steps() -> list[tuple[str, int, Step]]:
    return [
        (page.path, index, step)
        for page in filter(None, map(loadable, pages()))
        for index, step in enumerate(page.steps)
        if step.kind != "bigquery"
    ]


@pytest.mark.parametrize("page", pages())
def test_page_follows_the_convention(page: str) -> None:
    load_page(page)


@pytest.mark.parametrize(
    ("page", "index", "step"), [pytest.param(*s, id=s[2].id) for s in local_steps()]
)
def test_block(docs_runs: Runs, page: str, index: int, step: Step) -> None:
    failures = docs_runs.page(page).outcome(index).failures()
    assert not failures, f"{step.id} ({step.kind}):\n" + "\n\n".join(failures)


def test_every_block_not_run_is_listed_with_its_reason() -> None:
    found = [(page, skip.reason) for page in pages() for skip in load_page(page).not_run]
    assert found == NOT_RUN
