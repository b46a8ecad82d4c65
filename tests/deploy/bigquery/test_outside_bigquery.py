"""The two doors against a real BigQuery API (bqemulator on loopback): text read back from
BigQuery reaches no terminal, CI log or pull-request comment live (tests/test_outside_text.py
holds the table of hostile strings), and `views approve -o` and `views plan --html` write
through the file door (tests/test_files.py holds the table of writers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.config import DeploymentConfig
from tests.deploy.bigquery.emulator import PROJECT, Emulator
from tests.deploy.bigquery.test_cli import config_file, one_event_config, run
from tests.test_files import TARGET_TEXT, _plant, _tree
from tests.test_outside_text import ALL_AT_ONCE, PLAIN, markdown_problems, problems

__all__ = ["config_file", "one_event_config"]  # the fixtures, shared with test_cli.py


@pytest.fixture
def applied(tmp_path: Path, emulator: Emulator, one_event_config: Path) -> Path:
    """The generated views, planned, approved and applied: a deployment to read back."""
    config_file = one_event_config
    endpoint = ["--endpoint", emulator.endpoint]
    record = tmp_path / "approval.json"
    approved = run(
        [
            "views",
            "approve",
            "--config",
            str(config_file),
            *endpoint,
            "--by",
            "A",
            "-o",
            str(record),
        ]
    )
    assert approved.exit_code == 0, approved.output
    done = run(
        ["views", "apply", "--config", str(config_file), *endpoint, "--approval", str(record)]
    )
    assert done.exit_code == 0, done.output
    created = [line.split() for line in done.output.splitlines() if line.startswith("  ")]
    assert created == [["created", "chat_turn"], ["created", "telemetry_quality"]], done.output
    return config_file


def _redescribe(client: Any, retry: Any, table_id: str, text: str) -> None:
    """What anyone with edit rights on the dataset can do in the console."""
    table = client.get_table(table_id, retry=retry)
    table.description = text
    client.update_table(table, ["description"], retry=retry)


def test_a_description_edited_in_bigquery_reaches_no_output_live(
    emulator: Emulator,
    applied: Path,
    deployment: DeploymentConfig,
    bq_client: Any,
    bq_retry: Any,
) -> None:
    view = f"{PROJECT}.{deployment.target.dataset}.chat_turn"
    plan = ["views", "plan", "--config", str(applied), "--endpoint", emulator.endpoint]

    def comment(text: str, formats: tuple[str, ...]) -> list[str]:
        _redescribe(bq_client, bq_retry, view, text)
        outputs = []
        for fmt in formats:
            result = run([*plan, "--format", fmt])
            assert result.exit_code == 0, result.output
            outputs.append(result.output)
        return outputs

    # Every string at once: each plan costs the emulator seconds (the renderers see each
    # string alone in tests/test_outside_text.py). The plain description is only the
    # markdown baseline, so it is planned in markdown alone.
    [plain] = comment(PLAIN, ("markdown",))
    outputs = comment(f"edited {ALL_AT_ONCE}", ("text", "json", "markdown"))
    markdown = outputs[-1]
    for output in outputs:
        assert problems(output) == [], output
    assert "edited" in markdown  # the read-back is there, as text
    assert markdown_problems(markdown, plain, comment=True) == [], markdown


def test_bigquery_commands_write_through_the_file_door(
    tmp_path: Path, emulator: Emulator, one_event_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`views approve -o` and `views plan --html` refuse a linked folder or file (the
    same writers as tests/test_files.py's table, here from the command line)."""
    config_file = one_event_config
    endpoint = ["--endpoint", emulator.endpoint]
    commands = {
        "h/approval.json": ["views", "approve", "--by", "A", "-o", "h/approval.json"],
        "h/review.html": ["views", "plan", "--html", "h/review.html"],
    }
    for link in ("folder", "file"):
        for target, args in commands.items():
            repo, outside = tmp_path / link / target / "repo", tmp_path / link / target / "out"
            (repo / ".git").mkdir(parents=True)
            outside.mkdir()
            (outside / ".bashrc").write_text(TARGET_TEXT, encoding="utf-8")
            made = _plant(repo, outside, target, link)
            before = _tree(outside)
            monkeypatch.chdir(repo)
            result = run([*args, "--config", str(config_file), *endpoint])
            assert result.exit_code == 2, result.output
            assert "is a symbolic link" in result.output, result.output
            assert _tree(outside) == before
            assert made.is_symlink()
