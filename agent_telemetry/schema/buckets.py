"""Bucket helpers: the raw count never leaves the service, only its bucket does.

Integer arithmetic only, so every edge is exact (no float rounding at 90 %).
"""

from __future__ import annotations

from enum import StrEnum


class RunsToday(StrEnum):
    """This run's ordinal among the caller's runs this UTC day."""

    R1 = "1"
    R2_5 = "2_5"
    R6_10 = "6_10"
    R11_20 = "11_20"
    R21_30 = "21_30"
    R31_40 = "31_40"
    R41_PLUS = "41_plus"


class TokensToday(StrEnum):
    """The caller's weighted tokens today as a share of the public daily budget."""

    LT25 = "lt25"
    P25_50 = "25_50"
    P50_75 = "50_75"
    P75_90 = "75_90"
    P90_100 = "90_100"
    OVER = "over"


# Upper bounds (inclusive) of each runs-today bucket; the last is open-ended.
_RUNS_EDGES: tuple[tuple[int, RunsToday], ...] = (
    (1, RunsToday.R1),
    (5, RunsToday.R2_5),
    (10, RunsToday.R6_10),
    (20, RunsToday.R11_20),
    (30, RunsToday.R21_30),
    (40, RunsToday.R31_40),
)

# Exclusive upper percentages of each tokens-today bucket below 90 %.
_TOKEN_EDGES: tuple[tuple[int, TokensToday], ...] = (
    (25, TokensToday.LT25),
    (50, TokensToday.P25_50),
    (75, TokensToday.P50_75),
    (90, TokensToday.P75_90),
)


def _require_int(name: str, value: object) -> int:
    # bool is an int subclass; True runs is a bug in the caller, not a count.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__}")
    return value


def runs_today_bucket(n: int) -> RunsToday:
    """Bucket for the n-th run of the caller today (n >= 1)."""
    n = _require_int("n", n)
    if n < 1:
        raise ValueError("n must be >= 1 (it is the run's ordinal today)")
    for upper, bucket in _RUNS_EDGES:
        if n <= upper:
            return bucket
    return RunsToday.R41_PLUS


def tokens_today_bucket(used: int, budget: int) -> TokensToday:
    """Bucket for ``used / budget``: <25 %, [25,50), [50,75), [75,90), [90,100], >100 %."""
    used = _require_int("used", used)
    budget = _require_int("budget", budget)
    if used < 0:
        raise ValueError("used must be >= 0")
    if budget <= 0:
        raise ValueError("budget must be > 0")
    scaled = used * 100  # compare used/budget < p/100 as used*100 < p*budget
    for percent, bucket in _TOKEN_EDGES:
        if scaled < percent * budget:
            return bucket
    return TokensToday.P90_100 if used <= budget else TokensToday.OVER
