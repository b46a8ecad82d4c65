"""tests/scheduling.py: what ``make test``'s two workers share, and what starts first."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

from tests.conftest import REPO
from tests.docs.blocks import load_page
from tests.docs.test_examples import local_steps
from tests.scheduling import (
    EMULATOR_FIRST,
    EMULATOR_FIRST_FILES,
    EMULATOR_SECOND,
    EMULATOR_TESTS,
    LONG_FIRST,
    SHARED_FOLDERS,
    first_by_rank,
    group,
    make_scheduler,
)


def block_test(step_id: str) -> str:
    return f"tests/docs/test_examples.py::test_block[{step_id}]"


def test_a_pages_blocks_are_one_group_until_a_fresh_workspace() -> None:
    page = load_page("docs/evolving-the-schema.md")
    local = [(i, s) for p, i, s in local_steps() if p == page.path]
    groups = {i: group(block_test(s.id)) for i, s in local}
    assert None not in groups.values()
    for i, _ in local:
        same = {groups[j] for j, _ in local if page.segment_start(j) == page.segment_start(i)}
        assert same == {groups[i]}
    # the page opens fresh workspaces: its segments may run on both workers
    assert len(set(groups.values())) == len({page.segment_start(i) for i, _ in local}) > 1


def test_every_block_of_every_page_is_in_its_pages_group() -> None:
    for page, _, step in local_steps():
        found = group(block_test(step.id))
        assert found is not None, step.id
        assert page in found, step.id


def test_the_emulator_tests_are_two_groups_and_a_files_tests_stay_in_one() -> None:
    """Two emulators, one per worker; a file's tests (a module fixture, the docs page's
    story told in order) never straddle them."""
    files = sorted(p.name for p in (REPO / EMULATOR_TESTS).glob("test_*.py"))
    assert set(EMULATOR_FIRST_FILES) < set(files)  # none renamed away, the second not empty
    for name in files:
        tests = [f"{EMULATOR_TESTS}{name}::test_one", f"{EMULATOR_TESTS}{name}::test_two[x]"]
        expected = EMULATOR_FIRST if name in EMULATOR_FIRST_FILES else EMULATOR_SECOND
        assert {group(t) for t in tests} == {expected}, name
    transcript = "test_docs_transcripts.py::test_transcript[docs/analyst-bigquery.md:74]"
    assert group(f"{EMULATOR_TESTS}{transcript}") == EMULATOR_SECOND


def test_a_files_tests_are_one_group_when_it_defines_a_module_or_session_fixture() -> None:
    for path in ("tests/views/test_dedupe.py", "tests/docs/test_site.py", *LONG_FIRST[2:]):
        assert "scope=" in (REPO / path).read_text(encoding="utf-8")
        assert {group(f"{path}::test_one"), group(f"{path}::test_two[x]")} == {path}
    assert group("tests/schema/test_rules.py::test_one") is None
    assert group("tests/docs/test_blocks.py::test_an_unknown_directive_is_an_error") is None


def test_a_folder_with_a_session_fixture_in_its_conftest_is_one_group() -> None:
    for path in SHARED_FOLDERS:
        assert 'scope="session"' in (REPO / path / "conftest.py").read_text(encoding="utf-8")
        ids = [f"{path}test_a.py::test_one", f"{path}test_b.py::test_two"]
        assert {group(t) for t in ids} == {path}


def test_the_long_groups_are_handed_out_first_longest_first() -> None:
    # xdist's own order: most tests first
    queue = OrderedDict.fromkeys(
        [
            "tests/schema/test_rules.py::test_a",
            "tests/test_packaging.py",
            "tests/docs/test_site.py",
            "tests/schema/test_rules.py::test_b",
            EMULATOR_SECOND,
            "tests/check/test_ci_docs.py",
            EMULATOR_FIRST,
        ]
    )
    handed_out = []
    while queue:
        scope = first_by_rank(queue)
        del queue[scope]
        handed_out.append(scope)
    assert handed_out == [
        *LONG_FIRST,
        "tests/schema/test_rules.py::test_a",
        "tests/schema/test_rules.py::test_b",
    ]
    assert LONG_FIRST[:2] == (EMULATOR_FIRST, EMULATOR_SECOND)


class Worker:
    """A stand-in for an xdist worker: records what it is sent, runs it in order."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.done = 0
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def run_scheduler(collection: list[str]) -> dict[str, list[str]]:
    """The real scheduler of ``make test`` on two stand-in workers that finish their tests
    in turn; each worker's tests in the order it ran them."""
    config = SimpleNamespace(
        getvalue=lambda name: {"tx": ["2*popen"], "dist": "loadgroup"}[name],
        option=SimpleNamespace(loadscopereorder=True),
    )
    scheduler = make_scheduler(config, None)
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
    for worker in workers:
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    while any(w.done < len(w.sent) for w in workers):
        for worker in workers:
            if worker.done < len(worker.sent):
                scheduler.mark_test_complete(worker, worker.sent[worker.done])
                worker.done += 1
    return {w.gateway.id: [collection[i] for i in w.sent] for w in workers}


def test_the_scheduler_starts_an_emulator_group_on_each_worker_and_keeps_a_page() -> None:
    page = [block_test(s.id) for p, _, s in local_steps() if p == "docs/cli.md"]
    first = [f"{EMULATOR_TESTS}test_cli.py::test_a", f"{EMULATOR_TESTS}test_deploy.py::test_b"]
    second = [
        f"{EMULATOR_TESTS}test_docs_transcripts.py::test_transcript[a]",
        f"{EMULATOR_TESTS}test_docs_transcripts.py::test_transcript[b]",
        f"{EMULATOR_TESTS}test_dedupe.py::test_c",
    ]
    collection = [
        *(f"tests/schema/test_rules.py::test_{n}" for n in range(40)),
        *page,
        "tests/check/test_ci_docs.py::test_the_documented_ci",
        *second,
        *first,
    ]
    ran = run_scheduler(collection)
    assert sorted(t for tests in ran.values() for t in tests) == sorted(collection)
    firsts = {tests[0] for tests in ran.values()}
    assert firsts == {first[0], second[0]}
    for tests in (page, first, second):
        assert len([name for name, ran_here in ran.items() if set(tests) & set(ran_here)]) == 1
