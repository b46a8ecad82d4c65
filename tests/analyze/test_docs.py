"""docs/analyze.md shows real output: every `views analyze` example on the page is run on
the SQL files the page shows, and its output and exit status must match."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.conftest import EXAMPLE_CONFIG, REPO

PAGE = REPO / "docs" / "analyze.md"
MISSING_EXTRA = "Error: GoogleSQL's analyzer needs the [analyze] extra"
ENTRY = "from agent_telemetry.cli import main; main()"


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """(language, the last text line before the block, body) of every fenced block."""
    blocks = []
    before = ""
    lines = iter(text.splitlines())
    for line in lines:
        fence = re.fullmatch(r"```(\w+)", line)
        if fence is None:
            before = line if line.strip() else before
            continue
        body = []
        for inner in lines:
            if inner == "```":
                break
            body.append(inner)
        blocks.append((fence[1], before, "\n".join(body)))
        before = ""
    return blocks


def _files() -> dict[str, str]:
    found = {}
    for language, before, body in _blocks(PAGE.read_text(encoding="utf-8")):
        name = re.fullmatch(r"`([\w.]+\.sql)`:", before.strip())
        if language == "sql" and name:
            found[name[1]] = body + "\n"
    return found


def _examples() -> list[tuple[list[str], list[str], int | None]]:
    """(arguments, expected output lines, expected exit status or None) per command."""
    examples = []
    for language, _, body in _blocks(PAGE.read_text(encoding="utf-8")):
        if language != "console":
            continue
        lines = body.splitlines()
        for index, line in enumerate(lines):
            if not line.startswith("$ agent-telemetry "):
                continue
            output = []
            status = None
            for following in lines[index + 1 :]:
                if following == "$ echo $?":
                    status = int(lines[lines.index(following, index) + 1])
                    break
                if following.startswith("$ "):
                    break
                output.append(following)
            examples.append((shlex.split(line[2:])[1:], output, status))
    return examples


EXAMPLES = _examples()


def test_the_page_has_the_examples() -> None:
    assert {"failure_rate.sql", "retries.sql", "per_user.sql"} <= set(_files())
    assert len(EXAMPLES) >= 4


@pytest.mark.usefixtures("analyzer_runtime")
@pytest.mark.parametrize(("args", "output", "status"), EXAMPLES, ids=lambda v: str(v)[:40])
def test_example_output_is_real(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    output: list[str],
    status: int | None,
) -> None:
    shutil.copy(EXAMPLE_CONFIG, tmp_path / "telemetry.toml")
    for name, sql in _files().items():
        (tmp_path / name).write_text(sql, encoding="utf-8")
    if output and output[0].startswith(MISSING_EXTRA):
        # sys.modules[name] = None: `import zetasql` fails as if it were not installed.
        code = "import sys; sys.modules['zetasql'] = None\n" + ENTRY
        result = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert result.stderr.splitlines() == output
        assert result.returncode == 2  # an error, not a violation
        return
    monkeypatch.chdir(tmp_path)  # the page runs the command beside telemetry.toml
    result = CliRunner().invoke(main, args)
    assert result.output.splitlines() == output
    assert result.exit_code == status
