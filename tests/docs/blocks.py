"""The code blocks of the manual (README.md and docs/*.md), each classified by the
convention in docs/testing.md ("Every example is a test").

A fenced block is classified by its language and by the ``<!-- docs-test: ... -->``
comments directly above it (blank lines, other HTML comments and a file caption such as
``retries.sql``: may sit between; the comment is invisible on
GitHub and in the site):

- ```` ```console ````: a transcript. ``$ `` lines are commands (a line ending in ``\\``
  continues, a heredoc runs to its terminator); the lines up to the next command are its
  expected output.
- ```` ```python ````: a script; the next block, when its info string carries
  ``title="output"``, is its expected output.
- ``file PATH`` / ``append PATH``: the block's text is written to (appended to) PATH.
- ``patch``: a unified diff, applied with ``git apply``.
- ``excerpt PATH``: the block is PATH's text, with ``...`` lines for what is left out.
- ``bigquery [SETUP,...]``: a console transcript run against the BigQuery emulator by
  tests/deploy/bigquery/test_docs_transcripts.py, after the named set-up steps.
- ``checked-by TEST``: a dedicated test checks the block (``path::test_name``).
- ``not-run: REASON``: not run; every such block is listed in tests/docs/test_examples.py.
- ``fresh``: the block and those after it run in a new workspace.

A block that fits none of these is an error, so nothing is skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)\s*-->")
# Lines that may sit between a directive and its block: another HTML comment (e.g. a
# sample marker another test reads) and a file caption such as ``retries.sql``: .
KEEPS_DIRECTIVES = re.compile(r"<!--.*-->|`[^`]+`:")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')
KINDS = ("file", "append", "patch", "excerpt", "bigquery", "checked-by", "not-run", "fresh")
# Generated, and held to the models by `agent-telemetry check` (GENERATED_DRIFT).
GENERATED_PAGES = ("docs/telemetry.md",)


class BlockError(ValueError):
    """A page breaks the convention (unclosed fence, unknown directive, orphan output)."""


@dataclass(frozen=True)
class Directive:
    kind: str
    arg: str


@dataclass(frozen=True)
class Block:
    page: str  # repository path, e.g. docs/service-guide.md
    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    indent: int
    lang: str
    attrs: dict[str, str]
    text: str  # the content, fence indentation removed, ending in a newline (or empty)
    directives: tuple[Directive, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    def directive(self, kind: str) -> Directive | None:
        return next((d for d in self.directives if d.kind == kind), None)

    @property
    def is_output(self) -> bool:
        return self.attrs.get("title") == "output"


@dataclass
class Step:
    """One runnable unit: a block, plus for a python block its expected output."""

    kind: str  # console, python, file, append, patch, excerpt, bigquery, checked-by
    block: Block
    output: Block | None = None
    arg: str = ""
    fresh: bool = False
    setups: tuple[str, ...] = field(default=())

    @property
    def id(self) -> str:
        return self.block.id


@dataclass(frozen=True)
class NotRun:
    block: Block
    reason: str


@dataclass(frozen=True)
class Page:
    path: str
    steps: tuple[Step, ...]
    not_run: tuple[NotRun, ...]

    def segment_start(self, index: int) -> int:
        """Index of the step that opened the workspace ``steps[index]`` runs in."""
        start = 0
        for i in range(index + 1):
            if self.steps[i].fresh:
                start = i
        return start


def pages() -> list[str]:
    """Every page of the manual, README first."""
    docs = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md"))
    return ["README.md", *(p for p in docs if p not in GENERATED_PAGES)]


def parse_blocks(page: str, text: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    pending: list[Directive] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = FENCE.match(line)
        if match is None:
            found = DIRECTIVE.fullmatch(line.strip())
            if found is not None:
                pending.append(_directive(page, i + 1, found.group("body")))
            elif line.strip() and not KEEPS_DIRECTIVES.fullmatch(line.strip()):
                pending = []
            i += 1
            continue
        indent, fence, info = len(match["indent"]), match["fence"], match["info"].strip()
        close = re.compile(rf"^ {{0,{indent + 3}}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        if j == len(lines):
            raise BlockError(f"{page}:{i + 1}: code block never closed")
        lang = info.split()[0] if info and not info.startswith("{") else ""
        attrs = dict(ATTRIBUTE.findall(info))
        content = "\n".join(body) + ("\n" if body else "")
        blocks.append(Block(page, i + 1, j + 1, indent, lang, attrs, content, tuple(pending)))
        pending = []
        i = j + 1
    return blocks


def _directive(page: str, line: int, body: str) -> Directive:
    kind, _, arg = body.partition(" ")
    kind = kind.rstrip(":")
    if kind == "not-run" and ":" in body:
        arg = body.split(":", 1)[1]
    if kind not in KINDS:
        raise BlockError(f"{page}:{line}: unknown docs-test directive {kind!r}; known: {KINDS}")
    return Directive(kind, arg.strip())


def classify(page: str, blocks: list[Block]) -> Page:
    steps: list[Step] = []
    not_run: list[NotRun] = []
    for n, block in enumerate(blocks):
        fresh = block.directive("fresh") is not None
        if block.is_output:
            before = blocks[n - 1] if n else None
            if before is None or before.lang != "python" or before.directive("not-run"):
                raise BlockError(f"{block.id}: an output block follows no run python block")
            continue
        if (skip := block.directive("not-run")) is not None:
            if not skip.arg:
                raise BlockError(f"{block.id}: not-run needs a reason")
            not_run.append(NotRun(block, skip.arg))
            continue
        step = _step(block, blocks[n + 1] if n + 1 < len(blocks) else None)
        step.fresh = fresh
        steps.append(step)
    return Page(page, tuple(steps), tuple(not_run))


def _step(block: Block, following: Block | None) -> Step:
    for kind in ("file", "append", "excerpt", "checked-by"):
        if (d := block.directive(kind)) is not None:
            if not d.arg:
                raise BlockError(f"{block.id}: {kind} needs an argument")
            return Step(kind, block, arg=d.arg)
    if block.directive("patch") is not None:
        return Step("patch", block)
    if (d := block.directive("bigquery")) is not None:
        if block.lang != "console":
            raise BlockError(f"{block.id}: bigquery applies to console blocks")
        setups = tuple(s.strip() for s in d.arg.split(",") if s.strip())
        return Step("bigquery", block, setups=setups)
    if block.lang == "console":
        return Step("console", block)
    if block.lang == "python":
        output = following if following is not None and following.is_output else None
        return Step("python", block, output=output)
    raise BlockError(
        f"{block.id}: a ```{block.lang or '(no language)'} block that is neither run nor "
        "marked: give it a docs-test directive (see docs/testing.md)"
    )


def load_page(page: str) -> Page:
    text = (REPO / page).read_text(encoding="utf-8")
    return classify(page, parse_blocks(page, text))


@dataclass(frozen=True)
class Command:
    """One ``$`` command of a console transcript and the output shown under it."""

    command: str  # as bash runs it (continuation lines and heredoc included)
    source: list[str]  # the transcript lines of the command
    expected: list[str]  # the transcript lines of its output


def commands(block: Block) -> list[Command]:
    result: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    if lines and not lines[0].startswith("$ "):
        raise BlockError(f"{block.id}: a console block starts with a `$ ` command")
    while i < len(lines):
        source = [lines[i]]
        while source[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            source.append(lines[i])
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", " ".join(source))
        if heredoc is not None:
            while i + 1 < len(lines) and lines[i] != heredoc.group(1):
                i += 1
                source.append(lines[i])
        i += 1
        expected: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        command = "\n".join([source[0][2:], *source[1:]])
        result.append(Command(command, source, expected))
    return result
