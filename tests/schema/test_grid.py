"""The precision grid's bands (schema/grid.py) say exactly what rounding keeps: every
integer in the bounds lies in one band, and is a multiple of that band's step exactly
when it has at most ``digits`` significant digits (``capacity.is_exact``)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.schema.capacity import is_exact
from agent_telemetry.schema.grid import grid_bands, on_grid


@given(
    low=st.integers(-200_000, 200_000),
    width=st.integers(0, 400),
    digits=st.integers(1, 4),
    probes=st.lists(st.integers(0, 400), min_size=1, max_size=30),
)
def test_the_bands_partition_the_bounds_and_hold_the_grid(
    low: int, width: int, digits: int, probes: list[int]
) -> None:
    high = low + width
    bands = grid_bands(low, high, digits)
    assert bands[0].low == low
    assert bands[-1].high == high
    assert all(a.high + 1 == b.low for a, b in itertools.pairwise(bands))
    for value in (low + min(p, width) for p in probes):
        (band,) = [b for b in bands if b.low <= value <= b.high]
        assert (value % band.step == 0) == on_grid(value, digits) == is_exact(value, digits)


def test_a_wide_field_has_one_band_per_decade() -> None:
    steps = [(b.low, b.step) for b in grid_bands(0, 3_600_000, 3)]
    assert steps == [(0, 1), (1000, 10), (10_000, 100), (100_000, 1000), (1_000_000, 10_000)]
