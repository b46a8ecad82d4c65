"""RFC 3339 UTC timestamps with microseconds and ``Z``, the form Cloud Logging lifts.

``datetime.now(UTC).isoformat()`` costs about a microsecond and writes ``+00:00``.
Here the text up to the seconds is formatted once per second and cached with the range
of microseconds it covers; each call then only appends the zero-padded microseconds.
Integer arithmetic on ``time.time_ns()`` throughout: a float clock would round the last
digit (a double near 1.7e9 seconds resolves about 0.24 microseconds).
"""

from __future__ import annotations

import time

_US_PER_SECOND = 1_000_000

# (first microsecond of the cached second, first microsecond of the next one,
# "YYYY-MM-DDTHH:MM:SS."). One tuple, read and replaced as a whole, so a thread never
# pairs one second's range with another's text.
_cached: tuple[int, int, str] = (0, 0, "")


def _second(micros: int) -> tuple[int, int, str]:
    """Format and cache the second that holds ``micros`` (microseconds since the epoch)."""
    global _cached
    second = micros // _US_PER_SECOND
    start = second * _US_PER_SECOND
    prefix = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
    _cached = (start, start + _US_PER_SECOND, prefix)
    return _cached


def rfc3339_utc(ns: int | None = None) -> str:
    """``ns`` nanoseconds since the epoch (default: now) as ``2026-05-09T07:35:25.123456Z``.

    Truncated to the microsecond (floored, so also exact before 1970), like ``datetime``.
    """
    micros = (time.time_ns() if ns is None else ns) // 1000
    start, end, prefix = _cached
    if not start <= micros < end:
        start, end, prefix = _second(micros)
    return prefix + str(micros - start).zfill(6) + "Z"
