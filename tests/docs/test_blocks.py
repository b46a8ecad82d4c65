"""The docs-test harness itself: the convention parses as docs/testing.md says, and a
wrong example fails."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.docs.blocks import BlockError, classify, commands, load_page, parse_blocks
from tests.docs.runner import EXECUTORS, PageRun, matches, normalise


def convention_example() -> str:
    page = load_page("docs/testing.md")
    (step,) = [s for s in page.steps if s.kind == "checked-by"]
    return step.block.text


def test_the_convention_example_classifies_as_documented(tmp_path: Path) -> None:
    page = classify("example.md", parse_blocks("example.md", convention_example()))
    assert [s.kind for s in page.steps] == ["python", "file", "console"]
    assert page.steps[0].output is not None
    assert page.steps[1].arg == "greeting.txt"
    assert [c.command for c in commands(page.steps[2].block)] == [
        "cat greeting.txt",
        "grep bye greeting.txt",
        "echo $?",
    ]
    run = PageRun(page, tmp_path, EXECUTORS)
    assert [run.outcome(i).failures() for i in range(3)] == [[], [], []]


def wrong(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("hello\n```\n\n<!--", "goodbye\n```\n\n<!--", "output differs from its output block"),
        ("$ cat greeting.txt\nhello", "$ cat greeting.txt\nhullo", "output differs"),
        ("$ echo $?\n1", "$ echo $?\n0", "output differs"),
        ("$ grep bye greeting.txt\n$ echo $?\n1\n", "$ grep bye greeting.txt\n", "exited 1"),
    ],
)
def test_a_wrong_example_fails(tmp_path: Path, old: str, new: str, says: str) -> None:
    text = wrong(convention_example(), old, new)
    page = classify("example.md", parse_blocks("example.md", text))
    run = PageRun(page, tmp_path, EXECUTORS)
    failures = [f for i in range(len(page.steps)) for f in run.outcome(i).failures()]
    assert failures
    assert any(says in f for f in failures), failures


def test_a_block_neither_run_nor_marked_is_an_error() -> None:
    text = "```yaml\na: 1\n```\n"
    with pytest.raises(BlockError, match="neither run nor marked"):
        classify("x.md", parse_blocks("x.md", text))


def test_an_output_block_after_no_python_block_is_an_error() -> None:
    text = '```console\n$ true\n```\n\n```text title="output"\nx\n```\n'
    with pytest.raises(BlockError, match="follows no run python block"):
        classify("x.md", parse_blocks("x.md", text))


def test_an_unknown_directive_is_an_error() -> None:
    with pytest.raises(BlockError, match="unknown docs-test directive"):
        parse_blocks("x.md", "<!-- docs-test: skip -->\n```sh\nls\n```\n")


def test_an_elision_stands_for_any_lines_but_nothing_else_changes() -> None:
    assert matches("a\n...\nd", "a\nb\nc\nd")
    assert matches("a\n...\nd", "a\nd")
    assert not matches("a\n...\nd", "a\nb\nc\ne")
    assert not matches("a\nb", "a\nb\nc")


def test_a_timestamp_matches_only_one_the_run_stamped_itself() -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    documented = normalise('{"time":"2026-05-09T08:00:00.000000Z"}')
    assert matches(documented, normalise(f'{{"time":"{now}"}}'))
    assert not matches(documented, normalise('{"time":"2026-05-09T08:00:01.000000Z"}'))


def test_digests_compare_by_which_are_equal() -> None:
    a, b = "a" * 64, "b" * 64

    def pattern(text: str) -> str:
        return normalise(text, hashes={})

    assert pattern(f"{a} {a} {b}") == pattern(f"{b} {b} {a}")
    assert pattern(f"{a} {a} {b}") != pattern(f"{a} {b} {b}")
    assert re.fullmatch(r"<hash-1> <hash-1> <hash-2>", pattern(f"{a} {a} {b}"))
