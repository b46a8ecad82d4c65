"""check-logs --strict-types holds an emitter line's envelope to what the emitter writes
(issue 38: the catalogue's JSON Schema says the same, tests/jsonschema holds them equal):
its severity, an ``invalid_fields`` that names something and each name once, and
``unknown_fields`` only as the flag 1. Without --strict-types none of these is counted
(a LogEntry's severity is Cloud Logging's), on both of check-logs' paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_telemetry.warehouse import check_logs
from tests.warehouse.lines import line, write_lines

BENT = {
    ("severity", "envelope"): [{"severity": "WARNING"}, {"severity": None}, {"severity": 5}],
    ("invalid_fields", "envelope"): [
        {"invalid_fields": []},
        {"invalid_fields": ["reason", "reason"]},
    ],
    ("unknown_fields", "envelope"): [{"unknown_fields": 0}, {"unknown_fields": 3}],
}


def _bent(extra: dict[str, object]) -> str:
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
