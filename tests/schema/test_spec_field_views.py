"""A field as users see it: its domain (the "allowed values" cell of the data dictionary
and of ``agent-telemetry``'s field table), its precision's grid (what the JSON Schema
and the checked views hold a value to) and which values read back from a line it takes."""

from __future__ import annotations

import pytest

from agent_telemetry.schema.grid import Band, grid_bands
from agent_telemetry.schema.spec import FieldKind, FieldSpec


def _field(kind: FieldKind, **keys: object) -> FieldSpec:
    return FieldSpec(name="f", kind=kind, required=True, description="", **keys)  # type: ignore[arg-type]


DURATION = _field("int", ge=0, le=3_600_000, precision=3)


@pytest.mark.parametrize(
    ("spec", "domain"),
    [
        (_field("enum", members=("admin", "premium", "public")), "admin, premium, public"),
        (DURATION, "0 .. 3,600,000, 3 significant digits"),
        (_field("int", ge=0, le=900, precision=1), "0 .. 900, 1 significant digit"),
        (_field("int", ge=-5, le=1200), "-5 .. 1,200"),
        (_field("bool"), "true, false"),
    ],
    ids=["enum", "int rounded", "int one digit", "int exact", "bool"],
)
def test_the_domain_reads_as_the_data_dictionary_shows_it(spec: FieldSpec, domain: str) -> None:
    assert spec.domain == domain


def test_a_rounded_int_has_its_grid_and_nothing_else_has_one() -> None:
    assert DURATION.grid == grid_bands(0, 3_600_000, 3)
    assert DURATION.grid[:2] == (Band(0, 999, 1), Band(1000, 9999, 10))
    for spec in (
        _field("int", ge=0, le=3_600_000),
        _field("int", le=3_600_000, precision=3),
        _field("int", ge=0, precision=3),
        _field("enum", members=("a",), precision=3),
        _field("bool", precision=3),
    ):
        assert spec.grid == (), spec


@pytest.mark.parametrize(
    ("spec", "value", "allowed"),
    [
        (DURATION, 1230, True),
        (DURATION, 1234, False),  # off the grid: the emitter would have rounded it
        (DURATION, 3_600_001, False),
        (DURATION, -1, False),
        (DURATION, True, False),  # a bool is an int to Python, never to a field
        (DURATION, "1230", False),
        (DURATION, 12.0, False),
        (_field("int", ge=0, le=5), 5, True),
        (_field("int", le=5), 3, False),  # unbounded below: no value is known to fit
        (_field("int", ge=0), 3, False),
        (_field("enum", members=("a",)), "a", True),
        (_field("enum", members=("a",)), "b", False),
        (_field("bool"), False, True),
        (_field("bool"), 0, False),
    ],
)
def test_allows_takes_only_what_the_emitter_could_have_written(
    spec: FieldSpec, value: object, allowed: bool
) -> None:
    assert spec.allows(value) is allowed
