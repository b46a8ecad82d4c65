"""The approval record: a reviewed, committed file that binds apply to one plan.

It holds the plan hash, the target, each view's SQL sha256 and definition sha256 with the
deployed state it was planned against, the sink fields to add, who approved, where that
name came from (``--by``, the git user, the gcloud account), when (UTC) and for how many
days it stays valid (an old record is refused: a plan approved long ago was reviewed
against a world that has moved on). Every field
has its own sha256 in ``field_sha256``, and ``record_sha256`` covers those digests, so an
edit of any field after approval is refused and named. This proves the file was not
edited by hand, not who wrote it: it is not a cryptographic signature (docs/design.md).

Apply accepts a record when the plan it recomputes has the same hash, or differs only
by work already done: views now at their approved definition (or half-written by an
apply of exactly it) and sink fields already added. Everything else that differs (a
changed definition, a view changed by someone else, a new field to add) refuses, with
the view named. So a rerun after a part-way failure converges, a second apply is a
no-op, and nothing is ever written that the record does not cover.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_telemetry._files import read_text, trusted_folder, write_text
from agent_telemetry._parse import json_document
from agent_telemetry._text import clean
from agent_telemetry.deploy._plan import DeploymentPlan, compute_plan_hash
from agent_telemetry.deploy._types import DEFAULT_VALID_DAYS, MAX_VALID_DAYS
from agent_telemetry.errors import AgentTelemetryError, FileRefusedError

APPROVAL_FORMAT: Final = "agent-telemetry-approval/3"
MAX_APPROVER_CHARS = 100
# Characters that draw nothing yet count as letters or symbols (Hangul fillers, the blank
# Braille pattern, Khmer inherent vowels): a name made of them looks empty on review.
_INVISIBLE: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5\u034f")
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# How far ahead of this machine's clock a record's ``approved_at`` may be: the approving
# machine's clock may run a little fast (Kerberos allows five minutes by default). A
# record further ahead is refused: a date in 2099 would void the ceiling on valid_days.
MAX_CLOCK_SKEW: Final = timedelta(minutes=5)


class ApprovalError(AgentTelemetryError, ValueError):
    """An approval record cannot be written or read; says which file and what is wrong."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ApprovedView(_Strict):
    name: str
    action: Literal["create", "update", "unchanged", "drifted", "unmanaged"]
    sql_sha256: str
    definition_sha256: str
    deployed_sha256: str


class ApprovedSink(_Strict):
    table: str | None
    missing: tuple[str, ...]


class ApproverIdentity(_Strict):
    """Where the approver's name came from, as far as this machine can tell."""

    by_flag: str  # `views approve --by`
    git_user: str | None  # `git config user.name` <user.email>, where set
    gcloud_account: str | None  # `gcloud config get-value account`, where gcloud is set up


class Approval(_Strict):
    format: Literal["agent-telemetry-approval/3"] = APPROVAL_FORMAT
    plan_hash: str
    target: str
    source: str
    layout: Literal["partitioned", "sharded", "analytics"]
    approved_by: str
    approver_identity: ApproverIdentity
    approved_at: str
    valid_days: int
    views: tuple[ApprovedView, ...]
    sink: ApprovedSink

    def recomputed_hash(self) -> str:
        return compute_plan_hash(
            target=self.target,
            source=self.source,
            layout=self.layout,
            views=(
                (v.name, v.action, v.sql_sha256, v.definition_sha256, v.deployed_sha256)
                for v in self.views
            ),
            sink_table=self.sink.table,
            sink_missing=self.sink.missing,
        )

    def approved(self) -> datetime:
        return datetime.strptime(self.approved_at, _TIME_FORMAT).replace(tzinfo=UTC)

    def expires_at(self, now: datetime) -> datetime:
        """When apply stops accepting this record: ``valid_days`` after ``approved_at``, or
        after ``now`` when that is earlier, so a record dated ahead of the clock (within
        ``MAX_CLOCK_SKEW``) is never valid for longer than it states."""
        return min(self.approved(), now) + timedelta(days=self.valid_days)

    def field_digests(self) -> dict[str, str]:
        """sha256 of each field's canonical JSON: what ``field_sha256`` records."""
        return {name: _digest(value) for name, value in self.model_dump(mode="json").items()}

    def to_json(self) -> str:
        digests = self.field_digests()
        record = {
            **self.model_dump(mode="json"),
            "field_sha256": digests,
            "record_sha256": _digest(digests),
        }
        return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def _digest(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_M = TypeVar("_M", bound=_Strict)


class _SignedRecord(_Strict):
    """The record as stored: the approval's fields plus the digests that cover them."""

    field_sha256: dict[str, str]
    record_sha256: str


def check_approver(name: str, what: str = "--by") -> str:
    """A name or handle, NFKC-normalised (so look-alike compatibility forms such as
    full-width letters record as the plain ones): 1-100 printable characters, no control,
    format, unassigned or invisible characters (they could rewrite a terminal or a log
    line, or make a name that reads as blank), and at least one visible letter or digit.
    Errors never repeat it."""
    name = unicodedata.normalize("NFKC", name).strip()
    if not name:
        raise ApprovalError(f"{what}: the approver's name is empty")
    if len(name) > MAX_APPROVER_CHARS:
        raise ApprovalError(f"{what}: longer than {MAX_APPROVER_CHARS} characters")
    if any(unicodedata.category(ch).startswith(("C", "Zl", "Zp")) for ch in name):
        raise ApprovalError(f"{what}: contains control or unprintable characters")
    if any(ch in _INVISIBLE for ch in name):
        raise ApprovalError(f"{what}: contains characters that draw nothing")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in name):
        raise ApprovalError(f"{what}: has no visible letter or digit")
    return name


def days(count: int) -> str:
    """``count`` days in words: "1 day", "14 days"."""
    return f"{count} day" if count == 1 else f"{count} days"


def check_valid_days(days: int, what: str = "--valid-days") -> int:
    if not 1 <= days <= MAX_VALID_DAYS:
        raise ApprovalError(f"{what}: must be 1 to {MAX_VALID_DAYS} days")
    return days


def _checked_identity(identity: Mapping[str, str | None], by: str) -> ApproverIdentity:
    """An identity whose values are each a usable name, or None where unusable/unknown:
    a git or gcloud setting never blocks an approval, it is just not recorded."""

    def usable(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check_approver(value)
        except ApprovalError:
            return None

    return ApproverIdentity(
        by_flag=by,
        git_user=usable(identity.get("git_user")),
        gcloud_account=usable(identity.get("gcloud_account")),
    )


def approve(
    plan: DeploymentPlan,
    by: str,
    now: datetime | None = None,
    identity: Mapping[str, str | None] | None = None,
    valid_days: int = DEFAULT_VALID_DAYS,
) -> Approval:
    """The approval record for ``plan``, signed off by ``by`` at ``now`` (UTC), valid for
    ``valid_days`` days.

    ``identity``: what else names the approver (``git_user``, ``gcloud_account``), as
    ``approver_identity()`` finds it on this machine; None records neither."""
    when = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    by = check_approver(by)
    check_valid_days(valid_days)
    return Approval(
        plan_hash=plan.plan_hash,
        target=plan.target,
        source=plan.source,
        layout=plan.layout,
        approved_by=by,
        approver_identity=_checked_identity(identity or {}, by),
        approved_at=when.strftime(_TIME_FORMAT),
        valid_days=valid_days,
        views=tuple(
            ApprovedView(
                name=v.name,
                action=v.action,
                sql_sha256=v.view.sql_sha256,
                definition_sha256=v.definition_sha256,
                deployed_sha256=v.deployed_sha256,
            )
            for v in plan.views
        ),
        sink=ApprovedSink(table=plan.sink.table_id, missing=plan.sink.missing_paths),
    )


def write_approval(approval: Approval, path: Path) -> None:
    try:
        write_text(path, approval.to_json(), trusted_folder(path))
    except FileRefusedError as exc:
        raise ApprovalError(str(exc)) from None
    except OSError as exc:
        raise ApprovalError(f"{clean(path)}: cannot write ({type(exc).__name__})") from None


def parse_approval(text: str, origin: str = "approval") -> Approval:
    """Validate an approval record's JSON text, then every digest that covers it.

    Each refusal names the field that is wrong, never its value."""
    try:
        data = json_document(text, origin, ApprovalError)
    except json.JSONDecodeError:
        raise ApprovalError(f"{origin}: not JSON") from None
    if not isinstance(data, dict) or "format" not in data:
        raise ApprovalError(f"{origin}: not an approval record (format)")
    if data["format"] != APPROVAL_FORMAT:
        raise ApprovalError(
            f"{origin}: not an {APPROVAL_FORMAT} record (format); "
            "older records do not cover every field: run `views approve` again"
        )
    signed = {k: data.pop(k) for k in ("field_sha256", "record_sha256") if k in data}
    approval = _validated(Approval, data, origin)
    seal = _validated(_SignedRecord, signed, origin)
    if _digest(seal.field_sha256) != seal.record_sha256:
        raise ApprovalError(
            f"{origin}: record_sha256 does not match field_sha256 "
            "(one of them was edited after approval)"
        )
    digests = approval.field_digests()
    edited = sorted(
        name
        for name in digests.keys() | seal.field_sha256.keys()
        if digests.get(name) != seal.field_sha256.get(name)
    )
    if edited:
        raise ApprovalError(
            f"{origin}: edited after approval: {', '.join(edited)} (run `views approve` again)"
        )
    _check_signoff(approval, origin)
    if approval.recomputed_hash() != approval.plan_hash:
        raise ApprovalError(f"{origin}: plan_hash does not match the approved views and sink")
    return approval


def _validated(model: type[_M], data: dict[str, Any], origin: str) -> _M:
    try:
        # JSON mode: strict, yet JSON arrays still read as the tuples the models hold.
        return model.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        where = sorted({".".join(str(p) for p in e["loc"]) or "(top level)" for e in exc.errors()})
        raise ApprovalError(f"{origin}: not an approval record ({', '.join(where)})") from None


def _check_signoff(approval: Approval, origin: str) -> None:
    """Who and when, checked again on read: a record is a file anyone can write."""
    check_approver(approval.approved_by, f"{origin}: approved_by")
    identity = approval.approver_identity
    if identity.by_flag != approval.approved_by:
        raise ApprovalError(f"{origin}: approver_identity.by_flag differs from approved_by")
    for name in ("git_user", "gcloud_account"):
        value = getattr(identity, name)
        if value is not None:
            check_approver(value, f"{origin}: approver_identity.{name}")
    try:
        datetime.strptime(approval.approved_at, _TIME_FORMAT)
    except ValueError:
        raise ApprovalError(
            f"{origin}: approved_at is not a UTC time like 2026-01-02T03:04:05Z"
        ) from None
    check_valid_days(approval.valid_days, f"{origin}: valid_days")


def timing_problem(approval: Approval, now: datetime | None = None) -> str | None:
    """Why ``approval`` cannot apply at ``now`` (None: it can): it is dated later than
    ``now`` by more than ``MAX_CLOCK_SKEW``, or it expired."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    if approval.approved() > now + MAX_CLOCK_SKEW:
        minutes = int(MAX_CLOCK_SKEW.total_seconds() // 60)
        return (
            f"the approval is dated {approval.approved_at}, more than {minutes} minutes "
            f"after this machine's clock ({now.strftime(_TIME_FORMAT)}): a record cannot be "
            "approved in the future; check both clocks and run `views approve` again"
        )
    expires = approval.expires_at(now)
    if now >= expires:
        return (
            f"the approval expired at {expires.strftime(_TIME_FORMAT)} "
            f"({days(approval.valid_days)} after approval); run `views approve` again"
        )
    return None


def read_approval(path: Path) -> Approval:
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise ApprovalError(f"{clean(path)}: no such file") from None
    except FileRefusedError as exc:
        raise ApprovalError(str(exc)) from None
    except OSError as exc:
        raise ApprovalError(f"{clean(path)}: cannot read ({type(exc).__name__})") from None
    return parse_approval(text, clean(path))


def approval_problems(approval: Approval, plan: DeploymentPlan) -> list[str]:
    """Why ``plan`` is not covered by ``approval`` (empty: it is)."""
    if approval.plan_hash == plan.plan_hash:
        return []
    problems: list[str] = []
    for what, approved, now in (
        ("target", approval.target, plan.target),
        ("source", approval.source, plan.source),
        ("layout", approval.layout, plan.layout),
    ):
        if approved != now:
            problems.append(f"{what} is {now}, the approval is for {approved}")
    approved_views = {v.name: v for v in approval.views}
    names = [v.name for v in plan.views]
    if sorted(names) != sorted(approved_views):
        problems.append("the set of views differs from the approved one")
    for view in plan.views:
        record = approved_views.get(view.name)
        if record is None:
            continue
        if record.definition_sha256 != view.definition_sha256:
            problems.append(f"{view.name}: its generated definition changed since approval")
        elif record.deployed_sha256 != view.deployed_sha256 and not view.settled:
            problems.append(
                f"{view.name}: the deployed view changed since approval (now: {view.action})"
            )
    if approval.sink.table != plan.sink.table_id:
        problems.append("the sink table differs from the approved one")
    extra = sorted(set(plan.sink.missing_paths) - set(approval.sink.missing))
    if extra:
        problems.append(f"sink fields to add that the approval does not cover: {', '.join(extra)}")
    return problems
