"""Edges of the approval record that mutation testing found untested (no server needed)."""

from __future__ import annotations

import hashlib
import json

import pytest

from agent_telemetry.deploy._approval import (
    MAX_APPROVER_CHARS,
    ApprovalError,
    ApproverIdentity,
    _checked_identity,
    check_approver,
    parse_approval,
)
from tests.deploy.test_approval import record


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
