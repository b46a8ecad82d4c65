"""The load's gate (``_judging.typed``): a shortcut that may only send lines to Python.

Past the gate DuckDB reads values typed, so the gate must match every line where that
reading could differ from the judgement, and should not match lines that only look odd
(``NaN`` inside a string, a value of another type under a key nobody reads). Each line
below is loaded both ways (the tables and counts must be equal, as in test_two_paths.py)
and its route is checked: SQL decides it, or Python does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.warehouse.test_two_paths import _load, _staged_kinds

T = '"time":"2026-05-09T07:35:25.123456Z"'
RUN = '"event":"pipeline_run","schema_version":1,' + T
RENDER = '"event":"pipeline_render","schema_version":1,' + T
ENTRY = '"insertId":"i1","timestamp":"2026-05-09T07:35:25Z","jsonPayload":'

# (line, decided in SQL?)
LINES = {
    "nan inside a string": ("{" + RUN + ',"lane":"NaN","error":"Infinity and banana"}', True),
    "key name inside a string": ("{" + RUN + ',"error":"queue_wait_ms: 5.5"}', True),
    "NaN as a value": ("{" + RUN + ',"queue_wait_ms":NaN}', False),
    "nan as a string field's value": ("{" + RUN + ',"lane":nan}', False),
    "-Infinity": ("{" + RUN + ',"queue_wait_ms":-Infinity}', False),
    "trailing comma": ("{" + RUN + ',"lane":"x",}', False),
    "plain integers": ("{" + RUN + ',"queue_wait_ms":-5,"attempts":0}', True),
    "18 digits": ("{" + RUN + ',"queue_wait_ms":123456789012345678}', True),
    "19 digits": ("{" + RUN + ',"queue_wait_ms":9223372036854775807}', False),
    "integral double": ("{" + RUN + ',"queue_wait_ms":5.0}', False),
    "exponent": ("{" + RUN + ',"queue_wait_ms":1e2}', False),
    "minus zero": ("{" + RUN + ',"queue_wait_ms":-0}', False),
    "true in an integer field": ("{" + RUN + ',"queue_wait_ms":true}', False),
    "number as a string": ("{" + RUN + ',"queue_wait_ms":"5"}', False),
    "space before the colon": ("{" + RUN + ',"queue_wait_ms" : 5.5}', False),
    "tab after the colon": ("{" + RUN + ',"queue_wait_ms":\t5.5}', False),
    "number in a string field": ("{" + RUN + ',"lane":1}', False),
    "object in a string field": ("{" + RUN + ',"lane":{"a":1}}', False),
    "string boolean": ("{" + RENDER + ',"passed":"true"}', False),
    "one as a boolean": ("{" + RENDER + ',"passed":1}', False),
    "plain boolean": ("{" + RENDER + ',"passed":false}', True),
    "explicit nulls": ("{" + RUN + ',"lane":null,"queue_wait_ms":null,"passed":null}', True),
    "invalid_fields": ("{" + RUN + ',"invalid_fields":["lane"]}', False),
    "time as a number": ('{"event":"pipeline_run","schema_version":1,"time":5}', False),
    "key written twice": ("{" + RUN + ',"lane":"a","lane":"b"}', False),
    "unknown key": ("{" + RUN + ',"zz":1}', False),
    # An emitter line's keys are counted by its colons (a valid time holds two): a colon
    # anywhere else takes the exact test, which lets known keys through.
    "a colon in a string": ("{" + RUN + ',"lane":"a:b","error":":"}', True),
    "time without colons": ('{"event":"pipeline_run","schema_version":1,"time":"x"}', True),
    "an unknown key and a colon in a string": ("{" + RUN + ',"lane":":","zz":1}', False),
    "a null and an unknown key": ("{" + RUN + ',"lane":null,"zz":1}', False),
    "a colon in an unknown key's name": ("{" + RUN + ',"a:b":1}', False),
    "no time, an unknown key": ('{"event":"pipeline_run","schema_version":1,"zz":"1:2"}', False),
    "time twice": ("{" + RUN + "," + T + "}", False),
    "an unknown key holding an object": ("{" + RUN + ',"zz":{}}', False),
    "entry": ("{" + ENTRY + '{"event":"chat_turn","schema_version":1,"tier":"x"}}', True),
    "entry, insert id a number": (
        '{"insertId":5,"timestamp":"2026-05-09T07:35:25Z","jsonPayload":'
        '{"event":"chat_turn","schema_version":1}}',
        False,
    ),
    "entry, timestamp a number": (
        '{"insertId":"i","timestamp":5,"jsonPayload":{"event":"chat_turn","schema_version":1}}',
        False,
    ),
    "entry, payload key twice": (
        "{" + ENTRY + '{"event":"chat_turn","schema_version":1,"tier":"a","tier":"b"}}',
        False,
    ),
    "entry, payload a string": ("{" + ENTRY + '"x","event":"chat_turn","schema_version":1}', False),
    "entry, resource beside it": (
        "{" + ENTRY + '{"event":"chat_turn","schema_version":1},'
        '"resource":{"labels":{"kind":5,"lane":1.5}}}',
        False,  # the gate matches the nested keys too: only slower
    ),
    "entry, other keys beside it": (
        "{" + ENTRY + '{"event":"chat_turn","schema_version":1},"severity":"INFO",'
        '"labels":{"instanceId":"x"},"receiveTimestamp":"2026-05-09T07:35:26Z"}',
        True,
    ),
}


@pytest.mark.parametrize("name", list(LINES))
def test_the_gate_routes_each_line_and_both_judges_agree(name: str, tmp_path: Path) -> None:
    line, in_sql = LINES[name]
    path = tmp_path / "line.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert _load([path], fast=True) == _load([path], fast=False)
    kinds = _staged_kinds(path)
    assert kinds is not None
    assert kinds == ({"telemetry": 1} if in_sql else {"python": 1})
