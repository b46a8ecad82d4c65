"""CAPACITY_GROWTH as a reviewer reads it: the whole finding, word for word, for each
way a growth is worded (two fields, a field of two values, no fields, a trade that
keeps the total) and for each review that does not clear it, all named in one line."""

from __future__ import annotations

import copy

from agent_telemetry.schema.compat import Change
from tests.schema.copies import LockData, field, fields, mutated
from tests.schema.test_capacity_growth import _review, _versions, growth

BASE_REVIEWS = (
    "data review issue 30 is in the base lock already; "
    "data review issue 36 is in the base lock already"
)


def test_every_review_that_does_not_clear_a_growth_is_named_with_its_reason() -> None:
    # Too few bits, naming no event, and the base's own two: four reasons, in lock order.
    def reviews(d: LockData) -> None:
        _review(63.6)(d)
        d["events"]["pipeline_run"]["1"]["data_reviews"].append(
            {"reference": "issue 98", "reason": "r", "bits": 70.0}
        )

    assert growth(mutated(reviews)) == [
        Change(
            "CAPACITY_GROWTH",
            "breaking",
            "pipeline_run",
            1,
            None,
            "capacity grew from 61.3 bits to 63.7 bits per line (retries new, 0.0 -> 2.3); "
            f"{BASE_REVIEWS}; data review issue 99 approves only 63.6 bits; "
            "data review issue 98 names no event, not this event",
        )
    ]


def test_a_cleared_growth_names_the_growth_and_the_review_that_cleared_it() -> None:
    assert growth(mutated(_review(63.7))) == [
        Change(
            "CAPACITY_GROWTH",
            "addition",
            "pipeline_run",
            1,
            None,
            "capacity grew from 61.3 bits to 63.7 bits per line (retries new, 0.0 -> 2.3); "
            "data review issue 99 approves 63.7 bits (reason: lane health needs it)",
        )
    ]


def test_two_grown_fields_are_listed_comma_separated() -> None:
    def two(d: LockData) -> None:
        for name in ("retries", "redos"):
            fields(d, "pipeline_run").append(dict(field(d, "pipeline_run", "attempts"), name=name))

    (change,) = growth(mutated(two))
    assert change.detail == (
        "capacity grew from 61.3 bits to 66.0 bits per line "
        f"(retries new, 0.0 -> 2.3, redos new, 0.0 -> 2.3); {BASE_REVIEWS}"
    )


def test_a_new_field_of_two_values_is_growth() -> None:
    # A required one-member enum says "there" or "rejected": one bit more than nothing.
    def one_member(d: LockData) -> None:
        new = dict(field(d, "pipeline_run", "lane"), name="tier", members=["gold"], required=True)
        fields(d, "pipeline_run").append(new)

    (change,) = growth(mutated(one_member))
    assert "(tier new, 0.0 -> 1.0)" in change.detail, change.detail


def test_a_new_event_without_fields_says_no_fields() -> None:
    def empty(d: LockData) -> None:
        event = copy.deepcopy(d["events"]["provider_status"])
        event["1"]["fields"] = []
        event["1"]["data_reviews"] = []
        d["events"]["heartbeat"] = event

    (change,) = growth(mutated(empty))
    assert (change.event, change.detail) == (
        "heartbeat",
        "capacity grew from nothing (a new event) to 1.0 bits per line (no fields)",
    )


def test_a_trade_that_keeps_the_total_says_the_capacity_changed() -> None:
    # lane 4 -> 5 values, attempts 5 -> 4: the same 61.3 bits, but lane says more.
    def trade(d: LockData) -> None:
        field(d, "pipeline_run", "lane")["members"].append("enterprise")
        field(d, "pipeline_run", "attempts")["le"] = 1

    (change,) = growth(mutated(trade))
    assert change.detail == (
        "capacity changed from 61.3 bits to 61.3 bits per line, "
        f"a field can say more (lane 2.0 -> 2.3); {BASE_REVIEWS}"
    )


def test_a_version_older_than_every_locked_one_is_measured_against_the_oldest_there() -> None:
    # The base has only version 2; version 1 appears below it and is wider than it.
    def only_two(d: LockData) -> None:
        _versions(2, 50)(d)
        del d["events"]["pipeline_run"]["1"]

    (change,) = growth(mutated(_versions(70, 50)), mutated(only_two))
    assert (change.version, change.detail) == (
        1,
        "capacity grew from 64.7 bits (version 2) to 65.2 bits per line "
        f"(attempts 5.7 -> 6.2); {BASE_REVIEWS}",
    )
