"""Hypothesis lines: a line the emitter could write, then (usually) one thing bent.

Built from the catalogue's specs, the way a service in another language would build its
line from the contract; the bends are what such a service gets wrong.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from agent_telemetry.schema import EventSpec, FieldSpec
from agent_telemetry.schema.capacity import round_significant

TIME = "2026-05-09T07:35:25.123456Z"
BAD_TIMES = (
    "2026-05-09T07:35:25.123Z",  # milliseconds
    "2026-05-09T07:35:25Z",  # no fraction
    "2026-05-09T07:35:25.123456+00:00",  # an offset
    "2026-05-09T07:35:25.123456789Z",  # nanoseconds
    "2026-05-09 07:35:25.123456Z",  # a space
    "2026-05-09t07:35:25.123456z",  # lower case
    "2026-02-30T07:35:25.123456Z",  # no such day
    "2026-05-09T24:00:00.000000Z",  # no such hour
    "2026-12-31T23:59:60.000000Z",  # a leap second
    "0000-01-01T00:00:00.000000Z",  # year 0
    "٢٠٢٦-05-09T07:35:25.123456Z",  # other digits than ASCII
    "",
)
BENDS = (
    "none",
    "wrong_type",
    "out_of_bounds",
    "off_grid",
    "unknown_member",
    "extra_key",
    "missing_required",
    "wrong_version",
    "bad_time",
    "integral_double",
    "null_optional",
    "severity",
    "invalid_fields",
    "unknown_fields",
)


@st.composite
def value_of(draw: st.DrawFn, field: FieldSpec) -> Any:
    if field.kind == "enum":
        return draw(st.sampled_from(field.members))
    if field.kind == "bool":
        return draw(st.booleans())
    assert field.ge is not None
    assert field.le is not None
    value = draw(st.one_of(st.sampled_from((field.ge, field.le)), st.integers(field.ge, field.le)))
    return value if field.precision is None else round_significant(value, field.precision)


@st.composite
def emitter_line(draw: st.DrawFn, spec: EventSpec) -> dict[str, Any]:
    line: dict[str, Any] = {
        "event": spec.name,
        "schema_version": spec.schema_version,
        "severity": "INFO",
        "time": TIME,
    }
    for field in spec.fields:
        if field.required or draw(st.booleans()):
            line[field.name] = draw(value_of(field))
    return line


def _int_fields(spec: EventSpec) -> list[FieldSpec]:
    return [f for f in spec.fields if f.kind == "int"]


@st.composite
def bent_line(draw: st.DrawFn, specs: tuple[EventSpec, ...]) -> str:
    """One line as JSON text: valid, or with one thing bent."""
    spec = draw(st.sampled_from(specs))
    line = draw(emitter_line(spec))
    bend = draw(st.sampled_from(BENDS))
    field = draw(st.sampled_from(spec.fields))
    ints = _int_fields(spec)
    if bend == "wrong_type":
        line[field.name] = draw(st.sampled_from(["5", "true", 1.5, [], {}, "public", True, -0.0]))
    elif bend == "out_of_bounds" and ints:
        int_field = draw(st.sampled_from(ints))
        assert int_field.ge is not None
        assert int_field.le is not None
        line[int_field.name] = draw(st.sampled_from((int_field.ge - 1, int_field.le + 1)))
    elif bend == "off_grid":
        grids = [f for f in ints if f.precision is not None]
        if grids:
            grid_field = draw(st.sampled_from(grids))
            assert grid_field.le is not None
            assert grid_field.precision is not None
            line[grid_field.name] = draw(st.integers(10**grid_field.precision, grid_field.le))
    elif bend == "unknown_member":
        line[field.name] = draw(st.sampled_from(["zz_not_a_member", "Public", " public", ""]))
    elif bend == "extra_key":
        line[draw(st.sampled_from(["extra", "user_id", "timestamp", "jsonPayload"]))] = draw(
            st.sampled_from([1, "x", None, [], False])
        )
    elif bend == "missing_required":
        line.pop(field.name, None)
    elif bend == "wrong_version":
        line["schema_version"] = draw(st.sampled_from([0, 2, 99, -1, "1", 1.0, None]))
    elif bend == "bad_time":
        line["time"] = draw(st.sampled_from([*BAD_TIMES, None, 0]))
    elif bend == "integral_double" and ints:
        int_field = draw(st.sampled_from(ints))
        line[int_field.name] = float(draw(value_of(int_field)))
    elif bend == "null_optional":
        line[field.name] = None
    elif bend == "severity":
        line["severity"] = draw(st.sampled_from(["WARNING", "info", None, 5]))
    elif bend == "invalid_fields":
        names = [*spec.field_names, "not_a_field", 5]
        chosen = draw(st.lists(st.sampled_from(names), max_size=3))
        line["invalid_fields"] = chosen
        if chosen and draw(st.booleans()):
            line.pop(str(chosen[0]), None)  # dropped, as the emitter drops it
    elif bend == "unknown_fields":
        line["unknown_fields"] = draw(st.sampled_from([0, 1, 3, -1, 2.0, "1", None]))
    return json.dumps(line)
