"""Measurements leave with their declared precision: the hot path and the model's path
round the same way, to what capacity counts, and the re-check never takes a bool for a
count."""

from __future__ import annotations

import io
from typing import Annotated, Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AfterValidator

from agent_telemetry.emit import TelemetryValidationError, emit
from agent_telemetry.emit._guard import inside, recheck
from agent_telemetry.emit._validate import check, plan_for
from agent_telemetry.schema import PipelineRun, ProviderStatus, TelemetryEvent, count
from agent_telemetry.schema.capacity import round_significant
from tests.schema.copies import rules_off

with rules_off():

    class CountsTrue(TelemetryEvent):
        """A validator that slipped past the rules and returns True for a count."""

        event_name: ClassVar[str] = "counts_true"
        schema_version: ClassVar[int] = 1

        n: Annotated[int, AfterValidator(lambda v: True)] | None = count(0, 60, "N.")


RUN = {"lane": "public", "status": "ok"}
MS = st.integers(min_value=0, max_value=3_600_000)


@given(MS, MS)
def test_both_paths_round_each_measurement_alike(queue_wait: int, duration: int) -> None:
    plan = plan_for(PipelineRun)
    assert plan.fast is not None
    given_fields: dict[str, Any] = {**RUN, "queue_wait_ms": queue_wait, "duration_ms": duration}
    fast = plan.fast(dict(given_fields))
    careful, invalid, _ = check(plan, dict(given_fields), strict=False)
    assert invalid == ()
    for name, value in (("queue_wait_ms", queue_wait), ("duration_ms", duration)):
        assert fast[name] == careful[name] == round_significant(value, 3)
        assert type(fast[name]) is int
        assert type(careful[name]) is int


def test_emit_writes_three_significant_digits(lenient: io.StringIO) -> None:
    record = emit("pipeline_run", **RUN, queue_wait_ms=1234, duration_ms=3_599_999)
    assert record is not None
    assert (record["queue_wait_ms"], record["duration_ms"]) == (1230, 3_600_000)
    assert '"duration_ms":3600000' in lenient.getvalue()
    status = emit(
        ProviderStatus, provider="vertex", state="live", probe="preflight", retry_after_s=86_399
    )
    assert status is not None
    assert status["retry_after_s"] == 86_400


def test_values_below_the_precision_are_written_as_they_are(lenient: io.StringIO) -> None:
    record = emit("pipeline_run", **RUN, queue_wait_ms=999, duration_ms=0)
    assert record is not None
    assert (record["queue_wait_ms"], record["duration_ms"]) == (999, 0)


def test_the_recheck_never_takes_a_bool_for_an_int() -> None:
    # True is an int to isinstance; the re-check asks for exactly int.
    with pytest.raises(LookupError):
        inside((0, 60, 0), True)
    values: dict[str, Any] = {"n": True}
    assert recheck(values, {"n": (0, 60, 0)}) == ["n"]
    assert values == {}


def test_a_validator_returning_true_for_a_count_is_dropped_and_named() -> None:
    plan = plan_for(CountsTrue)
    values, invalid, _ = check(plan, {"n": 5}, strict=False)
    assert "n" not in values
    assert invalid == ("n",)
    with pytest.raises(TelemetryValidationError) as caught:
        check(plan, {"n": 5}, strict=True)
    assert [(p.field, p.rule) for p in caught.value.problems] == [("n", "outside_domain")]


def test_the_recheck_rounds_to_the_fields_precision() -> None:
    values: dict[str, Any] = {"ms": 45_678}
    assert recheck(values, {"ms": (0, 3_600_000, 3)}) == []
    assert values == {"ms": 45_700}


class Offset(TelemetryEvent):
    """A signed measurement: rounding keeps the sign (half away from zero)."""

    event_name: ClassVar[str] = "offset_probe"
    schema_version: ClassVar[int] = 1

    skew_ms: int | None = count(-3_600_000, 3_600_000, "Clock skew.", precision=3)


@given(st.integers(min_value=-3_600_000, max_value=3_600_000))
def test_signed_measurements_round_alike_on_both_paths(skew: int) -> None:
    plan = plan_for(Offset)
    assert plan.fast is not None
    fast = plan.fast({"skew_ms": skew})
    careful, invalid, _ = check(plan, {"skew_ms": skew}, strict=False)
    assert invalid == ()
    assert fast["skew_ms"] == careful["skew_ms"] == round_significant(skew, 3)


def test_a_negative_value_rounds_away_from_zero() -> None:
    plan = plan_for(Offset)
    assert plan.fast is not None
    assert plan.fast({"skew_ms": -1235})["skew_ms"] == -1240
