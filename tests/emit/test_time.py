"""The cached timestamp formatter is exact: every microsecond, across millisecond, second,
day and year boundaries, in any order of calls (clocks step back too)."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.emit._time import rfc3339_utc

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
RFC3339_MICRO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
# 1970 .. 2200, and a little before the epoch.
NS = st.integers(min_value=-(10**15), max_value=7_258_118_400 * 10**9)


def reference(ns: int) -> str:
    """datetime's own formatting of ``ns`` truncated (floored) to the microsecond."""
    return (EPOCH + timedelta(microseconds=ns // 1000)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_now_is_in_utc_with_microseconds() -> None:
    before = datetime.now(UTC)
    text = rfc3339_utc()
    after = datetime.now(UTC)
    assert RFC3339_MICRO_Z.fullmatch(text)
    stamp = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before.replace(microsecond=0) <= stamp <= after


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "1970-01-01T00:00:00.000000Z"),
        (999, "1970-01-01T00:00:00.000000Z"),
        (1_000, "1970-01-01T00:00:00.000001Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (1_700_000_000_000_000_999, "2023-11-14T22:13:20.000000Z"),
        (1_700_000_000_000_001_000, "2023-11-14T22:13:20.000001Z"),
        (1_700_000_000_000_010_000, "2023-11-14T22:13:20.000010Z"),
        (1_700_000_000_000_999_999, "2023-11-14T22:13:20.000999Z"),
        (1_700_000_000_001_000_000, "2023-11-14T22:13:20.001000Z"),
        (1_700_000_000_010_000_000, "2023-11-14T22:13:20.010000Z"),
        (1_700_000_000_100_000_000, "2023-11-14T22:13:20.100000Z"),
        (1_700_000_000_999_999_999, "2023-11-14T22:13:20.999999Z"),
        (1_700_000_001_000_000_000, "2023-11-14T22:13:21.000000Z"),
        (1_709_164_800_000_000_000, "2024-02-29T00:00:00.000000Z"),
        (1_735_689_599_999_999_000, "2024-12-31T23:59:59.999999Z"),
        (1_735_689_600_000_000_000, "2025-01-01T00:00:00.000000Z"),
    ],
)
def test_edges_and_zero_padding(ns: int, text: str) -> None:
    assert rfc3339_utc(ns) == text


@settings(max_examples=500)
@given(NS)
def test_any_instant_matches_datetime(ns: int) -> None:
    assert rfc3339_utc(ns) == reference(ns)


@settings(max_examples=200)
@given(NS, st.lists(st.integers(-2_000_000_000, 2_000_000_000), min_size=1, max_size=30))
def test_any_sequence_of_calls_matches_datetime(start: int, steps: list[int]) -> None:
    # Steps of up to +-2 s, forward and back: every cache is hit, missed and replaced.
    ns = start
    for step in steps:
        ns += step
        assert rfc3339_utc(ns) == reference(ns)


@pytest.mark.parametrize("boundary", [1_700_000_001_000_000_000, 1_700_000_000_001_000_000])
def test_every_microsecond_around_a_boundary(boundary: int) -> None:
    # Crossing a second (or a millisecond) forwards, then backwards.
    around = range(boundary - 3_000_000, boundary + 3_000_000, 1_000)
    for ns in [*around, *reversed(around)]:
        assert rfc3339_utc(ns) == reference(ns)


def test_threads_formatting_different_seconds_never_mix_them() -> None:
    # Two threads alternate between instants in different seconds and milliseconds,
    # so each keeps replacing the caches the other is reading.
    instants = [1_700_000_000_123_456_000, 1_800_000_000_987_654_000]
    expected = {ns: reference(ns) for ns in instants}
    wrong: list[str] = []

    def worker(offset: int) -> None:
        for n in range(20_000):
            ns = instants[(n + offset) % 2]
            if rfc3339_utc(ns) != expected[ns]:
                wrong.append(rfc3339_utc(ns))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
