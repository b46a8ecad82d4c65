"""A precision's grid: the values a field with ``count(..., precision=N)`` may hold.

The emitter rounds such a value to ``N`` significant digits, so a value off that grid
(``1_234_567`` at 3 digits: the emitter writes ``1_230_000``) is out of the field's
domain, as a value outside its bounds is. Every judge says so from here: the field's
``allows`` (check-logs' Python path), the SQL judges, the views and the JSON Schema,
which need the grid as bands of one step each (one decade of magnitudes per band).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Band:
    """The integers ``low .. high`` that are multiples of ``step``."""

    low: int
    high: int
    step: int


def significant_digits(digits: int) -> str:
    """How every message names a precision: "1 significant digit", "3 significant digits"."""
    return f"{digits} significant digit{'' if digits == 1 else 's'}"


def on_grid(value: int, digits: int) -> bool:
    """Whether ``value`` has at most ``digits`` significant digits (rounding keeps it)."""
    magnitude = -value if value < 0 else value
    length = len(str(magnitude))
    return length <= digits or magnitude % 10 ** (length - digits) == 0


def _positive_bands(low: int, high: int, digits: int) -> list[Band]:
    """Bands over ``low .. high`` (``0 <= low``), one per decade from ``10**digits`` up."""
    bands = []
    start, length = 0, digits
    while start <= high:
        end = 10**length - 1
        if end >= low:
            bands.append(Band(max(start, low), min(end, high), 10 ** max(0, length - digits)))
        start, length = end + 1, length + 1
    return bands


def grid_bands(ge: int, le: int, digits: int) -> tuple[Band, ...]:
    """The grid of ``ge .. le`` at ``digits`` significant digits, ascending: every value
    in exactly one band, on the grid exactly when a multiple of its band's step."""
    bands: list[Band] = []
    if ge < 0:
        mirrored = _positive_bands(max(1, -le), -ge, digits)
        bands += [Band(-b.high, -b.low, b.step) for b in reversed(mirrored)]
    if le >= 0:
        bands += _positive_bands(max(0, ge), le, digits)
    return tuple(bands)
