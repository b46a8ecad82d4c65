"""The approval record: written, read back, and refused when edited (no server needed)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_telemetry.deploy._approval import (
    Approval,
    ApprovalError,
    ApprovedSink,
    ApprovedView,
    ApproverIdentity,
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
        approver_identity=ApproverIdentity(
            by_flag="Ana Analyst", git_user="Ana <ana@example.com>", gcloud_account=None
        ),
        approved_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        valid_days=14,
        views=views,
        sink=sink,
    )


def test_a_written_record_reads_back_identical(tmp_path: Path) -> None:
    path = tmp_path / "approval.json"
    write_approval(record(), path)
    assert read_approval(path) == record()
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "agent-telemetry-approval/3"


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths(v, (*prefix, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths(v, (*prefix, i))]
    return [prefix]


RECORD_PATHS = _paths(json.loads(record().to_json()))
# A plausible edit for fields whose type or set would refuse a random string outright.
PLAUSIBLE = {"layout": "sharded", "action": "update", "gcloud_account": "mallory@example.com"}
SEALS = ("field_sha256", "record_sha256")


def _edited(path: tuple[object, ...]) -> str:
    data = json.loads(record().to_json())
    node = data
    for part in path[:-1]:
        node = node[part]
    old = node[path[-1]]
    new = PLAUSIBLE.get(str(path[-1]), "tampered")
    node[path[-1]] = new if new != old else "tampered"
    return json.dumps(data)


@pytest.mark.parametrize("path", RECORD_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_editing_any_field_refuses_the_record_and_names_the_field(
    path: tuple[object, ...],
) -> None:
    """Every leaf of the stored record, the sign-off and the digests included."""
    with pytest.raises(ApprovalError) as caught:
        parse_approval(_edited(path), "approval.json")
    message = str(caught.value)
    named = path[0] if path[0] not in SEALS else "record_sha256"
    assert str(named) in message
    assert "tampered" not in message
    assert "mallory" not in message


def test_the_digests_cover_every_field_of_the_record() -> None:
    stored = json.loads(record().to_json())
    fields = set(stored) - set(SEALS)
    assert set(stored["field_sha256"]) == fields == set(Approval.model_fields)


def test_a_field_removed_from_the_digests_is_refused() -> None:
    data = json.loads(record().to_json())
    del data["field_sha256"]["approved_by"]
    with pytest.raises(ApprovalError, match="record_sha256"):
        parse_approval(json.dumps(data))


def test_a_consistently_rehashed_edit_of_the_approver_is_still_checked() -> None:
    """Not a signature: someone who recomputes every digest can change the record, but
    the approver name is still validated on read, so no escape reaches a terminal."""
    data = json.loads(record().to_json())
    data["approved_by"] = data["approver_identity"]["by_flag"] = "Ana\x1b[2J"
    del data["field_sha256"], data["record_sha256"]
    digests = {k: _sha(v) for k, v in data.items()}
    data |= {"field_sha256": digests, "record_sha256": _sha(digests)}
    with pytest.raises(ApprovalError, match="approved_by: contains control") as caught:
        parse_approval(json.dumps(data), "approval.json")
    assert "\x1b" not in str(caught.value)


def _sha(value: object) -> str:
    import hashlib

    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_a_format_1_record_is_refused_with_the_way_out() -> None:
    data = json.loads(record().to_json())
    data["format"] = "agent-telemetry-approval/1"
    with pytest.raises(ApprovalError, match="views approve` again"):
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
        ("Ana\u2028Bob", "control"),
        ("Ana\u202eboB", "control"),
    ],
)
def test_an_unusable_approver_name_is_refused_without_repeating_it(name: str, problem: str) -> None:
    with pytest.raises(ApprovalError, match=problem) as caught:
        check_approver(name)
    assert name.strip() == "" or name.strip() not in str(caught.value)


def test_an_approver_name_may_be_any_printable_text() -> None:
    assert check_approver("  Zoë O'Brien (data) ") == "Zoë O'Brien (data)"


def test_the_identity_comes_from_git_and_is_never_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_telemetry.deploy._identity import approver_identity

    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Ana Analyst\n\temail = ana@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)
    git = shutil.which("git")
    assert git is not None
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(git)
    # git, and no gcloud: git's own folder may hold one (/usr/bin/gcloud) set up to answer
    monkeypatch.setenv("PATH", str(tools))
    assert approver_identity() == {
        "git_user": "Ana Analyst <ana@example.com>",
        "gcloud_account": None,
    }
    monkeypatch.setenv("PATH", str(tmp_path))  # neither
    assert approver_identity() == {"git_user": None, "gcloud_account": None}


def test_an_unusable_identity_value_is_left_out_not_fatal() -> None:
    from agent_telemetry.deploy._approval import _checked_identity

    identity = _checked_identity({"git_user": "Ana\x1b[2J", "gcloud_account": "a@b.c"}, "Ana")
    assert identity == ApproverIdentity(by_flag="Ana", git_user=None, gcloud_account="a@b.c")


def test_an_approver_name_is_nfkc_normalised() -> None:
    assert check_approver("\uff21\uff4e\uff41 \ufb01eld") == "Ana field"  # fullwidth, ligature


def test_approve_defaults_by_to_the_git_identity_and_still_checks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from agent_telemetry.cli import main

    gitconfig = tmp_path / "gitconfig"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)
    gitconfig.write_text("[user]\n\tname = \u3164\n")
    refused = CliRunner().invoke(main, ["views", "approve", "--config", "missing.toml"])
    assert refused.exit_code == 2  # an error
    assert "the git identity (defaults --by): contains characters that draw nothing" in (
        refused.output
    )
    gitconfig.write_text("")
    refused = CliRunner().invoke(main, ["views", "approve", "--config", "missing.toml"])
    assert refused.exit_code == 2
    assert "no name given and no git identity" in refused.output
