"""The `views approve` command a plan prints for its reader to run next: the options the
plan was made with, each one a single shell word however its value is spelled."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from agent_telemetry.deploy._plan_document import approve_command


def test_a_plan_made_with_no_options_prints_the_bare_command() -> None:
    assert approve_command(None, None, None) == "agent-telemetry views approve"


@pytest.mark.parametrize(
    ("config", "layout", "endpoint", "words"),
    [
        (Path("telemetry.toml"), None, None, ["--config", "telemetry.toml"]),
        (None, "sharded", None, ["--layout", "sharded"]),
        (None, None, "http://127.0.0.1:9050", ["--endpoint", "http://127.0.0.1:9050"]),
        (
            Path("ops/telemetry.toml"),
            "analytics",
            "http://127.0.0.1:9050",
            [
                "--config",
                "ops/telemetry.toml",
                "--layout",
                "analytics",
                "--endpoint",
                "http://127.0.0.1:9050",
            ],
        ),
    ],
    ids=["config", "layout", "endpoint", "all three in order"],
)
def test_each_option_the_plan_was_made_with_is_in_the_command(
    config: Path | None, layout: str | None, endpoint: str | None, words: list[str]
) -> None:
    command = approve_command(config, layout, endpoint)
    assert shlex.split(command) == ["agent-telemetry", "views", "approve", *words]


def test_a_config_path_a_shell_would_split_or_expand_stays_one_word() -> None:
    """Pasted into a shell, the command runs approve on the same file: no word splitting,
    no `$(...)` run, no glob expanded."""
    config = Path("my repo/tele $(touch pwned) *.toml")
    command = approve_command(config, None, None)
    assert shlex.split(command) == ["agent-telemetry", "views", "approve", "--config", str(config)]
    assert "'my repo/tele $(touch pwned) *.toml'" in command
