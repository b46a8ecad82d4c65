"""RFC 3339 UTC timestamps with microseconds and ``Z``, the form Cloud Logging lifts.

``datetime.now(UTC).isoformat()`` costs about a microsecond and writes ``+00:00``.
Here the text up to the millisecond is cached with the range of microseconds it covers
(the seconds part itself cached per second, ``strftime`` runs once a second), so a line
written in the same millisecond as the previous one costs one table lookup and one
concatenation. Integer arithmetic on ``time.time_ns()`` throughout: a float clock would
round the last digit (a double near 1.7e9 seconds resolves about 0.24 microseconds).
"""

from __future__ import annotations

import time

_time_ns = time.time_ns
_US_PER_SECOND = 1_000_000
_US_PER_MS = 1_000

_THREE_DIGITS = tuple(f"{n:03d}" for n in range(1000))
_THREE_DIGITS_Z = tuple(f"{n:03d}Z" for n in range(1000))

# Each cache is (first microsecond covered, first microsecond not covered, text). One
# tuple, read and replaced as a whole, so a thread never pairs one range with another's
# text; a thread that loses a race only recomputes.
_second: tuple[int, int, str] = (0, 0, "")  # text: "YYYY-MM-DDTHH:MM:SS."
_millisecond: tuple[int, int, str] = (0, 0, "")  # text: "YYYY-MM-DDTHH:MM:SS.mmm"


def _cache_second(micros: int) -> tuple[int, int, str]:
    global _second
    second = micros // _US_PER_SECOND  # floored, so exact before 1970 too
    start = second * _US_PER_SECOND
    prefix = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
    _second = (start, start + _US_PER_SECOND, prefix)
    return _second


def _cache_millisecond(micros: int) -> tuple[int, int, str]:
    global _millisecond
    start, end, prefix = _second
    if not start <= micros < end:
        start, end, prefix = _cache_second(micros)
    millis = (micros - start) // _US_PER_MS
    first = start + millis * _US_PER_MS
    _millisecond = (first, first + _US_PER_MS, prefix + _THREE_DIGITS[millis])
    return _millisecond


def rfc3339_utc(ns: int | None = None) -> str:
    """``ns`` nanoseconds since the epoch (default: now) as ``2026-05-09T07:35:25.123456Z``.

    Truncated to the microsecond, like ``datetime``.
    """
    micros = (_time_ns() if ns is None else ns) // 1000
    start, end, prefix = _millisecond
    if not start <= micros < end:
        start, end, prefix = _cache_millisecond(micros)
    return prefix + _THREE_DIGITS_Z[micros - start]
