"""How ``make test`` shares the tests between its two workers (``-n 2 --dist loadgroup``).

xdist's loadgroup hands out one unit of work at a time; a unit is a group, or a single
test. Two rules decide the units (``group``) and which is handed out next (``rank``):

- Tests that share an expensive set-up are one group, so it is built once, not once on
  each worker: the emulator tests (two groups of about equal time, one emulator on each
  worker: the emulator works one query at a time, and on one worker it was the longest
  path), a docs page's blocks up to the next
  ``fresh`` (``tests/docs/runner.py`` replays every earlier block of the page on a
  worker that runs a later one alone), the tests of a file that defines a module or
  session fixture (the built manual read in chromium, the wheels, DuckDB corpora), the
  demo's and the report's folders (one demo run each).
- The groups that take minutes start first, longest first: a long group handed out last
  would run alone on one core at the end. Then xdist's own order: most tests first.

Groups carry no marks: with pytest 9.2, xdist 3.8 no longer sees ``xdist_group`` marks
(pytest-xdist issue 1386), and a test added to a folder or file needs none.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EMULATOR_TESTS = "tests/deploy/bigquery/"
# The emulator tests in two groups, each on one worker with its own emulator (a session
# fixture: kernel-picked ports, the worker's own basetemp, datasets named by process).
# These files are the first group; every other file of the folder is the second (the
# docs transcripts, which share one emulator's state in page order, and the short ones):
# about equal halves at 20c241f.
EMULATOR_FIRST = f"{EMULATOR_TESTS}deploy and command line"
EMULATOR_SECOND = f"{EMULATOR_TESTS}docs transcripts and the rest"
EMULATOR_FIRST_FILES = ("test_deploy.py", "test_cli.py")
EXAMPLES = "tests/docs/test_examples.py::test_block["
BLOCK_ID = re.compile(r"\[(?P<page>[^\]]+):(?P<line>\d+)\]$")
SHARED_FIXTURE = re.compile(r"""@pytest\.fixture\(scope="(?:module|session)"\)""")
# Folders whose conftest.py builds a session fixture that takes seconds.
SHARED_FOLDERS = (
    "tests/demo/",  # one run of the demo
    "tests/report/",  # one run of the demo and its report
)
# Minutes each, on two quiet cores (they start before everything else, in this order).
LONG_FIRST = (
    EMULATOR_FIRST,
    EMULATOR_SECOND,
    "tests/check/test_ci_docs.py",  # a wheel, a fresh environment and pre-commit's own
    "tests/docs/test_site.py",  # mkdocs build and every page read twice in chromium
    "tests/test_packaging.py",  # a wheel and a fresh environment from the package index
)


@functools.cache
def _segment_starts(page: str) -> dict[int, int]:
    """Each block's line -> the line of the block that opened its workspace."""
    from tests.docs.blocks import load_page

    loaded = load_page(page)
    return {
        step.block.line: loaded.steps[loaded.segment_start(i)].block.line
        for i, step in enumerate(loaded.steps)
    }


def _docs_segment(nodeid: str) -> str | None:
    found = BLOCK_ID.search(nodeid)
    if found is None:
        return None
    try:
        start = _segment_starts(found["page"])[int(found["line"])]
    except Exception:  # a page that does not load: its own test says why
        return None
    return f"{EXAMPLES}{found['page']}:{start}...]"


@functools.cache
def _defines_shared_fixture(path: str) -> bool:
    try:
        text = (REPO / path).read_text(encoding="utf-8")
    except OSError:
        return False
    return SHARED_FIXTURE.search(text) is not None


def group(nodeid: str) -> str | None:
    """The group ``nodeid`` runs in, or None when it is a unit of its own."""
    if nodeid.startswith(EMULATOR_TESTS):
        file = nodeid.split("::", 1)[0].removeprefix(EMULATOR_TESTS)
        return EMULATOR_FIRST if file in EMULATOR_FIRST_FILES else EMULATOR_SECOND
    if nodeid.startswith(EXAMPLES):
        return _docs_segment(nodeid)
    folder = next((path for path in SHARED_FOLDERS if nodeid.startswith(path)), None)
    if folder is not None:
        return folder
    path = nodeid.split("::", 1)[0]
    return path if _defines_shared_fixture(path) else None


def rank(scope: str) -> int:
    """Lower runs earlier; every other unit keeps xdist's order (most tests first)."""
    return next((i for i, path in enumerate(LONG_FIRST) if scope == path), len(LONG_FIRST))


def first_by_rank(scopes: Iterable[str]) -> str:
    return min(scopes, key=rank)  # the first of equal rank: xdist's own order


def make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadGroupScheduling

    class SharedSetUpTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group(nodeid) or str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            self.workqueue.move_to_end(first_by_rank(self.workqueue), last=False)
            super()._assign_work_unit(node)

    return SharedSetUpTogether(config, log)
