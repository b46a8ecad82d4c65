"""CAPACITY_GROWTH: an event version that can say more than the base lock's fails, and
only a data review the base does not have yet, for at least the new capacity, clears it."""

from __future__ import annotations

from typing import Any

from agent_telemetry.schema.compat import Change, apply_exceptions, compare
from agent_telemetry.schema.lock import SchemaLock, parse_lock
from tests.schema.copies import LockData, Mutation, field, fields, mutated, real_lock_data

BASE = parse_lock(real_lock_data())


def growth(current: SchemaLock, base: SchemaLock = BASE) -> list[Change]:
    return [c for c in compare(base, current) if c.rule == "CAPACITY_GROWTH"]


def _add_field(d: LockData) -> None:
    new = dict(field(d, "pipeline_run", "attempts"), name="retries")
    fields(d, "pipeline_run").append(new)


def _review(
    bits: float,
    reference: str = "issue 99",
    names: tuple[str, int] = ("pipeline_run", 1),
) -> Mutation:
    """pipeline_run v1 grows (a new field) and carries a review naming ``names``."""

    def mutate(d: LockData) -> None:
        _add_field(d)
        entry: dict[str, Any] = d["events"]["pipeline_run"]["1"]
        entry.setdefault("data_reviews", []).append(
            {
                "reference": reference,
                "reason": "lane health needs it",
                "bits": bits,
                "event": names[0],
                "schema_version": names[1],
            }
        )

    return mutate


def test_a_new_field_is_growth_naming_the_bits_and_the_field() -> None:
    (change,) = growth(mutated(_add_field))
    assert (change.classification, change.event, change.version) == ("breaking", "pipeline_run", 1)
    assert change.detail.startswith(
        "capacity grew from 61.3 bits to 63.7 bits per line (retries new, 0.0 -> 2.3); "
    )
    # The base's own reviews are named, and why they approve nothing new.
    assert "data review issue 30 is in the base lock already" in change.detail


def test_a_review_for_the_new_capacity_clears_it() -> None:
    (change,) = growth(mutated(_review(63.7)))
    assert change.classification == "addition"
    assert "data review issue 99 approves 63.7 bits (reason: lane health needs it)" in change.detail
    assert apply_exceptions([change]).ok


def test_a_review_for_fewer_bits_than_the_growth_does_not_clear_it() -> None:
    (change,) = growth(mutated(_review(63.6)))
    assert change.classification == "breaking"


def test_a_review_the_base_already_has_does_not_clear_a_new_growth() -> None:
    base = mutated(_review(64.0))  # reviewed once, for up to 64 bits

    def wider(d: LockData) -> None:
        _review(64.0)(d)
        field(d, "pipeline_run", "retries")["le"] = 3  # grows again, same review

    (change,) = growth(mutated(wider), base)
    assert change.classification == "breaking"
    assert "retries 2.3 -> 2.6" in change.detail


def test_a_new_event_is_growth_from_nothing() -> None:
    def add(d: LockData) -> None:
        d["events"]["cache_lookup"] = d["events"]["provider_status"]

    (change,) = growth(mutated(add))
    assert change.event == "cache_lookup"
    assert change.detail.startswith("capacity grew from nothing (a new event) to 24.9 bits")


def test_wider_sets_bounds_and_more_digits_are_growth() -> None:
    def member(d: LockData) -> None:
        field(d, "pipeline_run", "lane")["members"].append("enterprise")

    def bound(d: LockData) -> None:
        field(d, "pipeline_run", "attempts")["le"] = 5

    def digits(d: LockData) -> None:
        field(d, "pipeline_run", "duration_ms")["precision"] = 4

    def exact(d: LockData) -> None:
        del field(d, "pipeline_run", "duration_ms")["precision"]

    for mutation, grown in (
        (member, "lane 2.0 -> 2.3"),
        (bound, "attempts 2.3 -> 3.0"),
        (digits, "duration_ms 12.0 -> 14.9"),
        (exact, "duration_ms 12.0 -> 21.8"),
    ):
        (change,) = growth(mutated(mutation))
        assert grown in change.detail, change.detail


def test_narrowing_and_fewer_digits_are_no_growth() -> None:
    def narrower(d: LockData) -> None:
        field(d, "pipeline_run", "attempts")["le"] = 1
        field(d, "pipeline_run", "duration_ms")["precision"] = 2

    assert growth(mutated(narrower)) == []


def test_a_new_version_is_measured_against_the_version_before() -> None:
    def bump(d: LockData) -> None:
        d["events"]["provider_status"]["2"] = d["events"]["provider_status"]["1"]

    assert growth(mutated(bump)) == []


def test_a_first_lock_is_the_baseline() -> None:
    assert growth(mutated(lambda d: None), SchemaLock()) == []


def test_a_review_naming_another_event_does_not_clear_a_growth() -> None:
    # data_reviews = OtherEvent.data_reviews: the copied review names the other event.
    (change,) = growth(mutated(_review(64.0, names=("provider_status", 1))))
    assert change.classification == "breaking"
    assert "data review issue 99 names provider_status v1, not this event" in change.detail


def test_a_review_naming_another_version_does_not_clear_a_growth() -> None:
    (change,) = growth(mutated(_review(64.0, names=("pipeline_run", 2))))
    assert change.classification == "breaking"
    assert "names pipeline_run v2" in change.detail


def test_a_review_the_base_has_on_another_event_does_not_clear_a_growth() -> None:
    # The base lock knows "issue 30" (pipeline_run's own review); re-addressed to another
    # event, the same reference still approves nothing new.
    def reused(d: LockData) -> None:
        d["events"]["provider_status"]["1"]["fields"].append(
            dict(field(d, "pipeline_run", "queue_position"), name="retries")
        )
        d["events"]["provider_status"]["1"]["data_reviews"] = [
            {
                "reference": "issue 30",
                "reason": "copied",
                "bits": 64.0,
                "event": "provider_status",
                "schema_version": 1,
            }
        ]

    (change,) = growth(mutated(reused))
    assert (change.event, change.classification) == ("provider_status", "breaking")
    assert "data review issue 30 is in the base lock already" in change.detail


def test_the_lock_records_the_event_each_review_names() -> None:
    entry = BASE.events["pipeline_run"][1]
    assert entry.data_reviews
    assert all((r.event, r.schema_version) == ("pipeline_run", 1) for r in entry.data_reviews)
