"""Each compatibility rule fires on its mutation and stays quiet on its additive twin.

Mutations are made on copies of the real lock (JSON data) and on run-time copies of
the real models, never on the package.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, ValidationError

from agent_telemetry.schema import ChatTurn, PipelineRender, PipelineRun, compat, count
from agent_telemetry.schema.compat import (
    COMPAT_RULES,
    Change,
    CompatException,
    CompatRule,
    apply_exceptions,
    classify_changes,
    near_identical,
)
from agent_telemetry.schema.lock import SchemaLock, parse_lock
from tests.schema.copies import (
    LockData,
    Mutation,
    copy_model,
    field,
    fields,
    lock_of,
    models_with,
    mutated,
    real_lock_data,
    registry_with,
)
from tests.schema.copies import (
    compare_shape as compare,
)

BASE = parse_lock(real_lock_data())


def _remove_member(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["members"].remove("premium")


def _add_member(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["members"].append("enterprise")


def _remove_field(d: LockData) -> None:
    fields(d, "pipeline_run").remove(field(d, "pipeline_run", "attempts"))


def _append_field(required: bool) -> Mutation:
    def mutate(d: LockData) -> None:
        new = dict(field(d, "pipeline_run", "queue_position"), name="retries", required=required)
        fields(d, "pipeline_run").append(new)

    return mutate


def _insert_field_in_middle(d: LockData) -> None:
    new = dict(field(d, "pipeline_run", "queue_position"), name="retries")
    fields(d, "pipeline_run").insert(2, new)


def _retype(d: LockData) -> None:
    attempts = field(d, "pipeline_run", "attempts")
    attempts.update(kind="bool", type="BOOLEAN")
    del attempts["ge"], attempts["le"]


def _narrow(d: LockData) -> None:
    field(d, "pipeline_run", "attempts")["le"] = 1


def _widen(d: LockData) -> None:
    field(d, "pipeline_run", "attempts")["le"] = 5
    field(d, "pipeline_run", "queue_wait_ms")["ge"] = -1


def _reorder(d: LockData) -> None:
    f = fields(d, "pipeline_run")
    f[0], f[1] = f[1], f[0]


def _move_first_to_end(d: LockData) -> None:
    f = fields(d, "pipeline_run")
    f.append(f.pop(0))


def _respell(d: LockData) -> None:
    members = field(d, "pipeline_run", "error_class")["members"]
    members[members.index("cancelled")] = "canceled"


def _respell_underscore(d: LockData) -> None:
    members = field(d, "pipeline_run", "error_class")["members"]
    members[members.index("rate_limited")] = "ratelimited"


def _add_near_spelling(d: LockData) -> None:
    field(d, "pipeline_run", "error_class")["members"].append("canceled")


def _make_required(d: LockData) -> None:
    field(d, "pipeline_run", "reason")["required"] = True


def _make_optional(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["required"] = False


def _delete_event(d: LockData) -> None:
    del d["events"]["provider_status"]


def _add_event(d: LockData) -> None:
    d["events"]["cache_lookup"] = d["events"]["provider_status"]


def _edit_description(d: LockData) -> None:
    field(d, "pipeline_run", "lane")["description_sha256"] = "0" * 64


def _lower_precision(d: LockData) -> None:
    field(d, "pipeline_run", "duration_ms")["precision"] = 2


def _duration_as_string(d: LockData) -> None:
    theme = field(d, "pipeline_render", "theme")
    fields(d, "pipeline_render").append(dict(theme, name="duration_ms", required=False))


# (id, mutation of the current lock, the breaking rules it must fire, exactly)
BREAKING: list[tuple[str, Mutation, set[str]]] = [
    ("remove a member", _remove_member, {"ENUM_VALUE_NO_DELETE"}),
    ("remove a field", _remove_field, {"FIELD_NO_DELETE"}),
    ("retype a field", _retype, {"FIELD_SAME_TYPE"}),
    ("narrow a bound", _narrow, {"BOUND_NO_NARROW"}),
    ("add a required field", _append_field(required=True), {"FIELD_NO_REQUIRED_ADD"}),
    ("reorder fields", _reorder, {"COLUMN_ORDER_APPEND_ONLY"}),
    ("move a field to the end", _move_first_to_end, {"COLUMN_ORDER_APPEND_ONLY"}),
    ("insert a field mid-way", _insert_field_in_middle, {"COLUMN_ORDER_APPEND_ONLY"}),
    ("respell a member", _respell, {"ENUM_VALUE_SAME_SPELLING"}),
    ("drop an underscore", _respell_underscore, {"ENUM_VALUE_SAME_SPELLING"}),
    ("make optional required", _make_required, {"FIELD_SAME_REQUIREDNESS"}),
    ("make required optional", _make_optional, {"FIELD_SAME_REQUIREDNESS"}),
    ("delete an event", _delete_event, {"EVENT_NO_DELETE"}),
    ("share a column with another type", _duration_as_string, {"SINK_COLUMN_SAME_TYPE"}),
]

# (id, additive twin, the rule that reports it as an addition)
ADDITIVE: list[tuple[str, Mutation, str]] = [
    ("add a member", _add_member, "ENUM_VALUE_NO_DELETE"),
    ("add an optional field at the end", _append_field(required=False), "FIELD_NO_REQUIRED_ADD"),
    ("widen a bound", _widen, "BOUND_NO_NARROW"),
    ("add a near spelling, keep the old", _add_near_spelling, "ENUM_VALUE_NO_DELETE"),
    ("add an event", _add_event, "EVENT_NO_DELETE"),
    ("edit a description", _edit_description, "DESCRIPTION_EDIT"),
    ("keep fewer digits", _lower_precision, "FIELD_PRECISION"),
]


@pytest.mark.parametrize(
    ("mutation", "rules"), [(m, r) for _, m, r in BREAKING], ids=[i for i, _, _ in BREAKING]
)
def test_each_rule_fires_on_its_mutation(mutation: Mutation, rules: set[str]) -> None:
    changes = compare(BASE, mutated(mutation))
    assert {c.rule for c in changes if c.classification == "breaking"} == rules
    assert classify_changes(changes) == "breaking"


@pytest.mark.parametrize(
    ("mutation", "rule"), [(m, r) for _, m, r in ADDITIVE], ids=[i for i, _, _ in ADDITIVE]
)
def test_additive_twins_are_additions(mutation: Mutation, rule: str) -> None:
    changes = compare(BASE, mutated(mutation))
    assert [c for c in changes if c.classification == "breaking"] == []
    assert rule in {c.rule for c in changes}
    assert classify_changes(changes) == "addition"


def test_an_unchanged_lock_has_no_changes() -> None:
    assert compare(BASE, parse_lock(real_lock_data())) == ()
    assert classify_changes(()) == "none"


def test_member_order_is_not_a_change() -> None:
    def shuffle(d: LockData) -> None:
        field(d, "pipeline_run", "lane")["members"].reverse()

    assert compare(BASE, mutated(shuffle)) == ()


def test_every_catalogued_rule_can_fire_or_report() -> None:
    seen = {c.rule for _, m, _ in BREAKING for c in compat.compare(BASE, mutated(m))}
    seen |= {c.rule for _, m, _ in ADDITIVE for c in compat.compare(BASE, mutated(m))}
    assert seen == {rule.id for rule in COMPAT_RULES}


CASES_BY_RULE: dict[str, list[Mutation]] = {}
for _, _mutation, _rules in BREAKING:
    for _rule in _rules:
        CASES_BY_RULE.setdefault(_rule, []).append(_mutation)
for _, _mutation, _rule in ADDITIVE:
    CASES_BY_RULE.setdefault(_rule, []).append(_mutation)
# Every widening grows a capacity (tests/schema/test_capacity_growth.py has the rest).
CASES_BY_RULE["CAPACITY_GROWTH"] = [_add_member, _widen, _add_event]


@pytest.mark.parametrize("rule", COMPAT_RULES, ids=[rule.id for rule in COMPAT_RULES])
def test_every_rule_in_the_table_has_a_case_here_that_triggers_it(rule: CompatRule) -> None:
    # A rule added to COMPAT_RULES without a case in BREAKING or ADDITIVE fails here.
    cases = CASES_BY_RULE.get(rule.id, [])
    assert cases, f"{rule.id}: no case in BREAKING or ADDITIVE"
    for mutation in cases:
        changes = compat.compare(BASE, mutated(mutation))
        assert rule.id in {c.rule for c in changes}
        # The rule's own check reports it, not some other rule under its name.
        assert any(c.rule == rule.id for c in _checked_by(rule, mutation))


def test_every_rule_a_case_names_is_in_the_table() -> None:
    # A rule dropped from COMPAT_RULES while its cases stay fails here.
    assert set(CASES_BY_RULE) <= {rule.id for rule in COMPAT_RULES}


def _checked_by(rule: CompatRule, mutation: Mutation) -> tuple[Change, ...]:
    """The changes ``compare`` finds with ``rule`` as the only rule in the table."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compat, "COMPAT_RULES", (rule,))
        return compat.compare(BASE, mutated(mutation))


def test_additions_are_sorted_out_and_never_fail_or_use_an_exception() -> None:
    changes = compare(BASE, mutated(_add_member)) + compare(BASE, mutated(_narrow))
    additions = tuple(c for c in changes if c.classification == "addition")
    breaking = tuple(c for c in changes if c.classification == "breaking")
    assert additions
    assert breaking
    outcome = apply_exceptions(changes)
    assert outcome.additions == additions
    assert outcome.breaking == breaking
    assert outcome.excepted == ()
    assert outcome.unused_exceptions == ()


@pytest.mark.parametrize(
    ("mutation", "rules"), [(m, r) for _, m, r in BREAKING], ids=[i for i, _, _ in BREAKING]
)
def test_each_change_names_its_field_and_says_why(mutation: Mutation, rules: set[str]) -> None:
    scope = {rule.id: rule.scope for rule in COMPAT_RULES}
    for change in compare(BASE, mutated(mutation)):
        if scope[change.rule] == "field":
            assert change.field is not None, change
        assert change.detail.strip(), change


def test_the_reviewer_is_told_what_to_do_about_a_required_field() -> None:
    (change,) = compare(BASE, mutated(_append_field(required=True)))
    assert (change.rule, change.field) == ("FIELD_NO_REQUIRED_ADD", "retries")
    assert change.detail == (
        "new field is required; rows already stored and services not yet "
        "upgraded do not have it (add it as optional)"
    )


def test_a_moved_field_is_reported_alone() -> None:
    changes = compare(BASE, mutated(_move_first_to_end))
    assert [c.field for c in changes] == ["lane"]


def test_the_last_field_moved_to_the_front_is_reported_alone() -> None:
    # The fields that kept their order are a longest common subsequence, not the ones a
    # greedy walk from the front happens to match.
    def last_to_front(d: LockData) -> None:
        f = fields(d, "pipeline_run")
        f.insert(0, f.pop())

    last = fields(real_lock_data(), "pipeline_run")[-1]["name"]
    changes = compare(BASE, mutated(last_to_front))
    assert [(c.rule, c.field) for c in changes] == [("COLUMN_ORDER_APPEND_ONLY", last)]


def test_classifying_one_event_ignores_the_others() -> None:
    changes = compare(BASE, mutated(_narrow))
    assert {c.event for c in changes} == {"pipeline_run"}
    assert classify_changes(changes, "pipeline_run") == "breaking"
    assert classify_changes(changes, "chat_turn") == "none"


def test_respelling_is_not_also_a_plain_delete() -> None:
    (change,) = compare(BASE, mutated(_respell))
    assert change.field == "error_class"
    assert "cancelled respelled as canceled" in change.detail


# --- the same, on run-time copies of the models ----------------------------------------


class LaneWithoutPremium(StrEnum):
    PUBLIC = "public"
    ADMIN = "admin"


class LaneWithEnterprise(StrEnum):
    PUBLIC = "public"
    ADMIN = "admin"
    PREMIUM = "premium"
    ENTERPRISE = "enterprise"


ORDER = tuple(PipelineRun.model_fields)
MODEL_COPIES: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "remove a member",
        {"replace": {"lane": (LaneWithoutPremium, Field(description="Lane."))}},
        "ENUM_VALUE_NO_DELETE",
        "breaking",
    ),
    (
        "add a member",
        {"replace": {"lane": (LaneWithEnterprise, Field(description="Lane."))}},
        "ENUM_VALUE_NO_DELETE",
        "addition",
    ),
    ("remove a field", {"drop": ("model_calls",)}, "FIELD_NO_DELETE", "breaking"),
    (
        "retype a field",
        {"replace": {"attempts": (bool | None, Field(None, strict=True, description="A."))}},
        "FIELD_SAME_TYPE",
        "breaking",
    ),
    (
        "narrow a bound",
        {"replace": {"attempts": (int | None, count(0, 1, "Attempts."))}},
        "BOUND_NO_NARROW",
        "breaking",
    ),
    (
        "widen a bound",
        {"replace": {"attempts": (int | None, count(0, 3, "Attempts."))}},
        "BOUND_NO_NARROW",
        "addition",
    ),
    (
        "add a required field",
        {"add": {"retries": (int, Field(ge=0, le=3, strict=True, description="Retries."))}},
        "FIELD_NO_REQUIRED_ADD",
        "breaking",
    ),
    (
        "add an optional field at the end",
        {"add": {"retries": (int | None, count(0, 3, "Retries."))}},
        "FIELD_NO_REQUIRED_ADD",
        "addition",
    ),
    (
        "reorder",
        {"order": (ORDER[1], ORDER[0], *ORDER[2:])},
        "COLUMN_ORDER_APPEND_ONLY",
        "breaking",
    ),
    (
        "make optional required",
        {"replace": {"attempts": (int, Field(ge=0, le=2, strict=True, description="A."))}},
        "FIELD_SAME_REQUIREDNESS",
        "breaking",
    ),
]


@pytest.mark.parametrize(
    ("changes", "rule", "classification"),
    [(c, r, k) for _, c, r, k in MODEL_COPIES],
    ids=[i for i, _, _, _ in MODEL_COPIES],
)
def test_model_copies_are_classified(
    changes: dict[str, Any], rule: str, classification: str
) -> None:
    current = lock_of(models_with(copy_model(PipelineRun, **changes)))
    found = compare(BASE, current)
    assert {(c.rule, c.classification) for c in found if c.rule != "DESCRIPTION_EDIT"} == {
        (rule, classification)
    }


# --- versions ----------------------------------------------------------------------------


def test_a_version_bump_passes_and_keeps_the_old_version() -> None:
    v2 = copy_model(
        PipelineRun,
        version=2,
        drop=("attempts",),
        replace={"lane": (LaneWithoutPremium, Field(description="Lane."))},
    )
    current = lock_of(registry_with(v2, retired=(PipelineRun,)))
    assert current.events["pipeline_run"][1] == BASE.events["pipeline_run"][1]
    assert set(current.events["pipeline_run"]) == {1, 2}
    changes = compare(BASE, current)
    assert classify_changes(changes) == "addition"
    (change,) = changes
    assert (change.rule, change.version) == ("EVENT_NO_DELETE", 2)
    assert "version 1 kept" in change.detail


def test_a_version_bump_without_the_retired_class_is_a_delete() -> None:
    current = lock_of(registry_with(copy_model(PipelineRun, version=2)))  # v1 not retired
    breaking = [c for c in compare(BASE, current) if c.classification == "breaking"]
    assert [(c.rule, c.event, c.version) for c in breaking] == [
        ("EVENT_NO_DELETE", "pipeline_run", 1)
    ]


def test_a_bump_does_not_excuse_a_sink_column_retype() -> None:
    v2 = copy_model(
        PipelineRun,
        version=2,
        replace={"attempts": (bool | None, Field(None, strict=True, description="A."))},
    )
    changes = compare(BASE, lock_of(registry_with(v2, retired=(PipelineRun,))))
    assert {c.rule for c in changes if c.classification == "breaking"} == {"SINK_COLUMN_SAME_TYPE"}


def test_a_retired_version_is_held_to_its_locked_entry() -> None:
    v2 = copy_model(PipelineRun, version=2)
    edited_v1 = copy_model(
        PipelineRun, replace={"lane": (LaneWithoutPremium, Field(description="Lane."))}
    )
    changes = compare(BASE, lock_of(registry_with(v2, retired=(edited_v1,))))
    breaking = [(c.rule, c.version, c.field) for c in changes if c.classification == "breaking"]
    assert breaking == [("ENUM_VALUE_NO_DELETE", 1, "lane")]


def test_a_later_bump_keeps_every_older_version() -> None:
    chat_v2 = copy_model(ChatTurn, version=2)
    v2 = lock_of(registry_with(chat_v2, retired=(ChatTurn,)))
    v3 = lock_of(registry_with(copy_model(ChatTurn, version=3), retired=(ChatTurn, chat_v2)))
    assert set(v3.events["chat_turn"]) == {1, 2, 3}
    assert compare(v2, v3)[0].detail == "new version 3 (a new view; version 1, 2 kept)"


# --- exceptions --------------------------------------------------------------------------


def _narrow_two(d: LockData) -> None:
    field(d, "pipeline_run", "attempts")["le"] = 1
    field(d, "pipeline_run", "model_calls")["le"] = 100
    field(d, "chat_turn", "model_calls")["le"] = 100


def exception(rule: str, event: str, field: str | None) -> CompatException:
    return CompatException(rule=rule, event=event, field=field, reason="Reviewed in #12.")


def test_an_exception_suppresses_exactly_its_rule_event_and_field() -> None:
    changes = compare(BASE, mutated(_narrow_two))
    outcome = apply_exceptions(
        changes, [exception("BOUND_NO_NARROW", "pipeline_run", "model_calls")]
    )
    assert {(c.event, c.field) for c in outcome.breaking} == {
        ("pipeline_run", "attempts"),
        ("chat_turn", "model_calls"),
    }
    assert [(c.event, c.field) for c, _ in outcome.excepted] == [("pipeline_run", "model_calls")]
    assert not outcome.ok


@pytest.mark.parametrize(
    "other",
    [
        exception("FIELD_SAME_TYPE", "pipeline_run", "attempts"),
        exception("BOUND_NO_NARROW", "pipeline_render", "attempt"),
        exception("BOUND_NO_NARROW", "pipeline_run", "queue_position"),
    ],
    ids=["other rule", "other event", "other field"],
)
def test_an_exception_for_something_else_suppresses_nothing(other: CompatException) -> None:
    changes = compare(BASE, mutated(_narrow))
    outcome = apply_exceptions(changes, [other])
    assert [c.field for c in outcome.breaking] == ["attempts"]
    assert outcome.unused_exceptions == (other,)


def test_an_event_level_exception_covers_an_event_delete() -> None:
    changes = compare(BASE, mutated(_delete_event))
    outcome = apply_exceptions(changes, [exception("EVENT_NO_DELETE", "provider_status", None)])
    assert outcome.ok
    assert outcome.unused_exceptions == ()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"rule": "NO_SUCH_RULE", "event": "e", "field": "f", "reason": "r"}, "not a compat"),
        ({"rule": "BOUND_NO_NARROW", "event": "e", "reason": "r"}, "name it in field"),
        ({"rule": "EVENT_NO_DELETE", "event": "e", "field": "f", "reason": "r"}, "leave out"),
        ({"rule": "BOUND_NO_NARROW", "event": "e", "field": "f", "reason": " "}, "reason"),
        ({"rule": "BOUND_NO_NARROW", "event": "e", "field": "f"}, "reason"),
        ({"rule": "DESCRIPTION_EDIT", "event": "e", "field": "f", "reason": "r"}, "not a compat"),
    ],
)
def test_malformed_exceptions_are_rejected(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CompatException.model_validate(entry)


# --- spelling ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "near"),
    [
        ("cancelled", "canceled", True),
        ("rate_limited", "ratelimited", True),
        ("rate_limited", "rate-limited", True),
        ("timeout", "time_out", True),
        ("upstraem", "upstream", True),
        ("busy", "buzy", True),  # both exactly 4 characters: one edit is a respelling
        ("lane", "line", True),
        ("ok", "no", False),
        ("run", "ran", False),
        ("public", "premium", False),
        ("busy", "busy", False),
        # One edit of each kind, and what is more than one edit.
        ("pending", "pendint", True),  # one substitution
        ("pending", "pendng", True),  # one deletion, the longer one sorting first
        ("queued", "queeud", True),  # an adjacent swap
        ("queued", "qeueud", False),  # two swaps
        ("alpha", "axphz", False),  # two substitutions, not adjacent
        ("abcd", "dbcx", False),  # two substitutions, the first letter moved
        ("stop", "ptos", False),  # ends swapped: a swap only counts when adjacent
        ("abcdef", "xyzdef", False),  # three substitutions
        ("abcdef", "abcd", False),  # two deletions
        ("abcdef", "abcdefgh", False),  # two insertions
    ],
)
def test_near_identical_spellings(old: str, new: str, near: bool) -> None:
    assert near_identical(old, new) is near
    assert near_identical(new, old) is near


MEMBER = st.from_regex(r"[a-z0-9]{4,30}", fullmatch=True)


@given(MEMBER, st.integers(min_value=1, max_value=29))
def test_an_inserted_underscore_is_always_a_respelling(member: str, at: int) -> None:
    at = min(at, len(member) - 1)
    assert near_identical(member, member[:at] + "_" + member[at:])


@given(st.sets(st.sampled_from(["public", "admin", "premium"])), st.sets(MEMBER, max_size=3))
def test_enum_changes_are_breaking_exactly_when_a_member_goes(
    kept: set[str], added: set[str]
) -> None:
    def change(d: LockData) -> None:
        field(d, "pipeline_run", "lane")["members"] = sorted(kept | added)

    changes = compare(BASE, mutated(change))
    gone = {"public", "admin", "premium"} - kept - added
    assert (classify_changes(changes) == "breaking") == bool(gone)
    if not gone and added - {"public", "admin", "premium"}:
        assert classify_changes(changes) == "addition"


def test_lock_of_nothing_is_empty() -> None:
    assert compare(SchemaLock(), SchemaLock()) == ()
    assert {c.classification for c in compare(SchemaLock(), BASE)} == {"addition"}


def test_pipeline_render_copy_is_identical() -> None:
    assert compare(BASE, lock_of(models_with(copy_model(PipelineRender)))) == ()
