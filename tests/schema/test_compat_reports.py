"""What the order, description and sink-column rules report, word for word.

- COLUMN_ORDER_APPEND_ONLY reports the fewest fields that moved (the rest are a longest
  common subsequence), the same one every time when two neighbours swap (so a reviewed
  exception keeps covering it), with lock and model positions counted from 1; a version
  whose fields are all new has no order to keep;
- DESCRIPTION_EDIT reports an event's and a field's description edit as additions;
- SINK_COLUMN_SAME_TYPE names the clashing field exactly, judges fields that are new in
  the same lock against each other, and never re-reports a clash the base lock already
  holds (it was reviewed when it came in).
"""

from __future__ import annotations

import pytest

from agent_telemetry.schema.compat import Change
from tests.schema.copies import LockData, Mutation, field, fields, mutated, real_lock_data
from tests.schema.copies import compare_shape as compare
from tests.schema.test_compat import (
    BASE,
    _duration_as_string,
    _edit_description,
    _insert_field_in_middle,
)

ORDER = [f["name"] for f in fields(real_lock_data(), "pipeline_run")]


def _order(*names: str) -> Mutation:
    """Put ``names`` first in pipeline_run, in that order, the other fields after them."""

    def mutate(d: LockData) -> None:
        by_name = {f["name"]: f for f in fields(d, "pipeline_run")}
        rest = [n for n in ORDER if n not in names]
        fields(d, "pipeline_run")[:] = [by_name[n] for n in (*names, *rest)]

    return mutate


def _first_to_second_last(d: LockData) -> None:
    f = fields(d, "pipeline_run")
    first = f.pop(0)
    f.insert(len(f) - 1, first)


def _moved(name: str, lock: int, now: int) -> tuple[str, str]:
    return name, f"field moved (lock position {lock}, now {now}); view columns keep their order"


LANE, STATUS, REASON, ERROR_CLASS, QUEUE_WAIT = ORDER[:5]

# (id, reordering of pipeline_run, the (field, detail) reported, in model order)
MOVES: list[tuple[str, Mutation, list[tuple[str, str]]]] = [
    (
        "two neighbours swap: the one first in the lock is reported",
        _order(STATUS, LANE),
        [_moved(LANE, 1, 2)],
    ),
    (
        "the first field moved to second last",
        _first_to_second_last,
        [_moved(LANE, 1, len(ORDER) - 1)],
    ),
    ("the third field moved to the front", _order(REASON), [_moved(REASON, 3, 1)]),
    (
        "the first two fields moved behind the next three",
        _order(REASON, ERROR_CLASS, QUEUE_WAIT, LANE, STATUS),
        [_moved(LANE, 1, 4), _moved(STATUS, 2, 5)],
    ),
]


@pytest.mark.parametrize(
    ("mutation", "reported"), [(m, r) for _, m, r in MOVES], ids=[i for i, _, _ in MOVES]
)
def test_a_reorder_reports_the_fewest_moved_fields_and_their_positions(
    mutation: Mutation, reported: list[tuple[str, str]]
) -> None:
    current = mutated(mutation)
    changes = compare(BASE, current)
    assert all(
        (c.rule, c.classification, c.event)
        == ("COLUMN_ORDER_APPEND_ONLY", "breaking", "pipeline_run")
        for c in changes
    )
    assert [(c.field, c.detail) for c in changes] == reported


def test_a_field_inserted_mid_way_is_told_where_and_where_new_fields_go() -> None:
    (change,) = [
        c
        for c in compare(BASE, mutated(_insert_field_in_middle))
        if c.rule != "FIELD_NO_REQUIRED_ADD"
    ]
    assert (change.rule, change.field) == ("COLUMN_ORDER_APPEND_ONLY", "retries")
    assert change.detail == (
        "new field inserted at position 3, before existing fields; new fields go at the end"
    )


def test_a_version_whose_fields_are_all_new_has_no_order_to_keep() -> None:
    def rename_all(d: LockData) -> None:
        for f in fields(d, "pipeline_run"):
            f["name"] = f"new_{f['name']}"

    changes = compare(BASE, mutated(rename_all))
    assert {c.rule for c in changes} == {"FIELD_NO_DELETE", "FIELD_NO_REQUIRED_ADD"}


def _edit_event_description(d: LockData) -> None:
    d["events"]["pipeline_run"]["1"]["description_sha256"] = "0" * 64


@pytest.mark.parametrize(
    ("mutation", "reported"),
    [
        (
            _edit_event_description,
            Change(
                "DESCRIPTION_EDIT", "addition", "pipeline_run", 1, None, "event description edited"
            ),
        ),
        (
            _edit_description,
            Change("DESCRIPTION_EDIT", "addition", "pipeline_run", 1, "lane", "description edited"),
        ),
    ],
    ids=["the event's description", "a field's description"],
)
def test_a_description_edit_is_an_addition_naming_what_was_edited(
    mutation: Mutation, reported: Change
) -> None:
    assert compare(BASE, mutated(mutation)) == (reported,)


def _sink_clashes(mutation: Mutation) -> list[Change]:
    return [c for c in compare(BASE, mutated(mutation)) if c.rule == "SINK_COLUMN_SAME_TYPE"]


def _sink_clash(event: str, name: str, was: str, source: str, now: str) -> Change:
    return Change(
        "SINK_COLUMN_SAME_TYPE",
        "breaking",
        event,
        1,
        name,
        f"sink column {name} is {was} (from {source} v1); a {now} field cannot share it, "
        "even in a new version",
    )


def _retries_twice_with_two_types(d: LockData) -> None:
    as_int = dict(field(d, "chat_turn", "duration_ms"), name="retries")
    as_enum = dict(field(d, "pipeline_run", "reason"), name="retries")
    fields(d, "chat_turn").append(as_int)
    fields(d, "pipeline_run").append(as_enum)


def test_a_sink_column_clash_names_the_field_it_clashes_with() -> None:
    assert _sink_clashes(_duration_as_string) == [
        _sink_clash("pipeline_render", "duration_ms", "INTEGER", "chat_turn.duration_ms", "STRING")
    ]


def test_two_new_fields_of_one_name_and_two_types_clash_with_each_other() -> None:
    assert _sink_clashes(_retries_twice_with_two_types) == [
        _sink_clash("pipeline_run", "retries", "INTEGER", "chat_turn.retries", "STRING")
    ]


def test_a_clash_the_base_lock_already_holds_is_not_reported_again() -> None:
    # It came in with a reviewed exception; only new or retyped fields are judged.
    assert compare(mutated(_duration_as_string), mutated(_duration_as_string)) == ()
