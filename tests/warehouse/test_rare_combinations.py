"""People who stand out in the data (issue 36): ``check-logs`` counts, per event and UTC
day, the valid lines whose closed-set values fewer than k lines share, on both of its
paths alike, and never shows the values of such a combination."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from agent_telemetry.cli import main
from agent_telemetry.warehouse._checking.check_logs import check_logs
from agent_telemetry.warehouse._checking.render import render_json, render_rare
from tests.warehouse.lines import entry, line

# One admin's chat turns among many public ones: the admin is a combination of one.
PUBLIC = {"tier": "public", "kind": "text"}
ADMIN = {"tier": "admin", "kind": "action", "refusal": "strike"}
DAY = "2026-05-09T{}Z"


def _log(tmp_path: Path, lines: list[str], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _mixed() -> list[str]:
    public = [
        line("chat_turn", time=DAY.format(f"09:00:{i:02d}.000000"), **PUBLIC) for i in range(40)
    ]
    admin = [line("chat_turn", time=DAY.format(f"10:00:0{i}.000000"), **ADMIN) for i in range(3)]
    # The same admin again just after midnight: another UTC day, alone there too.
    late = [line("chat_turn", time="2026-05-10T00:00:00.000000Z", **ADMIN)]
    # LogEntries (another shape) of the public combination, the same day.
    entries = [
        json.dumps(entry("chat_turn", timestamp=DAY.format(f"11:00:{i:02d}.5"), **PUBLIC))
        for i in range(10)
    ]
    return public + admin + late + entries


def _chat_days(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in report["rare_combinations"]["days"] if d["event"] == "chat_turn"]


@pytest.mark.parametrize("fast", [False, True], ids=["python", "sql"])
def test_a_combination_fewer_than_k_lines_share_is_counted(tmp_path: Path, fast: bool) -> None:
    report = check_logs([_log(tmp_path, _mixed())], fast=fast, sql_from=0).as_dict()
    assert _chat_days(report) == [
        {
            "event": "chat_turn",
            "day": "2026-05-09",
            "lines": 53,
            "combinations": 2,
            "rare_lines": 3,
            "rare_combinations": 1,
            "rarest": [3, 50],
        },
        {
            "event": "chat_turn",
            "day": "2026-05-10",
            "lines": 1,
            "combinations": 1,
            "rare_lines": 1,
            "rare_combinations": 1,
            "rarest": [1],
        },
    ]


def test_both_paths_agree_and_k_moves_the_line(tmp_path: Path) -> None:
    path = _log(tmp_path, _mixed())
    for k in (2, 3, 4, 51):
        fast = check_logs([path], fast=True, sql_from=0, k=k).as_dict()["rare_combinations"]
        slow = check_logs([path], fast=False, k=k).as_dict()["rare_combinations"]
        assert fast == slow
        assert fast["k"] == k
    counted = {k: check_logs([path], k=k).rare.rare_lines for k in (2, 3, 4, 51)}
    assert counted == {2: 1, 3: 1, 4: 4, 51: 54}


def test_the_values_of_a_rare_combination_are_never_shown(tmp_path: Path) -> None:
    # A member that is rare *and* unusual: were any cell the value, this would show.
    report = check_logs([_log(tmp_path, _mixed())])
    text = io.StringIO()
    render_rare(report.rare, Console(file=text, width=200))
    assert "chat_turn" in text.getvalue()
    shown = json.loads(render_json(report))["rare_combinations"]
    for rare in (text.getvalue(), json.dumps(shown)):
        for value in ("admin", "action", "strike", "public", "text"):
            assert value not in rare, (value, rare)


def test_k_comes_from_the_option_then_the_deployment_file(tmp_path: Path) -> None:
    path = _log(tmp_path, _mixed())
    (tmp_path / "telemetry.toml").write_text(
        Path("telemetry.toml").read_text(encoding="utf-8") + "\n[check_logs]\nk_anonymity = 4\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    config = ["--config", str(tmp_path / "telemetry.toml")]

    def k_of(*args: str) -> int:
        result = runner.invoke(main, ["check-logs", str(path), "--format", "json", *args])
        assert result.exit_code == 0, result.output
        k: int = json.loads(result.output)["rare_combinations"]["k"]
        return k

    assert k_of() == 5
    assert k_of(*config) == 4
    assert k_of(*config, "--k-anonymity", "3") == 3
    refused = runner.invoke(main, ["check-logs", str(path), "--k-anonymity", "1"])
    assert refused.exit_code == 2
