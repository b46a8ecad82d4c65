"""Round trip: any valid event -> emit -> log file -> DuckDB sink -> the view's row.

The row must equal the model's values exactly, for every event and field; an invalid
value must arrive as NULL, be named in invalid_fields and be counted in
telemetry_quality. This is how the suite proves the emitter and the views agree.
"""

from __future__ import annotations

import io
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_telemetry.emit import configure, reset_defaults
from agent_telemetry.emit import emit as emit_line
from agent_telemetry.schema import EventSpec, FieldSpec, catalogue
from agent_telemetry.schema.envelope import NOT_A_FIELD
from agent_telemetry.views import QUALITY_VIEW
from agent_telemetry.warehouse import Warehouse

SPECS = {spec.name: spec for spec in catalogue()}
SLOW = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def valid_value(field: FieldSpec) -> st.SearchStrategy[Any]:
    if field.kind == "enum":
        values: st.SearchStrategy[Any] = st.sampled_from(field.members)
    elif field.kind == "bool":
        values = st.booleans()
    else:
        assert field.ge is not None
        assert field.le is not None
        bounds = st.sampled_from([field.ge, field.le])
        values = st.one_of(bounds, st.integers(field.ge, field.le))
    return values if field.required else st.one_of(st.none(), values)


def valid_event(spec: EventSpec) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    fields = st.fixed_dictionaries({f.name: valid_value(f) for f in spec.fields})
    return st.tuples(st.just(spec.name), fields)


EVENTS = st.one_of(*(valid_event(spec) for spec in SPECS.values()))


def invalid_value(field: FieldSpec) -> st.SearchStrategy[Any]:
    if field.kind == "enum":
        return st.one_of(
            st.text(max_size=12).filter(lambda t: t not in field.members),
            st.integers(),
            st.sampled_from([m.upper() for m in field.members if m.upper() != m] or [" x"]),
        )
    if field.kind == "bool":
        return st.one_of(st.integers(0, 1), st.sampled_from(["true", "yes"]))
    assert field.ge is not None
    assert field.le is not None
    return st.one_of(
        st.integers(max_value=field.ge - 1),
        st.integers(min_value=field.le + 1),
        st.just(float(field.ge)),
        st.just(str(field.le)),
        st.just(True),
    )


@contextmanager
def emitting(stream: io.BytesIO, *, strict: bool) -> Iterator[None]:
    configure(stream=stream, strict=strict)
    try:
        yield
    finally:
        reset_defaults()


def load(lines: bytes) -> Warehouse:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "telemetry.jsonl"
        path.write_bytes(lines)
        wh = Warehouse()
        wh.load([path])
    wh.create_views()
    return wh


def expected_row(spec: EventSpec, record: dict[str, Any]) -> tuple[Any, ...]:
    values = tuple(record.get(f.name) for f in spec.fields)
    when = datetime.fromisoformat(record["time"])
    return (when, spec.schema_version, *values, tuple(record.get("invalid_fields", [])))


def hashable(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in row)


@SLOW
@given(st.lists(EVENTS, min_size=1, max_size=25))
def test_every_valid_event_reads_back_exactly_through_the_views(
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    stream = io.BytesIO()
    with emitting(stream, strict=True):
        records = [emit_line(name, **fields) for name, fields in events]
    with load(stream.getvalue()) as wh:
        for spec in SPECS.values():
            expected = Counter(
                expected_row(spec, r) for r in records if r is not None and r["event"] == spec.name
            )
            got = Counter(hashable(row) for row in wh.rows(f"SELECT * FROM {spec.name}"))
            assert got == expected, spec.name
        quality = wh.one(
            f"SELECT coalesce(sum(invalid_values + out_of_domain_values), 0) FROM {QUALITY_VIEW}"
        )
        assert quality == (0,)


@st.composite
def one_invalid_field(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    name, fields = draw(EVENTS)
    spec = SPECS[name]
    bad = draw(st.sampled_from(spec.fields))
    fields[bad.name] = draw(invalid_value(bad))
    return name, fields, bad.name


@SLOW
@given(one_invalid_field())
def test_an_invalid_value_arrives_as_null_named_and_counted(
    case: tuple[str, dict[str, Any], str],
) -> None:
    name, fields, bad = case
    stream = io.BytesIO()
    with emitting(stream, strict=False):
        record = emit_line(name, **fields)
    assert record is not None
    assert record["invalid_fields"] == [bad]
    with load(stream.getvalue()) as wh:
        ((value, invalid),) = wh.rows(f"SELECT {bad}, invalid_fields FROM {name}")
        assert value is None
        assert invalid == [bad]
        counts = dict(
            wh.rows(
                f"SELECT field, invalid_values FROM {QUALITY_VIEW} WHERE event = ?",
                [name],
            )
        )
        expected = {f.name: int(f.name == bad) for f in SPECS[name].fields}
        assert counts == {**expected, NOT_A_FIELD: 0}
