"""tests/scheduling.py: what ``make test``'s two workers share, and what starts first."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

from tests.docs.blocks import load_page
from tests.docs.test_examples import local_steps
from tests.scheduling import (
    EMULATOR_TESTS,
    LONG_FIRST,
    SHARED_SET_UP,
    TRANSCRIPTS,
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


def test_the_transcripts_are_one_group_and_the_other_emulator_tests_another() -> None:
    transcripts = [
        f"{TRANSCRIPTS}::test_transcript[docs/analyst-bigquery.md:{n}]" for n in (10, 90)
    ]
    others = [
        f"{EMULATOR_TESTS}test_cli.py::test_plan_approve_apply_then_plan_again_through_the_cli",
        f"{EMULATOR_TESTS}test_deploy.py::test_a_view_changed_between_approve_and_apply[True]",
    ]
    assert {group(t) for t in transcripts} == {TRANSCRIPTS}
    assert {group(t) for t in others} == {EMULATOR_TESTS}


def test_tests_sharing_a_session_set_up_are_one_group() -> None:
    for path in SHARED_SET_UP:
        ids = [f"{path}::test_one", f"{path}::test_two[x]"]
        if path.endswith("/"):
            ids = [f"{path}test_a.py::test_one", f"{path}test_b.py::test_two"]
        assert {group(t) for t in ids} == {path}
    assert group("tests/schema/test_rules.py::test_one") is None


def test_the_long_groups_are_handed_out_first_longest_first() -> None:
    # xdist's own order: most tests first
    queue = OrderedDict.fromkeys(
        [
            "tests/schema/test_rules.py::test_a",
            EMULATOR_TESTS,
            "tests/docs/test_site.py",
            "tests/schema/test_rules.py::test_b",
            TRANSCRIPTS,
            "tests/test_packaging.py",
            "tests/check/test_ci_docs.py",
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
    assert LONG_FIRST[:2] == (TRANSCRIPTS, EMULATOR_TESTS)


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


def test_the_scheduler_starts_both_emulator_groups_first_and_keeps_a_page_together() -> None:
    page = [block_test(s.id) for p, _, s in local_steps() if p == "docs/cli.md"]
    collection = [
        *(f"tests/schema/test_rules.py::test_{n}" for n in range(40)),
        *page,
        "tests/check/test_ci_docs.py::test_the_documented_ci",
        f"{TRANSCRIPTS}::test_transcript[a]",
        f"{TRANSCRIPTS}::test_transcript[b]",
        f"{EMULATOR_TESTS}test_cli.py::test_a",
        f"{EMULATOR_TESTS}test_deploy.py::test_b",
    ]
    ran = run_scheduler(collection)
    assert sorted(t for tests in ran.values() for t in tests) == sorted(collection)
    firsts = {tests[0] for tests in ran.values()}
    assert firsts == {f"{TRANSCRIPTS}::test_transcript[a]", f"{EMULATOR_TESTS}test_cli.py::test_a"}
    assert len([name for name, tests in ran.items() if set(page) & set(tests)]) == 1
    for tests in ran.values():
        transcripts = [t for t in tests if t.startswith(TRANSCRIPTS)]
        assert transcripts in ([], [f"{TRANSCRIPTS}::test_transcript[{x}]" for x in "ab"])
