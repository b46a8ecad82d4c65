"""Run the manual's blocks (see blocks.py) in a workspace and compare what they print.

A page's blocks run in order in one workspace: a temporary copy of the repository (the
files git tracks or would track, as they are on disk), made a git repository with one
commit, with its own package first on PYTHONPATH, so a block that edits the models edits
the copy. A ``fresh`` directive starts a new workspace. Running one block's test alone
first runs the blocks before it in its workspace.

Output is compared after ``normalise`` (the rules are listed in docs/testing.md). With
AGENT_TELEMETRY_DOCS_UPDATE=1 the tests write what the commands really printed into the
pages instead of failing (outputs that already match are kept as written, elisions
included): review the diff, then commit it.
"""

from __future__ import annotations

import difflib
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.docs.blocks import REPO, Block, Page, Step, commands

UPDATE_ENV = "AGENT_TELEMETRY_DOCS_UPDATE"
BIN = Path(sys.executable).parent
COLUMNS = "100"  # rich tables and click help are laid out for this width
TIMEOUT_S = 600
ELISION = "..."
TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\b")
PYTEST_DURATION = re.compile(r"\bin \d+\.\d+s\b")
HASH = re.compile(r"\b[0-9a-f]{64}\b")


NOW_WINDOW = timedelta(days=1)


def _now_ish(match: re.Match[str]) -> str:
    stamp = datetime.fromisoformat(match.group(0).replace("Z", "+00:00"))
    return "<time>" if abs(datetime.now(UTC) - stamp) < NOW_WINDOW else match.group(0)


def normalise(
    text: str, workspace: Path | None = None, hashes: dict[str, str] | None = None
) -> str:
    """The rules both sides of every comparison go through (docs/testing.md). ``hashes``
    numbers sha256 digests in order of first appearance; pass one dict per side for a
    whole block, so equal digests must be equal on both sides and different ones
    different, whatever their value."""
    if workspace is not None:
        text = text.replace(str(workspace), "<workspace>")
    if hashes is not None:
        text = HASH.sub(lambda m: hashes.setdefault(m[0], f"<hash-{len(hashes) + 1}>"), text)
    text = TIME.sub(_now_ish, text)
    text = PYTEST_DURATION.sub("in <duration>", text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def matches(expected: str, actual: str) -> bool:
    """``actual`` is ``expected``, where a line ``...`` stands for any lines (or none),
    and a timestamp also matches ``<time>`` (one the run itself stamped)."""
    parts = [
        r"(?:[^\n]*\n)*?" if line == ELISION else _literal(line) + r"\n"
        for line in (expected + "\n").splitlines()
    ]
    return re.fullmatch("".join(parts), actual + "\n") is not None if expected else not actual


def _literal(line: str) -> str:
    pieces, last = [], 0
    for stamp in TIME.finditer(line):
        pieces += [re.escape(line[last : stamp.start()]), f"(?:{re.escape(stamp[0])}|<time>)"]
        last = stamp.end()
    return "".join([*pieces, re.escape(line[last:])])


def diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(), actual.splitlines(), "documented", "actual", lineterm=""
    )
    return "\n".join(lines)


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    # outputs that differ from the page: update mode writes ``replacement`` instead
    mismatches: list[str] = field(default_factory=list)
    replacement: tuple[Block, str] | None = None

    def failures(self) -> list[str]:
        fixed = updating() and self.replacement is not None
        return self.problems + ([] if fixed else self.mismatches)


def environment(workspace: Path, extra: Mapping[str, str] = ()) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENT_TELEMETRY_", "PYTEST_", "GIT_")) and k != "COLUMNS"
    }
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
        PYTHONPATH=str(workspace),
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        COLUMNS=COLUMNS,
        TERM="dumb",
        TZ="UTC",
        GIT_AUTHOR_NAME="Docs Test",
        GIT_AUTHOR_EMAIL="docs@example.invalid",
        GIT_COMMITTER_NAME="Docs Test",
        GIT_COMMITTER_EMAIL="docs@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(workspace.parent / "home"),
    )
    env.update(extra)
    return env


def repository_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted({p for p in out.split("\0") if p and (REPO / p).is_file()})


def new_workspace(parent: Path) -> Path:
    """A copy of the repository with one commit, in ``parent/repo``."""
    parent.mkdir(parents=True, exist_ok=True)
    (parent / "home").mkdir(exist_ok=True)
    root = parent / "repo"
    for path in repository_files():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, root / path)
    env = environment(root)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


Executor = Callable[[Step, Path], Outcome]


class PageRun:
    """A page's steps, run in order, each at most once, in their workspaces."""

    def __init__(
        self,
        page: Page,
        base: Path,
        executors: Mapping[str, Executor],
        prepare: Callable[[Path], None] | None = None,
    ) -> None:
        self.page = page
        self.base = base
        self.executors = executors
        self.prepare = prepare
        self.outcomes: dict[int, Outcome] = {}
        self.workspaces: dict[int, Path] = {}

    def outcome(self, index: int) -> Outcome:
        start = self.page.segment_start(index)
        if start not in self.workspaces:
            workspace = new_workspace(self.base / f"{Path(self.page.path).stem}-{start}")
            if self.prepare is not None:
                self.prepare(workspace)
            self.workspaces[start] = workspace
        for i in range(start, index + 1):
            if i not in self.outcomes:
                step = self.page.steps[i]
                self.outcomes[i] = self.executors[step.kind](step, self.workspaces[start])
        return self.outcomes[index]


# --- executors ---------------------------------------------------------------------------


def run_console(step: Step, workspace: Path, extra_env: Mapping[str, str] = ()) -> Outcome:
    """Run a transcript's commands in one bash, in order; compare each one's output."""
    cmds = commands(step.block)
    mark = f"@@docs-test-{secrets.token_hex(8)}@@"
    script = ["exec 2>&1"]
    for cmd in cmds:
        script += [cmd.command, f"__rc=$?; printf '\\n{mark} %d\\n' \"$__rc\"; (exit $__rc)"]
    result = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=workspace,
        env=environment(workspace, extra_env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    pieces = re.split(rf"\n{re.escape(mark)} (-?\d+)\n", result.stdout)
    outputs, codes = pieces[0:-1:2], [int(code) for code in pieces[1::2]]
    outcome = Outcome()
    if len(codes) != len(cmds):
        outcome.problems.append(
            f"the transcript did not run to its end ({len(codes)} of {len(cmds)} commands):\n"
            + result.stdout[-3000:]
            + result.stderr[-3000:]
        )
        return outcome
    new_lines: list[str] = []
    documented_hashes: dict[str, str] = {}
    actual_hashes: dict[str, str] = {}
    for n, (cmd, output, code) in enumerate(zip(cmds, outputs, codes, strict=True)):
        expected = normalise("\n".join(cmd.expected), workspace, documented_hashes)
        actual = normalise(output, workspace, actual_hashes)
        new_lines += cmd.source
        if matches(expected, actual):
            new_lines += cmd.expected
        else:
            new_lines += output.rstrip("\n").splitlines() if output.strip() else []
            outcome.mismatches.append(f"$ {cmd.command}\noutput differs:\n{diff(expected, actual)}")
        shown = n + 1 < len(cmds) and cmds[n + 1].command.strip() == "echo $?"
        if code != 0 and not shown and cmd.command.strip() != "echo $?":
            outcome.problems.append(
                f"$ {cmd.command}\nexited {code}; a transcript shows a failing command's "
                "status with `$ echo $?` on the next line"
            )
    outcome.replacement = (step.block, "\n".join(new_lines) + "\n")
    return outcome


def run_python(step: Step, workspace: Path) -> Outcome:
    """Run the block as a script; stdout (and, if it fails, the exception line) must be
    the output block, or nothing when there is none."""
    result = subprocess.run(
        [sys.executable, "-"],
        input=step.block.text,
        cwd=workspace,
        env=environment(workspace),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    printed = result.stdout
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines() if line.strip()]
        printed += (errors[-1] if errors else f"(exit {result.returncode})") + "\n"
    elif result.stderr.strip():
        printed += result.stderr
    expected = normalise(step.output.text if step.output else "", workspace, {})
    actual = normalise(printed, workspace, {})
    outcome = Outcome()
    if not matches(expected, actual):
        where = "its output block" if step.output else "no output block (so it prints nothing)"
        outcome.mismatches.append(
            f"the script's output differs from {where}:\n{diff(expected, actual)}\n"
            f"stderr:\n{result.stderr[-3000:]}"
        )
        if step.output is not None:
            outcome.replacement = (step.output, printed)
    return outcome


def write_file(step: Step, workspace: Path) -> Outcome:
    target = workspace / step.arg
    target.parent.mkdir(parents=True, exist_ok=True)
    if step.kind == "append":
        with target.open("a", encoding="utf-8") as out:
            out.write(step.block.text)
    else:
        target.write_text(step.block.text, encoding="utf-8")
    return Outcome()


def apply_patch(step: Step, workspace: Path) -> Outcome:
    # an editor may strip a blank context line's one space; put it back
    hunks = "".join(line if line.strip() else " \n" for line in step.block.text.splitlines(True))
    result = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", "-"],
        input=hunks,
        cwd=workspace,
        env=environment(workspace),
        capture_output=True,
        text=True,
        check=False,
    )
    return Outcome([] if result.returncode == 0 else [f"git apply failed:\n{result.stderr}"])


def check_excerpt(step: Step, workspace: Path) -> Outcome:
    path = workspace / step.arg
    if not path.is_file():
        return Outcome([f"{step.arg}: no such file"])
    expected = normalise(step.block.text)
    actual = normalise(path.read_text(encoding="utf-8"))
    if matches(expected, actual):
        return Outcome()
    return Outcome([f"{step.arg} no longer reads as quoted:\n{diff(expected, actual)}"])


def check_checked_by(step: Step, workspace: Path) -> Outcome:
    path, _, name = step.arg.partition("::")
    test_file = REPO / path
    if not name or not test_file.is_file():
        return Outcome([f"checked-by {step.arg}: no such test file"])
    if f"def {name}(" not in test_file.read_text(encoding="utf-8"):
        return Outcome([f"checked-by {step.arg}: {path} defines no {name}"])
    return Outcome()


EXECUTORS: dict[str, Executor] = {
    "console": run_console,
    "python": run_python,
    "file": write_file,
    "append": write_file,
    "patch": apply_patch,
    "excerpt": check_excerpt,
    "checked-by": check_checked_by,
}


# --- update mode --------------------------------------------------------------------------


def updating() -> bool:
    return os.environ.get(UPDATE_ENV) == "1"


def rewrite(replacements: list[tuple[Block, str]]) -> list[str]:
    """Write each block's new text into its page; returns the pages changed."""
    changed: list[str] = []
    by_page: dict[str, list[tuple[Block, str]]] = {}
    for block, text in replacements:
        by_page.setdefault(block.page, []).append((block, text))
    for page, items in by_page.items():
        path = REPO / page
        lines = path.read_text(encoding="utf-8").splitlines()
        for block, text in sorted(items, key=lambda item: -item[0].line):
            pad = " " * block.indent
            body = [(pad + line).rstrip() if line.strip() else "" for line in text.splitlines()]
            lines[block.line : block.end - 1] = body
        new = "\n".join(lines) + "\n"
        if new != path.read_text(encoding="utf-8"):
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed
