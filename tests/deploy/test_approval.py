"""The approval record: written, read back, and refused when edited (no server needed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.deploy._approval import (
    Approval,
    ApprovalError,
    ApprovedSink,
    ApprovedView,
    check_approver,
    parse_approval,
    read_approval,
    write_approval,
)
from agent_telemetry.deploy._plan import compute_plan_hash


def record() -> Approval:
    views = (
        ApprovedView(
            name="pipeline_run",
            action="create",
            sql_sha256="a" * 64,
            definition_sha256="b" * 64,
            deployed_sha256="c" * 64,
        ),
        ApprovedView(
            name="chat_turn",
            action="unchanged",
            sql_sha256="d" * 64,
            definition_sha256="e" * 64,
            deployed_sha256="f" * 64,
        ),
    )
    sink = ApprovedSink(table="acme-agents-prod.logs.t", missing=("jsonPayload.attempts INTEGER",))
    plan_hash = compute_plan_hash(
        target="acme-agents-prod.telemetry",
        source="acme-agents-prod.logs.t",
        layout="partitioned",
        views=(
            (v.name, v.action, v.sql_sha256, v.definition_sha256, v.deployed_sha256) for v in views
        ),
        sink_table=sink.table,
        sink_missing=sink.missing,
    )
    return Approval(
        plan_hash=plan_hash,
        target="acme-agents-prod.telemetry",
        source="acme-agents-prod.logs.t",
        layout="partitioned",
        approved_by="Ana Analyst",
        approved_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).isoformat().replace("+00:00", "Z"),
        views=views,
        sink=sink,
    )


def test_a_written_record_reads_back_identical(tmp_path: Path) -> None:
    path = tmp_path / "approval.json"
    write_approval(record(), path)
    assert read_approval(path) == record()
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "agent-telemetry-approval/1"


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths(v, (*prefix, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths(v, (*prefix, i))]
    return [prefix]


COVERED = [
    p
    for p in _paths(json.loads(record().to_json()))
    if p[0] not in ("format", "approved_by", "approved_at", "plan_hash")
]
VALID_EDITS = {"layout": "sharded", "action": "update"}


@given(st.sampled_from(COVERED))
def test_editing_anything_the_hash_covers_refuses_the_record(path: tuple[object, ...]) -> None:
    data = json.loads(record().to_json())
    node = data
    for part in path[:-1]:
        node = node[part]  # type: ignore[index]
    node[path[-1]] = VALID_EDITS.get(str(path[-1]), "tampered")  # type: ignore[index]
    with pytest.raises(ApprovalError, match="does not match its own plan hash"):
        parse_approval(json.dumps(data))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("{}", "not an approval record"),
        (
            json.dumps({**json.loads(record().to_json()), "extra": 1}),
            r"not an approval record \(extra\)",
        ),
    ],
)
def test_malformed_records_are_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(ApprovalError, match=message):
        parse_approval(text, "approval.json")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 101, "longer than 100"),
        ("Ana\nApproved-By: Mallory", "control"),
        ("Ana\x1b[2J", "control"),
    ],
)
def test_an_unusable_approver_name_is_refused_without_repeating_it(name: str, problem: str) -> None:
    with pytest.raises(ApprovalError, match=problem) as caught:
        check_approver(name)
    assert name.strip() == "" or name.strip() not in str(caught.value)


def test_an_approver_name_may_be_any_printable_text() -> None:
    assert check_approver("  Zoë O'Brien (data) ") == "Zoë O'Brien (data)"
