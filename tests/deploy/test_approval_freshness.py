"""The deployment edges of an approval, without a server: a record goes stale after its
stated number of days, an approver's name must be visible, and a view that is not what
the plan read is never written (``changed_since_plan``). tests/deploy/bigquery holds the
last against the emulator, through ``apply_planned``."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_telemetry.deploy._approval import (
    ApprovalError,
    approve,
    check_approver,
    expiry_problem,
    parse_approval,
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
    assert expiry_problem(record, APPROVED) is not None
    assert refusals(planned, record, adopt=False, patch_sink=False, now=APPROVED) != ()


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
