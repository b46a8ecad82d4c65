"""How a coverage below a threshold is told: the figure shown must read below the
threshold shown (55.56% is below 55.6, never "55.6% is below 55.6"), with no more
decimals than that takes, and the threshold as given."""

from __future__ import annotations

import pytest

from agent_telemetry.schema.coverage import Coverage


def _coverage(seen: int, declared: int) -> Coverage:
    missing = tuple(f"event_{n}" for n in range(declared - seen))
    return Coverage(declared, missing, (), ())


@pytest.mark.parametrize(
    ("seen", "declared", "threshold", "figures"),
    [
        (5, 9, 55.6, ("55.56", "55.6")),  # 55.555...: one decimal would read 55.6
        (5, 9, 60.0, ("55.6", "60")),
        (5, 9, 100.0, ("55.6", "100")),
        (5, 9, 55.556, ("55.5556", "55.556")),  # 55.556 at three decimals: one more
        (2, 3, 66.67, ("66.667", "66.67")),
        (9_999, 10_000, 100.0, ("99.99", "100")),  # 99.99 would read 100.0 at one decimal
        (0, 9, 0.5, ("0.0", "0.5")),
        # a threshold %g would round (to 55.5556) is shown in full
        (5, 9, 55.5555559, ("55.5555556", "55.5555559")),
    ],
)
def test_the_figure_shown_reads_below_the_threshold_shown(
    seen: int, declared: int, threshold: float, figures: tuple[str, str]
) -> None:
    covered = _coverage(seen, declared)
    assert covered.below(threshold)
    assert covered.figures_below(threshold) == figures


@pytest.mark.parametrize("declared", range(1, 41))
def test_every_fraction_below_every_tenth_reads_below_it(declared: int) -> None:
    for seen in range(declared + 1):
        covered = _coverage(seen, declared)
        for tenths in range(1001):
            threshold = tenths / 10
            if not covered.below(threshold):
                continue
            figure, shown = covered.figures_below(threshold)
            assert float(figure) < float(shown) == threshold, (seen, declared, threshold)
            # no more decimals than it takes: one fewer would not read below
            decimals = len(figure.partition(".")[2])
            assert decimals == 1 or float(f"{covered.percent:.{decimals - 1}f}") >= threshold
