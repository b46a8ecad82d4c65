"""COLUMN_ORDER_APPEND_ONLY when two neighbours swap after fields that stayed put: one
of them is named as moved, with both positions, and the rest are left alone."""

from __future__ import annotations

from agent_telemetry.schema.compat import Change, compare
from tests.schema.copies import LockData, fields, mutated, real_lock_data
from tests.schema.test_capacity_growth import BASE


def test_two_neighbours_swapped_mid_way_name_one_field_moved() -> None:
    # lane, status, reason become lane, reason, status: the walk matches lane, then
    # steps past one field on each side to keep the longest run in place.
    def swap(d: LockData) -> None:
        f = fields(d, "pipeline_run")
        f[1], f[2] = f[2], f[1]

    names = [f["name"] for f in fields(real_lock_data(), "pipeline_run")]
    changes = compare(BASE, mutated(swap))
    assert changes == (
        Change(
            "COLUMN_ORDER_APPEND_ONLY",
            "breaking",
            "pipeline_run",
            1,
            names[1],
            "field moved (lock position 2, now 3); view columns keep their order",
        ),
    )
