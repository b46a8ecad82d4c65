"""FIELD_PRECISION as a reviewer reads it: an addition naming the field, the precision
before and after ("exact" or so many significant digits) and what it means for new
lines; a field that stops being an int is a type change, never a precision one."""

from __future__ import annotations

import pytest

from agent_telemetry.schema.compat import Change, compare
from tests.schema.copies import LockData, Mutation, field, mutated
from tests.schema.test_capacity_growth import BASE


def _set(name: str, **keys: object) -> Mutation:
    def mutate(d: LockData) -> None:
        spec = field(d, "pipeline_run", name)
        spec.update(keys)
        if keys.get("precision", 0) is None:
            del spec["precision"]

    return mutate


@pytest.mark.parametrize(
    ("mutation", "name", "detail"),
    [
        (
            _set("duration_ms", precision=2),
            "duration_ms",
            "precision 3 significant digits -> 2 significant digits; new lines are rounded",
        ),
        (
            _set("duration_ms", precision=4),
            "duration_ms",
            "precision 3 significant digits -> 4 significant digits; new lines say more",
        ),
        (
            _set("duration_ms", precision=None),
            "duration_ms",
            "precision 3 significant digits -> exact; new lines say more",
        ),
        (
            _set("queue_position", precision=1),
            "queue_position",
            "precision exact -> 1 significant digit; new lines are rounded",
        ),
        (
            _set("duration_ms", precision=1),
            "duration_ms",
            "precision 3 significant digits -> 1 significant digit; new lines are rounded",
        ),
    ],
    ids=["fewer", "more", "to exact", "from exact", "to one digit"],
)
def test_a_precision_change_is_an_addition_saying_what_new_lines_lose_or_gain(
    mutation: Mutation, name: str, detail: str
) -> None:
    changes = [c for c in compare(BASE, mutated(mutation)) if c.rule == "FIELD_PRECISION"]
    assert changes == [Change("FIELD_PRECISION", "addition", "pipeline_run", 1, name, detail)]


def test_an_int_that_becomes_an_enum_is_no_precision_change() -> None:
    mutation = _set("duration_ms", kind="enum", members=["a"], ge=None, le=None, precision=None)
    rules = {c.rule for c in compare(BASE, mutated(mutation)) if c.field == "duration_ms"}
    assert rules == {"FIELD_SAME_TYPE"}
