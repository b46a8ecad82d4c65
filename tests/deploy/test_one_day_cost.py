"""What a plan says a day of each view costs: ``DryRun.with_one_day``, which decides
whether the plan asks BigQuery a second time (the dry run of the view's query of one day).

The server's figures are given here as values: the emulator reports 0 bytes for every dry
run, so only the 0-byte case can be reached against it (test_deploy.py counts the calls).
"""

from __future__ import annotations

from agent_telemetry.deploy._types import DryRun


class DayAnswers:
    """The day's dry run as a callable that counts how often the plan asked it."""

    def __init__(self, answer: DryRun) -> None:
        self.answer = answer
        self.asked = 0

    def __call__(self) -> DryRun:
        self.asked += 1
        return self.answer


def test_a_view_that_scans_nothing_costs_nothing_a_day_without_a_second_dry_run() -> None:
    """An empty sink (a first deployment): the day of a view is the view filtered, so it
    scans no more than the whole: 0, and BigQuery is not asked again."""
    day = DayAnswers(DryRun(schema=(), bytes_processed=123))
    costed = DryRun(schema=(), bytes_processed=0).with_one_day(day)
    assert (costed.bytes_processed, costed.one_day_bytes) == (0, 0)
    assert day.asked == 0


def test_a_view_that_scans_bytes_asks_for_the_days_figure_once() -> None:
    day = DayAnswers(DryRun(schema=(), bytes_processed=1_204_224))
    costed = DryRun(schema=(), bytes_processed=48_213_504).with_one_day(day)
    assert (costed.bytes_processed, costed.one_day_bytes) == (48_213_504, 1_204_224)
    assert costed.ok
    assert day.asked == 1


def test_a_server_that_reports_no_bytes_is_still_asked_for_the_day() -> None:
    """No figure is not a zero: the day's dry run is asked, and its answer kept."""
    day = DayAnswers(DryRun(schema=(), bytes_processed=512))
    costed = DryRun(schema=(), bytes_processed=None).with_one_day(day)
    assert (costed.bytes_processed, costed.one_day_bytes) == (None, 512)
    assert day.asked == 1


def test_a_failed_day_dry_run_leaves_the_days_figure_unknown_and_the_view_ok() -> None:
    day = DayAnswers(DryRun(schema=(), error="Syntax error: Unexpected keyword WHERE"))
    costed = DryRun(schema=(), bytes_processed=2048).with_one_day(day)
    assert costed.ok
    assert (costed.bytes_processed, costed.one_day_bytes) == (2048, None)


def test_a_failed_view_dry_run_is_kept_as_it_is_and_the_day_is_not_asked() -> None:
    day = DayAnswers(DryRun(schema=(), bytes_processed=0))
    failed = DryRun(schema=(), error="Not found: Table p:d.events")
    assert failed.with_one_day(day) == failed
    assert day.asked == 0


def test_a_failed_day_dry_run_that_still_reports_bytes_gives_no_figure() -> None:
    """An answer that failed is not a figure, whatever bytes it carries."""
    day = DayAnswers(DryRun(schema=(), error="Quota exceeded", bytes_processed=10_485_760))
    costed = DryRun(schema=(), bytes_processed=2048).with_one_day(day)
    assert (costed.bytes_processed, costed.one_day_bytes) == (2048, None)
