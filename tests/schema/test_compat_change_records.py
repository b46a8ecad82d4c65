"""What each compatibility change says, and which rules a change leaves quiet.

Pinned here, on copies of the real lock:

- every change's detail word for word (the reviewer's only account of what broke and
  why), including members, bounds and kept versions listed in full;
- a retyped field is reported once, as ``FIELD_SAME_TYPE``: a change of the recorded
  sink type counts even when the kind is the same (a base lock written by hand or by
  another tool), and the member and bound rules say nothing about it;
- the enum rules keep looking past a field of another kind;
- respelling folds every ``_`` and ``-``, however many, and the case.
"""

from __future__ import annotations

from typing import Literal

import pytest

from agent_telemetry.schema.compat import Change, near_identical
from agent_telemetry.schema.lock import parse_lock
from tests.schema.copies import LockData, Mutation, field, mutated, real_lock_data
from tests.schema.copies import compare_shape as compare
from tests.schema.test_compat import (
    BASE,
    _add_event,
    _append_field,
    _delete_event,
    _make_optional,
    _make_required,
    _remove_field,
    _respell,
    _retype,
)


def _run(
    version: int,
    field_name: str | None,
    rule: str,
    classification: Literal["addition", "breaking"],
    detail: str,
) -> Change:
    """A change of pipeline_run, the event most mutations below edit."""
    return Change(rule, classification, "pipeline_run", version, field_name, detail)


def _lane_members(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["members"] = ["public"]


def _lane_added(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["members"] += ["trial", "enterprise"]


def _token_buckets(d: LockData) -> None:
    # An enum field after an int one: lt25 respelled, over deleted, unknown added.
    members = field(d, "pipeline_run", "user_tokens_today")["members"]
    members[members.index("lt25")] = "lt_25"
    members[members.index("over")] = "unknown"


def _attempts_bounds(ge: int, le: int) -> Mutation:
    def mutate(d: LockData) -> None:
        field(d, "pipeline_run", "attempts").update(ge=ge, le=le)

    return mutate


def _new_versions(*versions: int, drop_v1: bool = False) -> Mutation:
    def mutate(d: LockData) -> None:
        entries = d["events"]["pipeline_run"]
        for version in versions:
            entries[str(version)] = entries["1"]
        if drop_v1:
            del entries["1"]

    return mutate


REQUIREDNESS = "FIELD_SAME_REQUIREDNESS"
MEMBERS = "ENUM_VALUE_NO_DELETE"
BOUND = "BOUND_NO_NARROW"
NEW_V = "new version {} (a new view; version 1 kept)"

# (id, mutation of the current lock, every change compare reports, in order)
DETAILS: list[tuple[str, Mutation, list[Change]]] = [
    (
        "delete an event",
        _delete_event,
        [
            Change(
                "EVENT_NO_DELETE",
                "breaking",
                "provider_status",
                1,
                None,
                "version 1 was deleted; its view, stored rows and the services still "
                "emitting it lose their definition",
            )
        ],
    ),
    (
        "add an event",
        _add_event,
        [Change("EVENT_NO_DELETE", "addition", "cache_lookup", 1, None, "new event")],
    ),
    (
        "add two versions at once: only version 1 is kept",
        _new_versions(2, 3),
        [
            _run(2, None, "EVENT_NO_DELETE", "addition", NEW_V.format(2)),
            _run(3, None, "EVENT_NO_DELETE", "addition", NEW_V.format(3)),
        ],
    ),
    (
        "replace version 1 with version 2: nothing is kept",
        _new_versions(2, drop_v1=True),
        [
            _run(
                1,
                None,
                "EVENT_NO_DELETE",
                "breaking",
                "version 1 was deleted; its view, stored rows and the services still "
                "emitting it lose their definition",
            ),
            _run(2, None, "EVENT_NO_DELETE", "addition", "new event"),
        ],
    ),
    (
        "remove a field",
        _remove_field,
        [
            _run(
                1,
                "attempts",
                "FIELD_NO_DELETE",
                "breaking",
                "field deleted; its view column and every query that reads it break",
            )
        ],
    ),
    (
        "retype a field",
        _retype,
        [
            _run(
                1,
                "attempts",
                "FIELD_SAME_TYPE",
                "breaking",
                "type changed from INTEGER (int) to BOOLEAN (bool); the sink column keeps its type",
            )
        ],
    ),
    (
        "add an optional field",
        _append_field(required=False),
        [_run(1, "retries", "FIELD_NO_REQUIRED_ADD", "addition", "optional field added")],
    ),
    (
        "make required optional",
        _make_optional,
        [
            _run(
                1,
                "lane",
                REQUIREDNESS,
                "breaking",
                "required field became optional; queries that rely on it never being NULL "
                "(group-bys, joins, counts) change meaning",
            )
        ],
    ),
    (
        "make optional required",
        _make_required,
        [
            _run(
                1,
                "reason",
                REQUIREDNESS,
                "breaking",
                "optional field became required; stored rows and services not yet upgraded "
                "may not have it",
            )
        ],
    ),
    (
        "remove two members",
        _lane_members,
        [
            _run(
                1,
                "lane",
                MEMBERS,
                "breaking",
                "member(s) admin, premium deleted; stored rows keep them and the view would "
                "turn them into NULL",
            )
        ],
    ),
    (
        "add two members",
        _lane_added,
        [_run(1, "lane", MEMBERS, "addition", "member(s) enterprise, trial added")],
    ),
    (
        "respell, delete and add members of an enum after an int field",
        _token_buckets,
        [
            _run(
                1,
                "user_tokens_today",
                MEMBERS,
                "breaking",
                "member(s) over deleted; stored rows keep them and the view would turn "
                "them into NULL",
            ),
            _run(1, "user_tokens_today", MEMBERS, "addition", "member(s) unknown added"),
            _run(
                1,
                "user_tokens_today",
                "ENUM_VALUE_SAME_SPELLING",
                "breaking",
                "member lt25 respelled as lt_25: a delete plus an add; stored rows keep "
                "lt25 and queries filtering on it find nothing new",
            ),
        ],
    ),
    (
        "narrow both bounds",
        _attempts_bounds(1, 1),
        [
            _run(
                1,
                "attempts",
                BOUND,
                "breaking",
                "bound narrowed (ge 0 -> 1, le 2 -> 1); stored values outside it would "
                "read as NULL",
            )
        ],
    ),
    (
        "narrow the lower bound alone",
        _attempts_bounds(1, 2),
        [
            _run(
                1,
                "attempts",
                BOUND,
                "breaking",
                "bound narrowed (ge 0 -> 1); stored values outside it would read as NULL",
            )
        ],
    ),
    (
        "widen both bounds",
        _attempts_bounds(-1, 5),
        [_run(1, "attempts", BOUND, "addition", "bound widened (ge 0 -> -1, le 2 -> 5)")],
    ),
]


@pytest.mark.parametrize(
    ("mutation", "expected"), [(m, e) for _, m, e in DETAILS], ids=[i for i, _, _ in DETAILS]
)
def test_each_change_is_reported_word_for_word(mutation: Mutation, expected: list[Change]) -> None:
    assert compare(BASE, mutated(mutation)) == tuple(expected)


# --- a retype is one change --------------------------------------------------------------


def _lane_as_int(d: LockData) -> None:
    lane = field(d, "pipeline_run", "lane")
    lane.update(kind="int", type="INTEGER", ge=0, le=2)
    del lane["members"]


def _attempts_typed(sink_type: str) -> Mutation:
    def mutate(d: LockData) -> None:
        field(d, "pipeline_run", "attempts").update(type=sink_type)

    return mutate


def _error_class_typed(sink_type: str) -> Mutation:
    def mutate(d: LockData) -> None:
        field(d, "pipeline_run", "error_class").update(type=sink_type)

    return mutate


def _unchanged(d: LockData) -> None:
    pass


# (id, mutation of the base lock, mutation of the current lock, the one retype reported)
RETYPES: list[tuple[str, Mutation, Mutation, tuple[str, str]]] = [
    (
        "an enum field becomes an int: no member is reported deleted",
        _unchanged,
        _lane_as_int,
        ("lane", "type changed from STRING (enum) to INTEGER (int)"),
    ),
    (
        "an int field's sink type changes, its bound too: no bound change is reported",
        _attempts_typed("STRING"),
        _attempts_bounds(0, 1),
        ("attempts", "type changed from STRING (int) to INTEGER (int)"),
    ),
    (
        "an enum field's sink type changes, a member is respelled: no respelling is reported",
        _error_class_typed("INTEGER"),
        _respell,
        ("error_class", "type changed from INTEGER (enum) to STRING (enum)"),
    ),
]


@pytest.mark.parametrize(
    ("base", "current", "retype"),
    [(b, c, r) for _, b, c, r in RETYPES],
    ids=[i for i, _, _, _ in RETYPES],
)
def test_a_retyped_field_is_reported_once_as_a_retype(
    base: Mutation, current: Mutation, retype: tuple[str, str]
) -> None:
    data = real_lock_data()
    base(data)
    name, detail = retype
    assert compare(parse_lock(data), mutated(current)) == (
        _run(
            1,
            name,
            "FIELD_SAME_TYPE",
            "breaking",
            f"{detail}; the sink column keeps its type",
        ),
    )


# --- spelling ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("out_of_scope", "outofscope"),  # two underscores: two edits apart unfolded
        ("out-of-scope", "outofscope"),  # two hyphens
        ("out_of_scope", "out-of-scope"),  # underscores for hyphens
        ("Out_Of_Scope", "outofscope"),  # case and underscores
        ("a_b", "ab"),  # folding ignores the length floor of one-edit respellings
    ],
)
def test_folding_drops_every_underscore_and_hyphen(old: str, new: str) -> None:
    assert near_identical(old, new)
    assert near_identical(new, old)


def test_a_member_losing_two_underscores_is_a_respelling() -> None:
    def refusal_folded(d: LockData) -> None:
        members = field(d, "chat_turn", "refusal")["members"]
        members[members.index("out_of_scope")] = "outofscope"

    (change,) = compare(BASE, mutated(refusal_folded))
    assert (change.rule, change.event, change.field) == (
        "ENUM_VALUE_SAME_SPELLING",
        "chat_turn",
        "refusal",
    )
