"""The SQL judge of the load and of ``check-logs``: one gate over each line, then
DuckDB's typed reading of the rest.

Reading every key as its JSON text and judging each value in SQL would cost a text per
value and several expressions per field. Here one regular expression over the line (the
*gate*) sends to Python every line where DuckDB's typed reading could differ from the
judgement, and DuckDB reads the others in one parse straight into the sink's types.
The gate matches:

- what DuckDB's parser takes and orjson refuses, from the text (``_judging.sql``): a
  backslash (escapes), ``NaN`` or ``Infinity``, a trailing comma;
- after the name of a key the judgement reads, a value that is not of that key's JSON
  type in its plain form: for an integer field anything but ``null`` or a plain integer
  of at most 18 digits (DuckDB reads ``5.5`` as 6, ``true`` as 1, ``"5"`` as 5); for a
  string field anything but ``null`` or a string (DuckDB reads ``1`` as ``'1'``); for a
  boolean field anything but ``true``, ``false`` or ``null`` (DuckDB reads ``1`` and
  ``"t"`` as true; the strings ``"true"``/``"false"`` go to Python too); for
  ``invalid_fields`` anything but ``null`` (Python filters its items); for the record's
  ``timestamp`` and ``insertId`` anything but a string; for ``jsonPayload`` anything but
  an object; for ``json_payload`` anything.

Without a backslash a key is its name in quotes, JSON whitespace, then a colon (a string
value followed by a colon is not JSON), so the gate cannot miss a value that is read.
It may match where nothing is read (a nested object's key of the same name, a key
written twice): the line only goes to Python, which is never wrong, only slower. Past
the gate every value read is null or plain and of its type, which DuckDB reads as the
judgement does: a plain integer as itself, a string without escapes as its text.

What a record is (blank, text, other JSON, the emitter's line or a LogEntry), keys
written twice or unknown, and nesting are decided here; timestamps by ``_judging.sql``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal, get_args

from agent_telemetry.warehouse._judging.python import LIFTED_KEYS, PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._judging.sql import (
    DEEP_CHECK,
    LENIENT,
    OWN_KEYS,
    PYTHON,
    ident,
    lit,
    timestamp_sql,
)
from agent_telemetry.warehouse._reading.records import MAX_DEPTH
from agent_telemetry.warehouse._reading.source import MAX_RECORD

# Which records one parse reads: a file of the emitter's lines, of LogEntries, or both.
# A line of the other kind goes to Python, so a wrong guess costs time, never a value.
Shape = Literal["emitter", "entry", "any"]
SHAPES: tuple[Shape, ...] = get_args(Shape)
_ENTRY_KEY = b'"jsonPayload"'

_TYPES: dict[ValueKind, str] = {
    "int": "BIGINT",
    "string": "VARCHAR",
    "bool": "BOOLEAN",
    "strings": "VARCHAR[]",
}
_SPACE = "[ \\t\\r]*"  # JSON whitespace inside a line
# After a key, the start of a value the typed reading would not read as the judgement:
# the value starts with a character outside the set, or (integers) is not plain.
_NOT_PLAIN: dict[str, str] = {
    "int": "(?:[^-0-9n \\t\\r]|-?[0-9]+[.eE]|-0|-?[0-9]{19})",
    "string": '[^"n \\t\\r]',
    "bool": "[^tfn \\t\\r]",
    "strings": "[^n \\t\\r]",
    "object": "[^{n \\t\\r]",
    "any": "[^n \\t\\r]",
}
# The record's own keys read beside the payload's, and what their values must be.
_OWN_READ = {"timestamp": "string", "insertId": "string", "jsonPayload": "object"}
_OWN_READ |= {"json_payload": "any"}


def gate(kinds: Mapping[str, ValueKind]) -> str:
    """The regular expression matching every line Python must judge (see above)."""
    by_rule: dict[str, list[str]] = {}
    for key, kind in [*kinds.items(), *_OWN_READ.items()]:
        by_rule.setdefault(kind, []).append(re.escape(key))
    values = [
        f'"(?:{"|".join(keys)})"{_SPACE}:{_SPACE}{_NOT_PLAIN[rule]}'
        for rule, keys in by_rule.items()
    ]
    # A LogEntry key read twice (orjson keeps the last, DuckDB the first), at any depth.
    twice = [f'"{key}"{_SPACE}:.*"{key}"{_SPACE}:' for key in _OWN_READ]
    return "|".join(["\\\\", LENIENT, *values, *twice])


def _struct(fields: Mapping[str, object]) -> str:
    return lit(json.dumps(dict(fields)))


def _distinct_known(cheap: str, keys: str, struct: str, known: list[str]) -> str:
    """No key written twice, every key one of ``known``. Cheap first: when ``cheap`` (at
    least the number of keys) equals the number of known keys holding a value, the keys
    are exactly those (a key holding null is not counted, so such a record takes the
    exact test). ``keys`` (the key list, a second parse) only for the others."""
    listed = "[" + ", ".join(lit(key) for key in known) + "]"
    holding = " + ".join(f"({struct}.{ident(key)} IS NOT NULL)::INT" for key in known)
    # CASE, not OR: in a projection DuckDB evaluates both sides of an OR on every row.
    return (
        f"(CASE WHEN {cheap} = {holding} THEN true ELSE len(list_distinct({keys})) "
        f"= len({keys}) AND list_has_all({listed}, {keys}) END)"
    )


def _colons(text: str) -> str:
    return f"(strlen({text}) - strlen(replace({text}, ':', '')))"


def file_shape(head: bytes) -> Shape:
    """The shape to parse a file with, from its first bytes (``head``): the emitter's
    lines when hardly any line names a ``jsonPayload``, LogEntries when nearly every one
    does (an export), else both. Reading both in one parse costs about a fifth more
    per line; a line Python judges, about ten times more."""
    lines = head.count(b"\n") + (not head.endswith(b"\n"))
    share = head.count(_ENTRY_KEY) / max(lines, 1)
    return "emitter" if share < 0.05 else "entry" if share > 0.9 else "any"


class TypedJudge:
    """The load's statement judging one file's lines, for a sink keeping ``keep``, with
    one parse reading records of ``shape``."""

    def __init__(
        self,
        keep: frozenset[str],
        kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS,
        shape: Shape = "any",
    ) -> None:
        self.kinds: dict[str, ValueKind] = {k: v for k, v in kinds.items() if k in keep}
        self.shape = shape
        self.gate = gate(self.kinds)
        payload = {key: _TYPES[kind] for key, kind in self.kinds.items()}
        own = {"timestamp": "VARCHAR", "insertId": "VARCHAR", "json_payload": "VARCHAR"}
        # One parse: an emitter line's keys at the top, a LogEntry's in its payload. For
        # the emitter's lines alone, a payload is only noticed (that line goes to Python).
        entry_payload: object = "JSON" if shape == "emitter" else payload
        top = {} if shape == "entry" else {**payload, "severity": "VARCHAR"}
        self.struct: dict[str, object] = {**top, "jsonPayload": entry_payload, **own}
        self.top_keys = list(dict.fromkeys([*self.kinds, *OWN_KEYS]))

    def statement(self, reader: str) -> str:
        return self.stages(reader)["final"]

    def stages(self, reader: str) -> dict[str, str]:
        """The SELECTs over ``reader`` (a VARCHAR column ``line`` per line) giving each
        line's ``kind`` (a ``Kind`` value or ``python``), its judged ``jsonPayload``,
        ``timestamp`` and ``insertId`` when it is telemetry, and the ``line`` itself when
        Python must judge it."""
        brackets = "strlen(line) - strlen(replace(replace(line, '{', ''), '[', ''))"
        plain_object = (
            f"NOT regexp_matches(line, {lit(self.gate)}) "
            f"AND (strlen(line) <= {DEEP_CHECK} OR {brackets} <= {MAX_DEPTH})"
        )
        stripped = "trim(line, ' \t\x0b\x0c\r')"  # what Python's bytes.strip() takes off
        first = (
            f"CASE WHEN line IS NULL THEN 'blank' WHEN strlen(line) > {MAX_RECORD} "
            f"THEN 'oversized' WHEN line[1] = '{{' THEN (CASE WHEN {plain_object} "
            f"THEN 'json' ELSE '{PYTHON}' END) "
            f"WHEN {stripped} = '' THEN 'blank' "
            f"WHEN {stripped}[1] IN ('{{', '[', '\ufeff') THEN '{PYTHON}' ELSE 'text' END"
        )
        parsed = (
            "SELECT *, CASE WHEN first = 'json' THEN "
            f"TRY(from_json(line, {_struct(self.struct)})) END AS v "
            f"FROM (SELECT *, {first} AS first FROM {reader})"
        )
        payload_keys = "json_keys(line, '$.jsonPayload')"
        distinct_payload = _distinct_known(
            f"len({payload_keys})", payload_keys, "v.jsonPayload", list(self.kinds)
        )
        # A LogEntry's other keys are neither read nor counted (its own keys read twice
        # do not pass the gate).
        entry = (
            "v.jsonPayload.event IS NOT NULL AND v.jsonPayload.schema_version IS NOT NULL "
            f"AND {distinct_payload}"
        )
        # An emitter line's keys, counted without a second parse: past the gate a line
        # has no backslash, so no quote inside a string, and every key is followed by a
        # colon. The colons are at least its keys plus the colons of the strings read:
        # of those, only a valid time holds any (the closed sets hold none), and any
        # other colon only sends the line to the exact test.
        emitter_cheap = f"{_colons('line')} - coalesce({_colons('v.time')}, 0)"
        as_entry = f"(CASE WHEN {entry} THEN 'entry' ELSE '{PYTHON}' END)"
        as_emitter = (
            f"WHEN NOT {_distinct_known(emitter_cheap, 'json_keys(line)', 'v', self.top_keys)} "
            f"THEN '{PYTHON}' "
            "WHEN v.event IS NOT NULL AND v.schema_version IS NOT NULL THEN 'emitter' "
            "ELSE 'other_json'"
        )
        by_shape = {
            "entry": f"WHEN v.jsonPayload IS NOT NULL THEN {as_entry} ELSE '{PYTHON}'",
            "emitter": f"WHEN v.jsonPayload IS NOT NULL THEN '{PYTHON}' {as_emitter}",
            "any": f"WHEN v.jsonPayload IS NOT NULL THEN {as_entry} {as_emitter}",
        }
        shaped = (
            f"SELECT *, CASE WHEN first <> 'json' THEN first "
            f"WHEN v IS NULL OR v.json_payload IS NOT NULL THEN '{PYTHON}' "
            f"{by_shape[self.shape]} END AS shape FROM ({parsed})"
        )
        form, stamp, stamp_python = timestamp_sql()
        times = [] if self.shape == "emitter" else ["WHEN shape = 'entry' THEN v.timestamp"]
        times += [] if self.shape == "entry" else ["WHEN shape = 'emitter' THEN v.time"]
        judged = (
            f"SELECT *, CASE WHEN shape IN ('entry', 'emitter') AND {stamp_python} "
            f"THEN '{PYTHON}' ELSE shape END AS kind FROM (SELECT *, {form} AS ts_form "
            f"FROM (SELECT *, CASE {' '.join(times)} END AS ts FROM ({shaped})))"
        )
        telemetry = "kind IN ('entry', 'emitter')"
        values = [f"{ident(key)} := {self.value(key)}" for key in self.kinds]
        payload = f"struct_pack({', '.join(values)})"
        if self.shape == "entry":  # read as the sink keeps it (invalid_fields: only null)
            payload = "v.jsonPayload"
        # Without a timestamp there is no entry key: the row is stored without its id.
        final = (
            f"SELECT CASE WHEN {telemetry} THEN 'telemetry' ELSE kind END AS kind, "
            f"CASE WHEN {telemetry} THEN {payload} END AS jsonPayload, "
            "stamp AS timestamp, "
            "CASE WHEN kind = 'entry' AND stamp IS NOT NULL THEN v.insertId END AS insertId, "
            f"CASE WHEN kind = '{PYTHON}' THEN line END AS line "
            f"FROM (SELECT *, CASE WHEN {telemetry} THEN {stamp} END AS stamp FROM ({judged}))"
        )
        return {"parsed": parsed, "shaped": shaped, "judged": judged, "final": final}

    def value(self, key: str) -> str:
        """The payload's ``key`` as the sink stores it, over ``judged`` (past the gate a
        value read is null or of its type)."""
        name, kind = ident(key), self.kinds[key]
        if kind == "strings":  # invalid_fields: only null passes the gate
            return f"NULL::{_TYPES[kind]}"
        # Cloud Logging lifts the time and severity out of an emitter line.
        if self.shape == "entry" or (self.shape == "any" and key in LIFTED_KEYS):
            return f"CASE WHEN shape = 'entry' THEN v.jsonPayload.{name} END"
        if key in LIFTED_KEYS:
            return f"NULL::{_TYPES[kind]}"
        if self.shape == "emitter":
            return f"v.{name}"
        return f"CASE WHEN shape = 'entry' THEN v.jsonPayload.{name} ELSE v.{name} END"

    def absent(self, key: str) -> str:
        """A telemetry line's ``key`` is absent or null, over ``judged``: the payload's
        key, or for an emitter line, the record's."""
        if key in self.kinds:
            return f"({self.value(key)} IS NULL)"
        if self.shape == "entry":  # no emitter line is read
            return "true"
        return f"(shape <> 'emitter' OR v.{ident(key)} IS NULL)"

    def stamp(self) -> str:
        """The line's sink ``timestamp``, over ``judged``."""
        return timestamp_sql()[1]
