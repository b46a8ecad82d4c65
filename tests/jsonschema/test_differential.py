"""The catalogue's JSON Schema and check-logs --strict-types agree, line for line (issue 38).

Two validators read the committed schema (Python ``jsonschema`` with format checking,
``ajv`` with ``ajv-formats`` under Node); check-logs judges each line alone. The lines:
the warehouse's hostile corpora (the emitter's lines and what surrounds them) plus
hypothesis lines, each a line the emitter could write with usually one thing bent.

The one difference allowed, and counted: an integer written as an integral double
(``5.0``). JSON Schema's ``integer`` accepts it (and JavaScript cannot tell 5.0 from 5);
check-logs --strict-types refuses it. Every other line: the three verdicts are equal.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_telemetry.schema.catalogue import default_catalogue
from tests.jsonschema.bent import bent_line
from tests.jsonschema.differential import (
    ROOT,
    Verdict,
    ajv_verdicts,
    check_logs_verdict,
    python_verdicts,
)
from tests.warehouse import corpus

SCHEMA_PATH = ROOT / "agent_telemetry" / "views" / "generated" / "events.schema.json"
CATALOGUE = default_catalogue()

# Hostile lines written by hand: what a service in another language, or a broken
# pipe, puts on a line (parse edges, number edges, key edges).
TIME = '"time":"2026-05-09T07:35:25.123456Z"'
RUN = '{"event":"pipeline_run","schema_version":1,"severity":"INFO",' + TIME + ","
HAND_WRITTEN = (
    RUN + '"lane":"public","status":"ok","queue_wait_ms":NaN}',
    RUN + '"lane":"public","status":"ok","queue_wait_ms":1e400}',
    RUN + '"lane":"public","status":"ok","queue_wait_ms":1.23e6}',
    RUN + '"lane":"public","status":"ok","queue_wait_ms":123456789012345678901234567890}',
    RUN + '"lane":"public","status":"ok","queue_wait_ms":1234567}',
    RUN + '"lane":"bogus","lane":"public","status":"ok"}',
    RUN + '"lane":"public","status":"ok","attempts":true}',
    RUN + '"lane":"public","status":"ok","lane ":"public"}',
    RUN + '"lane":"public","status":"ok","invalid_fields":["reason","reason"]}',
    RUN + '"status":"ok","invalid_fields":["lane"]}',
    RUN + '"status":"ok","invalid_fields":"lane"}',
    RUN + '"lane":"public","status":"ok","unknown_fields":1e0}',
    '{"event":"telemetry_rejected","schema_version":1,"severity":"INFO",'
    + TIME
    + ',"reason":"unknown_event"}',
    '{"event":"no_such_event","schema_version":1,"severity":"INFO",' + TIME + "}",
    '{"event":"pipeline_run","severity":"INFO",' + TIME + ',"lane":"public","status":"ok"}',
    RUN + '"lane":"public","status":"ok"',  # cut off
    '["pipeline_run"]',
    "plain text",
    '"a string"',
    "{}",
)


def _corpus_lines() -> list[str]:
    """The warehouse corpus's emitter files and hostile lines, as UTF-8 lines (a line
    that is not UTF-8 is not JSON to any validator: check-logs calls it undecodable)."""
    data = [corpus.emitter_file(seed)[0] for seed in (1, 2, 3, 4)]
    data.append(corpus.hostile_lines(5)[0])
    lines = []
    for blob in data:
        for raw in blob.split(b"\n"):
            if raw.strip():
                try:
                    lines.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    continue
    return lines


def _judge_all(lines: list[str], folder: Path) -> Counter[str]:
    """Every line through the three judges; fails on any disagreement but 5.0."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    python = python_verdicts(schema, lines)
    ajv = ajv_verdicts(SCHEMA_PATH, lines)
    assert len(python) == len(ajv) == len(lines)
    tally: Counter[str] = Counter()
    for text, by_python, by_ajv in zip(lines, python, ajv, strict=True):
        assert by_python == by_ajv, f"jsonschema and ajv disagree: {text}"
        judged = check_logs_verdict(text, folder, CATALOGUE)
        if judged.verdict is Verdict.NOT_AN_EMITTER_LINE:
            assert not by_python, f"the schema took a LogEntry for a line: {text}"
            tally["not an emitter line"] += 1
            continue
        says_valid = judged.verdict is Verdict.VALID
        if by_python != says_valid:
            assert by_python, f"schema refuses, check-logs --strict-types accepts: {text}"
            assert judged.integral_doubles_only, (
                f"schema accepts, check-logs --strict-types refuses (not for 5.0): {text}"
            )
            tally["5.0: schema accepts, check-logs refuses"] += 1
        else:
            tally["valid" if says_valid else "invalid"] += 1
    return tally


def test_the_committed_schema_is_a_valid_draft_2020_12_document() -> None:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)


def test_the_corpora_are_judged_alike(tmp_path: Path) -> None:
    lines = [*_corpus_lines(), *HAND_WRITTEN]
    tally = _judge_all(lines, tmp_path)
    print(f"{len(lines)} lines through jsonschema, ajv and check-logs: {dict(tally)}")
    # The corpora hold every kind: a test whose lines are all valid proves nothing.
    assert tally["valid"]
    assert tally["invalid"]
    assert tally["not an emitter line"]
    assert tally["5.0: schema accepts, check-logs refuses"]


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(bent_line(CATALOGUE.version_specs()), min_size=200, max_size=200))
def test_bent_lines_are_judged_alike(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tally = _judge_all(lines, Path(folder))
    print(f"{len(lines)} hypothesis lines through jsonschema, ajv and check-logs: {dict(tally)}")


@pytest.mark.parametrize("value", [1_234_567, 1001, 3_599_999])
def test_the_schema_refuses_a_value_off_the_precision_grid(value: int) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    line = json.dumps(
        {
            "event": "pipeline_run",
            "schema_version": 1,
            "severity": "INFO",
            "time": "2026-05-09T07:35:25.123456Z",
            "lane": "public",
            "status": "ok",
            "queue_wait_ms": value,
        }
    )
    rounded = line.replace(str(value), str(int(float(f"{value:.3g}"))))
    assert python_verdicts(schema, [line, rounded]) == [False, True]
    assert ajv_verdicts(SCHEMA_PATH, [line, rounded]) == [False, True]
