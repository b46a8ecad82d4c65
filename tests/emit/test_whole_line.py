"""The count is of the line as written (issue 36): a caller cannot say more on one line
than the event's capacity, envelope included.

The attack of the issue: ``unknown_fields`` was the exact count of junk keywords (any
number the caller chose) and ``invalid_fields`` gave every field a fourth state, so one
line of a 40-flag event, counted at 63.4 bits, carried an 80-bit hash and a 17-bit
number. Here the emitter is driven with every state a caller can give each field (a
value, None, a rejected value) and every number of junk keywords, and the distinct lines
it writes are counted: never more than ``event_capacity`` says.
"""

from __future__ import annotations

import io
import itertools
import json
from typing import Any, ClassVar

import pytest

from agent_telemetry.emit import emit
from agent_telemetry.emit._processors import render_line
from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema import TelemetryEvent, catalogue, flag
from agent_telemetry.schema.capacity import EVENT_BUDGET_BITS, event_capacity, tenths
from agent_telemetry.schema.spec import event_spec
from tests.emit.conftest import admitted, lines
from tests.schema.attacks import define, event


class ThreeFlags(TelemetryEvent):
    """Three optional flags: small enough to drive every state a caller can give."""

    event_name: ClassVar[str] = "three_flags"
    schema_version: ClassVar[int] = 1

    a: bool | None = flag("A flag.")
    b: bool | None = flag("A flag.")
    c: bool | None = flag("A flag.")


# Per field: a value, the other value, absent (None), rejected (not a bool).
STATES: tuple[Any, ...] = (True, False, None, "not a flag")
# How many junk keywords the caller adds: each a number it could choose.
JUNK = (0, 1, 2, 7, 300)


def _line_without_time(buffer: io.StringIO) -> str:
    (line,) = lines(buffer)
    del line["time"]  # the clock's, not the caller's (a timing channel; see docs/rules.md)
    buffer.seek(0)
    buffer.truncate()
    return json.dumps(line, sort_keys=False)


def test_every_line_a_caller_can_write_is_counted(lenient: io.StringIO) -> None:
    written: set[str] = set()
    with admitted(ThreeFlags):
        for states in itertools.product(STATES, repeat=3):
            for junk in JUNK:
                extra = {f"junk_{i}": 1 for i in range(junk)}
                emit("three_flags", **dict(zip("abc", states, strict=True)), **extra)
                written.add(_line_without_time(lenient))
    capacity = event_capacity(event_spec(ThreeFlags))
    # Every state of every field, and the flag: 4 * 4 * 4 * 2 lines, all reachable.
    assert len(written) == capacity.values == 4**3 * 2


def test_a_junk_keyword_count_is_not_on_the_line(lenient: io.StringIO) -> None:
    # provider_status carried a 17-bit user number as its count of junk keywords.
    seen = set()
    for number in (1, 2, 99_999, 123_456):
        emit(
            "provider_status",
            provider="vertex",
            state="live",
            probe="preflight",
            **{f"k{i}": None for i in range(number)},
        )
        seen.add(_line_without_time(lenient))
    assert len(seen) == 1, "the number of junk keywords can be read back from the line"
    assert json.loads(seen.pop())["unknown_fields"] == 1


def test_forty_flags_no_longer_fit_in_one_line() -> None:
    # 40 optional bools: 3**40 lines (63.4 bits) as fields alone, so the old count let it
    # through; with the rejected state and the flag it is 4**40 * 2 (81 bits).
    fields = "\n".join(f'f{i:02d}: bool | None = flag("A flag.")' for i in range(40))
    with pytest.raises(SchemaRuleError, match="EVENT_CAPACITY"):
        define(event(fields, name="forty_flags"))


def test_an_80_bit_hash_and_a_17_bit_number_fit_in_no_passing_event() -> None:
    # The most flags a line may carry now: 31 (4**31 * 2 = 2**63 lines).
    fields = "\n".join(f'f{i:02d}: bool | None = flag("A flag.")' for i in range(31))
    model = define(event(fields, name="thirty_one_flags"))
    assert tenths(event_capacity(event_spec(model)).values) == 630
    assert EVENT_BUDGET_BITS < 80 + 17
    for spec in catalogue():
        assert event_capacity(spec).within_budget, spec.name


def test_a_value_dropped_at_writing_is_named_in_model_order() -> None:
    # invalid_fields is counted as one state per field, so its order must carry nothing:
    # a field dropped late (orjson could not write it) still lands in the model's order.
    record = {
        "event": "pipeline_run",
        "schema_version": 1,
        "severity": "INFO",
        "time": "2026-01-01T00:00:00.000000Z",
        "lane": 2**70,  # orjson refuses ints past 64 bits
        "invalid_fields": ["queue_wait_ms"],
    }
    (line, _), _ = render_line(None, "info", record)
    assert json.loads(line)["invalid_fields"] == ["lane", "queue_wait_ms"]
