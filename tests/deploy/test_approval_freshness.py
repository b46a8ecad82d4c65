"""The deployment edges of an approval, without a server: a record goes stale after its
stated number of days, one dated ahead of the clock is refused (beyond a small skew), an
approver's name must be visible, and a view that is not what the plan read is never
written (``changed_since_plan``). tests/deploy/bigquery holds the last against the
emulator, through ``apply_planned``."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_telemetry.deploy._approval import (
    MAX_CLOCK_SKEW,
    ApprovalError,
    approve,
    check_approver,
    parse_approval,
    timing_problem,
    write_approval,
)
from agent_telemetry.deploy._decide import changed_since_plan, refusals
from agent_telemetry.deploy._types import DEFAULT_VALID_DAYS, MAX_VALID_DAYS
from tests.deploy.test_approval import _sha
from tests.deploy.test_approval_gate import PARTITIONED, plan
from tests.deploy.test_plan import as_applied

APPROVED = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


def test_an_approval_is_refused_from_the_moment_its_stated_days_run_out() -> None:
    planned = plan()
    record = approve(planned, "Ana", now=APPROVED, valid_days=3)
    expires = APPROVED + timedelta(days=3)

    last_second = refusals(
        planned, record, adopt=False, patch_sink=False, now=expires - timedelta(seconds=1)
    )
    at_expiry = refusals(planned, record, adopt=False, patch_sink=False, now=expires)

    assert last_second == ()
    assert at_expiry == (
        "the approval expired at 2026-12-04T10:00:00Z (3 days after approval); "
        "run `views approve` again",
    )


def test_an_old_approval_is_refused_even_after_the_views_it_covered_were_deleted() -> None:
    """The plan is `create` again, exactly what was approved a year ago: still refused."""
    planned = plan()
    record = approve(planned, "Ana", now=APPROVED - timedelta(days=365))
    assert record.plan_hash == planned.plan_hash
    assert timing_problem(record, APPROVED) is not None
    assert refusals(planned, record, adopt=False, patch_sink=False, now=APPROVED) != ()


def test_an_approval_dated_in_2099_is_refused_today() -> None:
    """Otherwise a record dated far ahead would apply today and for decades."""
    planned = plan()
    record = approve(planned, "Ana", now=datetime(2099, 1, 1, tzinfo=UTC), valid_days=90)
    assert record.plan_hash == planned.plan_hash  # covers the plan: only its date is wrong

    refused = refusals(planned, record, adopt=False, patch_sink=False, now=APPROVED)

    assert refused == (
        "the approval is dated 2099-01-01T00:00:00Z, more than 5 minutes after this "
        "machine's clock (2026-12-01T10:00:00Z): a record cannot be approved in the future; "
        "check both clocks and run `views approve` again",
    )
    # Read from disk through the real clock, too: the check is not only in tests' `now`.
    assert timing_problem(record) is not None


def test_an_approval_ahead_of_the_clock_by_at_most_the_skew_is_accepted() -> None:
    planned = plan()
    ahead = approve(planned, "Ana", now=APPROVED + MAX_CLOCK_SKEW)
    beyond = approve(planned, "Ana", now=APPROVED + MAX_CLOCK_SKEW + timedelta(seconds=1))

    assert refusals(planned, ahead, adopt=False, patch_sink=False, now=APPROVED) == ()
    assert timing_problem(beyond, APPROVED) is not None


def test_expiry_counts_from_the_clock_when_the_record_is_dated_ahead_of_it() -> None:
    """A record dated 5 minutes ahead is valid for its stated days from now, not 5
    minutes longer; one dated in the past counts from its own date."""
    planned = plan()
    ahead = approve(planned, "Ana", now=APPROVED + MAX_CLOCK_SKEW, valid_days=3)
    past = approve(planned, "Ana", now=APPROVED - timedelta(days=1), valid_days=3)

    assert ahead.expires_at(APPROVED) == APPROVED + timedelta(days=3)
    assert past.expires_at(APPROVED) == APPROVED + timedelta(days=2)
    # Checked three days after `now`, with `now` then still ahead of approved_at: expired.
    later = APPROVED + timedelta(days=3)
    assert ahead.expires_at(later) == APPROVED + MAX_CLOCK_SKEW + timedelta(days=3)
    assert timing_problem(past, later - timedelta(days=1)) is not None


def test_the_validity_is_stated_in_the_record_and_covered_by_its_digests(tmp_path: Path) -> None:
    path = tmp_path / "approval.json"
    write_approval(approve(plan(), "Ana", now=APPROVED), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["valid_days"] == DEFAULT_VALID_DAYS
    assert data["field_sha256"]["valid_days"] == _sha(DEFAULT_VALID_DAYS)

    data["valid_days"] = MAX_VALID_DAYS  # lengthened by hand
    with pytest.raises(ApprovalError, match=r"edited after approval: valid_days \("):
        parse_approval(json.dumps(data), "approval.json")


@pytest.mark.parametrize("days", [0, -1, MAX_VALID_DAYS + 1, 36_500])
def test_a_validity_outside_one_to_ninety_days_is_refused(days: int) -> None:
    with pytest.raises(ApprovalError, match=r"--valid-days: must be 1 to 90 days"):
        approve(plan(), "Ana", now=APPROVED, valid_days=days)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("\u3164", "contains characters that draw nothing"),  # Hangul filler: a letter (Lo)
        ("\u2800\u2800", "contains characters that draw nothing"),  # blank Braille
        ("Ana\u3164", "contains characters that draw nothing"),
        ("\uffa0", "contains characters that draw nothing"),  # half-width Hangul filler
        ("\u17b4", "contains characters that draw nothing"),
        ("---", "has no visible letter or digit"),
        ("\u00a0\u3000", "the approver's name is empty"),  # NFKC makes both plain spaces
    ],
)
def test_an_approver_name_that_reads_as_blank_is_refused_without_echoing_it(
    name: str, why: str
) -> None:
    with pytest.raises(ApprovalError) as raised:
        check_approver(name)
    assert str(raised.value) == f"--by: {why}"


def test_compatibility_forms_of_a_name_record_as_the_plain_letters() -> None:
    """Full-width and ligature forms would let two records name one person differently."""
    assert check_approver("\uff21\uff4e\uff41 \ufb01eld") == "Ana field"
    assert check_approver("Zoë O'Brien") == "Zoë O'Brien"


def test_a_view_is_written_only_if_it_is_still_what_the_plan_read() -> None:
    view = PARTITIONED[0]
    state = as_applied(view).state
    assert state is not None
    edited = replace(state, description="edited in the console")
    retagged = replace(state, etag='"other"')
    name = view.name

    assert changed_since_plan(name, None, None) is None
    assert changed_since_plan(name, state, state) is None
    assert changed_since_plan(name, state, edited) == (
        f"{name}: it changed since the plan (not overwritten); run views plan again"
    )
    assert changed_since_plan(name, state, retagged) is not None
    assert changed_since_plan(name, None, state) == (
        f"{name}: it was created by someone else since the plan; run views plan again"
    )
    assert changed_since_plan(name, state, None) == (
        f"{name}: it was deleted since the plan; run views plan again"
    )
