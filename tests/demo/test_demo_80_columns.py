"""`agent-telemetry demo` at COLUMNS=80: the pinned transcript, and no name cut short.

The transcript is tests/demo/demo-80-columns.txt; after an intended change of the demo,
rewrite it with AGENT_TELEMETRY_DEMO_UPDATE=1 and review the diff.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_telemetry.demo import run_demo

TRANSCRIPT = Path(__file__).with_name("demo-80-columns.txt")
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> str:
    cwd = tmp_path_factory.mktemp("demo80")
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "TZ": "UTC"}
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(
        [str(BIN / "agent-telemetry"), "demo", "--out", "demo-out"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_80_column_transcript_is_pinned(transcript: str) -> None:
    if os.environ.get("AGENT_TELEMETRY_DEMO_UPDATE") == "1":
        TRANSCRIPT.write_text(transcript, encoding="utf-8")
    assert transcript == TRANSCRIPT.read_text(encoding="utf-8")


def test_no_table_cuts_a_name_at_80_columns(transcript: str, tmp_path: Path) -> None:
    assert "…" not in transcript
    words = set(re.findall(r"[A-Za-z0-9_:.%-]+", transcript))
    names = {
        cell
        for section in run_demo(tmp_path).sections
        for row in section.rows
        for cell in row
        if isinstance(cell, str)
    }
    assert names, "the demo printed no names"
    assert sorted(names - words) == []  # each name whole on one line, never folded or cut
    for line in transcript.splitlines():  # free text may soft-wrap; a table row never does
        if not line.startswith(("agent-telemetry demo:", "loaded ", "check-logs ")):
            assert len(line) <= 80, line
