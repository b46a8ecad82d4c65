"""The judgement of ``_judge``, written in DuckDB SQL, for the records DuckDB reads exactly.

The SQL path of ``check-logs`` (``_checklogs_fast``) reads a plain JSON-lines file with
DuckDB's parallel CSV reader, one line per row, as the load's fast path does
(``_load_fast``; the load's own judge, ``_judge_typed``, reads values typed behind a
gate and needs no fragments), and judges each line here by the same rules as
``_load_scan`` (what a record is) and ``_judge`` (what each value reads as). Each record
is parsed once, into the JSON text of every key the judgement reads (a *fragment*:
``"public"``, ``5``, ``null``; SQL NULL when the key is absent), and each value is read
from its fragment. A line is decided here only where DuckDB's parser and orjson provably
agree; every other line gets the kind ``python`` and ``_judge`` itself judges it from
its text. So a line is never judged differently here, only sent to the slower judge:

- a line that is not plain: a backslash (escapes: lone surrogates, escaped keys), a
  BOM, an array, ``NaN``/``Infinity`` or a trailing comma (DuckDB's parser takes them,
  orjson refuses), nesting that might be too deep, JSON DuckDB refuses;
- a key written twice where it is read (orjson keeps the last, DuckDB the first), or
  a key the judgement does not know beside an emitter's keys (a LogEntry's own keys,
  resource, labels and the like, are neither read nor parsed);
- a value whose reading needs Python's own arithmetic: a number other than a plain
  64-bit integer, or a string, in an integer field; ``invalid_fields`` (its items are
  filtered); a timestamp not in the plain ``...Z`` form; a ``jsonPayload`` that is not
  an envelope; any Log Analytics ``json_payload``.

Everything else is decided here exactly: blank lines, plain text, oversized lines, JSON
that is not telemetry, and the telemetry of the emitter's lines and Cloud Logging
LogEntries, value by value (a value of another JSON type reads as NULL).
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_telemetry.warehouse._judge import LIFTED_KEYS, PAYLOAD_KINDS, ValueKind
from agent_telemetry.warehouse._load_scan import MAX_DEPTH
from agent_telemetry.warehouse._source import MAX_RECORD

PYTHON = "python"  # the kind of a line left to Python
# NaN/Infinity where a value starts (DuckDB's parser takes them, in any case), or a
# trailing comma; over-matching (inside a string) only sends a line to Python.
_LENIENT = r"[:,\[ \t+-](?i:nan|inf)|,[ \t]*[}\]]"
# Lines longer than this are counted for brackets: only they could nest too deep.
_DEEP_CHECK = 2 * MAX_DEPTH
_CLOCK = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
# The emitter's time format (any digits): RFC 3339 UTC, microseconds, Z.
_EMITTER_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z"
# A LogEntry's usual timestamp: RFC 3339 UTC with 0 to 9 fractional digits.
_ZULU_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z"
# What ``_judge.read_timestamp`` might read otherwise (lower case, offsets, BigQuery's
# space and `` UTC``): left to Python. Deliberately wider than ``_judge._TIMESTAMP``.
_MAYBE_TIME = r"[0-9]{4}-.*"
# The record's own keys beside the payload's (severity: the emitter writes it).
_OWN_KEYS = ("jsonPayload", "json_payload", "time", "timestamp", "insertId", "severity")
# What ``_load_scan.telemetry_of`` reads of a LogEntry beside its payload: a LogEntry's
# other keys (resource, labels, ...) are neither read nor parsed into fragments.
_ENTRY_READ = ("jsonPayload", "json_payload", "timestamp", "insertId")


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _fragments(keys: list[str]) -> str:
    """A from_json structure reading each key as its JSON text."""
    return _lit("{" + ", ".join(f'"{key}": "JSON"' for key in keys) + "}")


def _known(struct: str, keys: list[str]) -> str:
    """How many of ``keys`` the record holds."""
    return " + ".join(f"({struct}.{_ident(key)} IS NOT NULL)::INT" for key in keys)


def _string(fragment: str) -> str:
    """A JSON string's value (a plain line has no escapes), else NULL."""
    return f"CASE WHEN {fragment}[1] = '\"' THEN {fragment}[2:-2] END"


def timestamp_sql() -> tuple[str, str]:
    """The sink's ``timestamp`` (``_judge.time_of``) from ``ts`` (the time string, no
    escapes) and ``shape``, and 'Python must judge it', in SQL."""
    valid = (
        "(left(ts, 4) <> '0000' AND TRY_CAST(left(ts, 10) AS DATE) IS NOT NULL "
        f"AND regexp_full_match(substr(ts, 12, 8), {_lit(_CLOCK)}))"
    )
    micros = "rpad(substr(ts, 21, greatest(0, least(6, strlen(ts) - 21))), 6, '0')"
    canonical = f"CAST(left(ts, 19) || '.' || {micros} || 'Z' AS TIMESTAMPTZ)"
    form = (
        f"(CASE WHEN shape = 'entry' THEN regexp_full_match(ts, {_lit(_ZULU_TIME)}) "
        f"ELSE regexp_full_match(ts, {_lit(_EMITTER_TIME)}) END)"
    )
    value = f"CASE WHEN {form} AND {valid} THEN {canonical} END"
    # Python's \d matches any script's digits: a non-ASCII string is Python's too.
    maybe = f"(regexp_full_match(ts, {_lit(_MAYBE_TIME)}) OR strlen(ts) <> length(ts))"
    python = f"coalesce(NOT {form} AND {maybe}, false)"
    return value, python


class JudgeSql:
    """The statement judging one file's lines, for a sink keeping ``keep``."""

    def __init__(
        self, keep: frozenset[str], kinds: Mapping[str, ValueKind] = PAYLOAD_KINDS
    ) -> None:
        self.kinds: dict[str, ValueKind] = {k: v for k, v in kinds.items() if k in keep}
        payload = list(self.kinds)
        self.payload_keys = payload
        self.top_keys = list(dict.fromkeys([*payload, *_OWN_KEYS]))

    def _value(self, key: str, kind: ValueKind) -> tuple[str, str]:
        """The judged value (``_judge.READERS``) and 'Python must judge it', in SQL."""
        name = _ident(key)
        f = f"CAST(CASE WHEN shape = 'entry' THEN e.{name} ELSE v.{name} END AS VARCHAR)"
        if key in LIFTED_KEYS:  # Cloud Logging lifts these out of an emitter line
            f = f"CAST(CASE WHEN shape = 'entry' THEN e.{name} END AS VARCHAR)"
        if kind == "string":
            return _string(f), "false"
        if kind == "bool":
            return (
                f"CASE {f} WHEN 'true' THEN true WHEN 'false' THEN false "
                "WHEN '\"true\"' THEN true WHEN '\"false\"' THEN false END",
                "false",
            )
        if kind == "int":  # a plain integer is its own canonical text
            return (
                f"TRY_CAST({f} AS BIGINT)",
                f"{f}[1] NOT IN ('t', 'f', 'n', '{{', '[') AND "
                f"coalesce(CAST(TRY_CAST({f} AS BIGINT) AS VARCHAR) <> {f}, true)",
            )
        return "NULL", f"{f}[1] = '['"  # invalid_fields: its items are Python's to filter

    def _timestamp(self) -> tuple[str, str]:
        return timestamp_sql()

    def stages(self, reader: str) -> dict[str, str]:
        """The SELECTs over ``reader`` (a VARCHAR column ``line`` per line; other
        columns are carried through to ``judged``), each
        over the one before; ``final`` gives each line's ``kind`` (a ``Kind`` value or
        ``python``), its judged ``jsonPayload``, ``timestamp`` and ``insertId`` when it
        is telemetry, and the ``line`` itself when Python must judge it."""
        brackets = "strlen(line) - strlen(replace(replace(line, '{', ''), '[', ''))"
        plain_object = (
            f"NOT contains(line, '\\') AND NOT regexp_matches(line, {_lit(_LENIENT)}) "
            f"AND (strlen(line) <= {_DEEP_CHECK} OR {brackets} <= {MAX_DEPTH})"
        )
        # Python's bytes.strip() takes these off (a line has no newline left).
        stripped = "trim(line, ' \t\x0b\x0c\r')"
        first = (
            f"CASE WHEN line IS NULL THEN 'blank' WHEN strlen(line) > {MAX_RECORD} "
            f"THEN 'oversized' WHEN line[1] = '{{' THEN (CASE WHEN {plain_object} "
            f"THEN 'json' ELSE '{PYTHON}' END) "
            f"WHEN {stripped} = '' THEN 'blank' "
            f"WHEN {stripped}[1] IN ('{{', '[', '\ufeff') THEN '{PYTHON}' ELSE 'text' END"
        )
        parsed = (
            f"SELECT *, CASE WHEN v IS NOT NULL THEN json_keys(line) END "
            "AS keys FROM (SELECT *, CASE WHEN first = 'json' THEN "
            f"TRY(from_json(line, {_fragments(self.top_keys)})) END AS v "
            f"FROM (SELECT *, {first} AS first FROM {reader}))"
        )
        present = "coalesce(v.{0}, 'null') <> 'null'"
        envelope = f"{present.format('event')} AND {present.format('schema_version')}"
        inner_envelope = (
            "coalesce(e.event, 'null') <> 'null' AND coalesce(e.schema_version, 'null') <> 'null'"
        )
        entry = (
            "SELECT *, CASE WHEN CAST(v.jsonPayload AS VARCHAR)[1] = '{' THEN "
            f"TRY(from_json(v.jsonPayload, {_fragments(self.payload_keys)})) END AS e, "
            "CASE WHEN CAST(v.jsonPayload AS VARCHAR)[1] = '{' THEN "
            "len(json_keys(v.jsonPayload)) END AS inner_keys "
            f"FROM ({parsed})"
        )
        # A key written twice or unknown: the record's keys outnumber its known ones. A
        # LogEntry's other keys are unknown here and never read: only those read count.
        entry_read = ", ".join(_lit(key) for key in _ENTRY_READ)
        entry_keys = f"len(list_filter(keys, lambda key: key IN ({entry_read})))"
        shaped = (
            f"SELECT *, CASE WHEN first <> 'json' THEN first "
            f"WHEN v IS NULL OR {present.format('json_payload')} THEN '{PYTHON}' "
            f"WHEN {present.format('jsonPayload')} THEN (CASE WHEN e IS NOT NULL AND "
            f"inner_keys = {_known('e', self.payload_keys)} AND {inner_envelope} AND "
            f"{entry_keys} = {_known('v', list(_ENTRY_READ))} "
            f"THEN 'entry' ELSE '{PYTHON}' END) "
            f"WHEN len(keys) <> {_known('v', self.top_keys)} THEN '{PYTHON}' "
            f"WHEN {envelope} THEN 'emitter' ELSE 'other_json' END AS shape FROM ({entry})"
        )
        values = {key: self._value(key, kind) for key, kind in self.kinds.items()}
        python_values = " OR ".join(f"coalesce({v[1]}, false)" for v in values.values())
        stamp, stamp_python = self._timestamp()
        judged = (
            f"SELECT *, CASE WHEN shape IN ('entry', 'emitter') AND "
            f"({python_values} OR {stamp_python}) THEN '{PYTHON}' ELSE shape END AS kind "
            f"FROM (SELECT *, {_string('ts_fragment')} AS ts FROM (SELECT *, CAST(CASE "
            """WHEN shape = 'entry' THEN v."timestamp" WHEN shape = 'emitter' THEN v."time" END """
            f"AS VARCHAR) AS ts_fragment FROM ({shaped})))"
        )
        telemetry = "kind IN ('entry', 'emitter')"
        payload = ", ".join(f"{_ident(key)} := {v[0]}" for key, v in values.items())
        insert_id = _string("CAST(v.insertId AS VARCHAR)")
        # Without a timestamp there is no entry key: the row is stored without its id.
        final = (
            f"SELECT CASE WHEN {telemetry} THEN 'telemetry' ELSE kind END AS kind, "
            f"CASE WHEN {telemetry} THEN struct_pack({payload}) END AS jsonPayload, "
            "stamp AS timestamp, "
            f"CASE WHEN kind = 'entry' AND stamp IS NOT NULL THEN {insert_id} END AS insertId, "
            f"CASE WHEN kind = '{PYTHON}' THEN line END AS line "
            f"FROM (SELECT *, CASE WHEN {telemetry} THEN {stamp} END AS stamp FROM ({judged}))"
        )
        return {"parsed": parsed, "shaped": shaped, "judged": judged, "final": final}

    def fragment(self, key: str) -> str:
        """A judged telemetry line's ``key`` as its JSON text (SQL NULL when absent),
        over ``judged``: the payload's key, or for an emitter line, the record's."""
        name = _ident(key)
        if key not in self.kinds:
            return f"CAST(CASE WHEN shape = 'emitter' THEN v.{name} END AS VARCHAR)"
        return f"CAST(CASE WHEN shape = 'entry' THEN e.{name} ELSE v.{name} END AS VARCHAR)"

    def value(self, key: str) -> str:
        """The payload's ``key`` as the sink stores it (``_judge.READERS``), over ``judged``."""
        return self._value(key, self.kinds[key])[0]

    def stamp(self) -> str:
        """The line's sink ``timestamp``, over ``judged``."""
        return self._timestamp()[0]

    def statement(self, reader: str) -> str:
        return self.stages(reader)["final"]
