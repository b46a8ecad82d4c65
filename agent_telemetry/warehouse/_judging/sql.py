"""The judgement of ``_judging.python`` in DuckDB SQL: the pieces every SQL judge shares.

``_judging.typed`` judges, in SQL, the lines of a plain JSON-lines file that DuckDB reads
exactly, for the load (``_loading.fast``) and for ``check-logs`` (``_checking.fast``). A
line is decided in SQL only where DuckDB's parser and orjson provably agree; every other
line gets the kind ``python`` and ``_judging.python`` itself judges it from its text. Here: that
kind, what DuckDB's parser takes and orjson refuses (``NaN``, ``Infinity``, trailing
commas), the record's own keys, and the timestamp's judgement (``_judging.python.time_of``):
the emitter's ``time`` in its exact format, a LogEntry's ``timestamp`` in RFC 3339 UTC
with 0 to 9 fractional digits, and anything Python might read otherwise left to Python.
"""

from __future__ import annotations

from agent_telemetry.warehouse._reading.records import MAX_DEPTH

PYTHON = "python"  # the kind of a line left to Python
# NaN/Infinity where a value starts (DuckDB's parser takes them, in any case), or a
# trailing comma; over-matching (inside a string) only sends a line to Python.
LENIENT = r"[:,\[ \t+-](?i:nan|inf)|,[ \t]*[}\]]"
# Lines longer than this are counted for brackets: only they could nest too deep.
DEEP_CHECK = 2 * MAX_DEPTH
# The emitter's time format (any digits): RFC 3339 UTC, microseconds, Z.
_EMITTER_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z"
# A LogEntry's usual timestamp: RFC 3339 UTC with 0 to 9 fractional digits.
_ZULU_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z"
# What ``_judging.python.read_timestamp`` might read otherwise (lower case, offsets, BigQuery's
# space and `` UTC``): left to Python. Deliberately wider than ``_judging.python._TIMESTAMP``.
_MAYBE_TIME = r"[0-9]{4}-.*"
# The record's own keys beside the payload's (severity: the emitter writes it).
OWN_KEYS = ("jsonPayload", "json_payload", "time", "timestamp", "insertId", "severity")


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def timestamp_sql() -> tuple[str, str, str]:
    """The timestamp's judgement (``_judging.python.time_of``) in SQL, over ``ts`` (the time
    string, no escapes) and ``shape``: whether ``ts`` has the usual form, and over that
    as ``ts_form`` (computed once: a regular expression), the sink's ``timestamp`` and
    'Python must judge it'."""
    form = (
        f"(CASE WHEN shape = 'entry' THEN regexp_full_match(ts, {lit(_ZULU_TIME)}) "
        f"ELSE regexp_full_match(ts, {lit(_EMITTER_TIME)}) END)"
    )
    # Past the form every clock place is a digit: comparing the text is comparing the
    # number, with no second regular expression (DuckDB's cast takes 24:00:00).
    clock = (
        "(substr(ts, 12, 2) <= '23' AND substr(ts, 15, 2) <= '59' "
        "AND substr(ts, 18, 2) <= '59' AND left(ts, 4) <> '0000')"
    )
    # The emitter's time is already the canonical form; a LogEntry's gets its fraction
    # cut or padded to microseconds. An impossible date (February 30) casts to NULL.
    micros = "rpad(substr(ts, 21, greatest(0, least(6, strlen(ts) - 21))), 6, '0')"
    canonical = (
        f"(CASE WHEN shape = 'entry' THEN left(ts, 19) || '.' || {micros} || 'Z' ELSE ts END)"
    )
    value = f"CASE WHEN ts_form AND {clock} THEN TRY_CAST({canonical} AS TIMESTAMPTZ) END"
    # Python's \d matches any script's digits: a non-ASCII string is Python's too.
    maybe = f"(regexp_full_match(ts, {lit(_MAYBE_TIME)}) OR strlen(ts) <> length(ts))"
    python = f"coalesce(NOT ts_form AND {maybe}, false)"
    return form, value, python
