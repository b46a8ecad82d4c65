"""check-logs --strict-types holds an emitter line's envelope to what the emitter writes
(issue 38: the catalogue's JSON Schema says the same, tests/jsonschema holds them equal):
its severity, an ``invalid_fields`` that names something and each name once, and
``unknown_fields`` only as the flag 1. Without --strict-types none of these is counted
(a LogEntry's severity is Cloud Logging's), on both of check-logs' paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent_telemetry.cli import main
from agent_telemetry.warehouse import check_logs
from tests.warehouse.lines import line, write_lines

# A line's envelope keys bent each way, by the (field, rule) each is counted under;
# a key's values are of any JSON type, as a log may hold them.
BENT: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("severity", "envelope"): [{"severity": "WARNING"}, {"severity": None}, {"severity": 5}],
    ("invalid_fields", "envelope"): [
        {"invalid_fields": []},
        {"invalid_fields": ["reason", "reason"]},
    ],
    ("unknown_fields", "envelope"): [{"unknown_fields": 0}, {"unknown_fields": 3}],
}


def _bent(extra: dict[str, Any]) -> str:
    text = line("pipeline_run", lane="public", status="ok", **extra)
    return text.replace('"severity":"INFO",', "") if "severity" in extra else text


@pytest.mark.parametrize("fast", [False, True])
def test_strict_types_counts_an_envelope_the_emitter_never_writes(
    tmp_path: Path, fast: bool
) -> None:
    lines = [_bent(extra) for cases in BENT.values() for extra in cases]
    path = write_lines(tmp_path / "bent.jsonl", [*lines, _bent({})])
    strict = check_logs([path], strict_types=True, fast=fast, sql_from=0)
    run = strict.events["pipeline_run"]
    envelope = {key: n for key, n in run.violations.items() if key[1] == "envelope"}
    assert envelope == {key: len(cases) for key, cases in BENT.items()}
    assert run.valid == 1
    lenient = check_logs([path], strict_types=False, fast=fast, sql_from=0)
    assert not [key for key in lenient.events["pipeline_run"].violations if key[1] == "envelope"]


@pytest.mark.parametrize("fast", [False, True])
def test_strict_types_takes_the_flag_1_and_only_the_integer_1(tmp_path: Path, fast: bool) -> None:
    """The emitter's flag is the JSON integer 1: a line carrying it is counted once, as
    keys dropped (unknown_keys), never also as a bent envelope; ``true`` and ``1.0`` are
    the flag in another JSON type, so --strict-types counts them as the envelope's."""
    flags: list[object] = [1, True, 1.0]
    path = write_lines(tmp_path / "flags.jsonl", [_bent({"unknown_fields": f}) for f in flags])
    strict = check_logs([path], strict_types=True, fast=fast, sql_from=0)
    run = strict.events["pipeline_run"]
    assert (run.lines, run.valid) == (3, 0)
    assert dict(run.violations) == {
        ("unknown_fields", "unknown_keys"): 1,
        ("unknown_fields", "envelope"): 2,
    }


def test_check_logs_strict_types_shows_the_flag_as_keys_dropped(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "flag.jsonl", [_bent({"unknown_fields": 1})])
    result = CliRunner().invoke(
        main, ["check-logs", str(path), "--strict-types", "--format", "json"]
    )
    assert result.exit_code == 1, result.output
    shown = json.loads(result.output)["events"]["pipeline_run"]
    assert (shown["lines"], shown["valid"], shown["invalid"]) == (1, 0, 1)
    assert shown["violations"] == {"unknown_fields": {"unknown_keys": 1}}
