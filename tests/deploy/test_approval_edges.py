"""Edges of the approval record that mutation testing found untested (no server needed)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from agent_telemetry.deploy._approval import (
    MAX_APPROVER_CHARS,
    ApprovalError,
    ApproverIdentity,
    _checked_identity,
    approve,
    check_approver,
    parse_approval,
    read_approval,
    timing_problem,
    write_approval,
)
from agent_telemetry.deploy._decide import refusals
from tests.deploy.test_approval import record
from tests.deploy.test_approval_gate import plan

APPROVED = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)


def test_a_name_of_exactly_the_limit_is_accepted_one_more_is_refused() -> None:
    assert check_approver("x" * MAX_APPROVER_CHARS) == "x" * MAX_APPROVER_CHARS
    with pytest.raises(ApprovalError) as caught:
        check_approver("x" * (MAX_APPROVER_CHARS + 1))
    assert str(caught.value) == f"--by: longer than {MAX_APPROVER_CHARS} characters"


def test_a_paragraph_separator_is_refused_like_a_line_separator() -> None:
    # U+2029 (category Zp) splits a line in a terminal or log just as U+2028 (Zl) does.
    with pytest.raises(ApprovalError) as caught:
        check_approver("Ana\u2029Approved-By: Mallory")
    assert str(caught.value) == "--by: contains control or unprintable characters"
    assert "Mallory" not in str(caught.value)


def test_a_usable_git_identity_is_recorded() -> None:
    identity = _checked_identity({"git_user": "Ana <ana@example.com>", "gcloud_account": None}, "A")
    assert identity == ApproverIdentity(
        by_flag="A", git_user="Ana <ana@example.com>", gcloud_account=None
    )


def test_the_record_is_readable_utf8_json_indented_by_two() -> None:
    approval = record().model_copy(update={"approved_by": "Zoë"})
    text = approval.to_json()
    assert "Zoë" in text  # not \\u00eb: a reviewer reads the name as written
    assert text.endswith("}\n")
    second = text.splitlines()[1]
    assert second.startswith('  "')
    assert not second.startswith("   ")


def test_each_field_digest_is_sha256_of_its_canonical_utf8_json() -> None:
    # The digest format is what lets a record written by one version be checked by the
    # next: sorted keys, no spaces, non-ASCII as UTF-8 (not \\u escapes).
    approval = record().model_copy(update={"approved_by": "Zoë"})
    dumped = approval.model_dump(mode="json")
    digests = approval.field_digests()
    assert set(digests) == set(dumped)
    for name, value in dumped.items():
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert digests[name] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert digests["approved_by"] == hashlib.sha256('"Zoë"'.encode()).hexdigest()


def test_an_edit_names_every_edited_field_comma_separated() -> None:
    text = record().to_json()
    data = json.loads(text)
    data["approved_by"] = "Mallory"
    data["approver_identity"]["by_flag"] = "Mallory"
    with pytest.raises(ApprovalError) as caught:
        parse_approval(json.dumps(data), "approval.json")
    assert "edited after approval: approved_by, approver_identity (run `views approve` again)" in (
        str(caught.value)
    )


def test_a_record_valid_for_one_day_reads_back_and_expires_a_day_later(tmp_path: Path) -> None:
    """One day is the shortest validity, for a change to be applied the day it is reviewed."""
    planned = plan()
    path = tmp_path / "approval.json"
    write_approval(approve(planned, "Ana", now=APPROVED, valid_days=1), path)
    record = read_approval(path)
    assert record.valid_days == 1
    expires = APPROVED + timedelta(days=1)
    assert (
        refusals(planned, record, adopt=False, patch_sink=False, now=expires - timedelta(seconds=1))
        == ()
    )
    assert refusals(planned, record, adopt=False, patch_sink=False, now=expires) == (
        "the approval expired at 2026-12-02T10:00:00Z (1 day after approval); "
        "run `views approve` again",
    )


def test_a_file_the_system_cannot_create_is_named_with_the_kind_of_error(tmp_path: Path) -> None:
    """A name longer than the file system's 255 bytes (ENAMETOOLONG): nothing is written,
    and the error names the file and the error's kind, not a traceback."""
    path = tmp_path / ("approval-" + "x" * 300 + ".json")
    with pytest.raises(ApprovalError) as caught:
        write_approval(record(), path)
    assert str(caught.value) == f"{path}: cannot write (OSError)"
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def clock_in_india(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's local time zone UTC+05:30 (a POSIX TZ rule: no zoneinfo needed)."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("clock_in_india")
def test_the_clock_in_a_refusal_is_utc_on_a_machine_in_another_zone() -> None:
    """The record's dates are UTC, so the clock it is compared with is printed in UTC too,
    whatever the machine's zone or the zone of the ``now`` given."""
    planned = plan()
    ahead = approve(planned, "Ana", now=APPROVED + timedelta(hours=1))
    local_now = APPROVED.astimezone(timezone(timedelta(hours=-7)))  # 03:00 in Denver
    message = (
        "the approval is dated 2026-12-01T11:00:00Z, more than 5 minutes after this "
        "machine's clock (2026-12-01T10:00:00Z): a record cannot be approved in the future; "
        "check both clocks and run `views approve` again"
    )
    assert timing_problem(ahead, APPROVED) == message
    assert timing_problem(ahead, local_now) == message
