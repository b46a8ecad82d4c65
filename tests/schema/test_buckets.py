"""Bucket helpers: exact at every edge, monotone and total on their domain."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.schema import RunsToday, TokensToday, runs_today_bucket, tokens_today_bucket

RUNS_ORDER = list(RunsToday)
TOKENS_ORDER = list(TokensToday)


@pytest.mark.parametrize(
    ("n", "bucket"),
    [
        (1, "1"),
        (2, "2_5"),
        (5, "2_5"),
        (6, "6_10"),
        (10, "6_10"),
        (11, "11_20"),
        (20, "11_20"),
        (21, "21_30"),
        (30, "21_30"),
        (31, "31_40"),
        (40, "31_40"),
        (41, "41_plus"),
        (10**30, "41_plus"),
    ],
)
def test_runs_today_edges(n: int, bucket: str) -> None:
    assert runs_today_bucket(n) == bucket


ORDINAL = "n must be >= 1 (it is the run's ordinal today)"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (0, ORDINAL),
        (-1, ORDINAL),
        (True, "n must be an int, got bool"),
        (1.0, "n must be an int, got float"),
        ("3", "n must be an int, got str"),
        (None, "n must be an int, got NoneType"),
    ],
)
def test_runs_today_rejects_bad_input(bad: object, message: str) -> None:
    # The message is the caller's only hint: it must say exactly what was wrong.
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        runs_today_bucket(bad)  # type: ignore[arg-type]


BUDGET = 200_000  # a budget where one token is far below 1 %


@pytest.mark.parametrize(
    ("percent", "at_edge", "past_edge"),
    [
        (25, "25_50", "25_50"),
        (50, "50_75", "50_75"),
        (75, "75_90", "75_90"),
        (90, "90_100", "90_100"),
        (100, "90_100", "over"),
    ],
)
def test_tokens_today_edges(percent: int, at_edge: str, past_edge: str) -> None:
    used = BUDGET * percent // 100
    assert (
        tokens_today_bucket(used - 1, BUDGET) == TOKENS_ORDER[TOKENS_ORDER.index(at_edge) - 1]
        if percent < 100
        else tokens_today_bucket(used - 1, BUDGET) == "90_100"
    )
    assert tokens_today_bucket(used, BUDGET) == at_edge
    assert tokens_today_bucket(used + 1, BUDGET) == past_edge


def test_tokens_today_is_exact_where_floats_are_not() -> None:
    # 0.29 * 100 == 28.999999999999996 in floats; integer arithmetic keeps 29 % at 29 %.
    assert tokens_today_bucket(9, 10) == "90_100"
    assert tokens_today_bucket(899_999_999, 1_000_000_000) == "75_90"
    assert tokens_today_bucket(0, 1) == "lt25"
    assert tokens_today_bucket(1, 4) == "25_50"
    assert tokens_today_bucket(10**40 + 1, 10**40) == "over"


@pytest.mark.parametrize(
    ("used", "budget", "message"),
    [
        (-1, 10, "used must be >= 0"),
        (1, 0, "budget must be > 0"),
        (1, -5, "budget must be > 0"),
        (1.5, 10, "used must be an int, got float"),
        (1, True, "budget must be an int, got bool"),
    ],
)
def test_tokens_today_rejects_bad_input(used: object, budget: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        tokens_today_bucket(used, budget)  # type: ignore[arg-type]


@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=1, max_value=10**6))
def test_runs_today_is_monotone(a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert RUNS_ORDER.index(runs_today_bucket(low)) <= RUNS_ORDER.index(runs_today_bucket(high))


@given(
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=1, max_value=10**12),
)
def test_tokens_today_is_monotone_and_total(a: int, b: int, budget: int) -> None:
    low, high = sorted((a, b))
    low_bucket = tokens_today_bucket(low, budget)
    high_bucket = tokens_today_bucket(high, budget)
    assert low_bucket in TOKENS_ORDER
    assert TOKENS_ORDER.index(low_bucket) <= TOKENS_ORDER.index(high_bucket)


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=10**9))
def test_tokens_today_agrees_with_exact_fractions(used: int, budget: int) -> None:
    from fractions import Fraction

    share = Fraction(used, budget) * 100
    expected = (
        "lt25"
        if share < 25
        else "25_50"
        if share < 50
        else "50_75"
        if share < 75
        else "75_90"
        if share < 90
        else "90_100"
        if share <= 100
        else "over"
    )
    assert tokens_today_bucket(used, budget) == expected
