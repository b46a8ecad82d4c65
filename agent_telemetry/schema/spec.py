"""A plain description of each event and field, read off the pydantic models.

Everything downstream (the emitter's line order, view SQL, the sink schema, the data
dictionary, the schema lock) is generated from these specs, never from the models'
internals directly, so there is one place that knows how a field is typed.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import annotated_types

from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError
from agent_telemetry.schema.grid import Band, grid_bands, on_grid, significant_digits

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo


FieldKind = Literal["enum", "int", "bool"]

# The widest int domain (``le - ge + 1``) a field may have without a reviewed waiver.
# The catalogue's widest is 3,600,001 (milliseconds within an hour); 10,000,000 leaves
# room for, say, milliseconds within two hours, and is far below what a user number,
# phone number or timestamp needs (docs/rules.md, INT_CARDINALITY).
CARDINALITY_BUDGET = 10_000_000
# The largest integer a JSON number keeps exactly: Cloud Logging stores numbers as doubles.
MAX_SAFE_INT = 2**53 - 1


@dataclass(frozen=True, slots=True)
class CardinalityWaiver:
    """``count(..., waiver="why")``: a reviewed reason for an int domain over the budget.

    Kept in the field's metadata (pydantic ignores it); the lock records it and the data
    dictionary shows it.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class Precision:
    """``count(..., precision=N)``: keep ``N`` significant digits of a measurement.

    Kept in the field's metadata (pydantic ignores it). The emitter rounds every value
    to it before writing, and capacity counts the values rounding leaves
    (``schema.capacity``).
    """

    digits: int


@dataclass(frozen=True, slots=True)
class DataReview:
    """A recorded data review: the event version it names may carry up to ``bits`` bits.

    Listed in the event's ``data_reviews``; the lock records each one with the event and
    version it names, ``check`` and the data dictionary show it. A capacity growth
    against the base lock (CAPACITY_GROWTH) clears only with a review that names that
    event and version, whose reference the base lock has on no event yet, and whose
    ``bits`` (one decimal, as ``check`` prints capacities) covers the new capacity: a
    review approves one growth, and a copy (``data_reviews = Other.data_reviews``)
    approves nothing.
    """

    reference: str  # where the review is written down (an issue, a ticket, a document)
    reason: str  # why the event needs to say that much
    bits: float  # the capacity approved, in bits, to one decimal
    event: str  # the event the review approves
    schema_version: int  # the version of that event it approves


class UnsupportedFieldType(AgentTelemetryError):
    """The annotation is not one of the closed set of field types (internal signal)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One event field as the rest of the package sees it."""

    name: str
    kind: FieldKind
    required: bool
    description: str
    members: tuple[str, ...] = ()
    ge: int | None = None
    le: int | None = None
    # Reviewed exceptions, recorded in the lock and shown by ``check`` and the dictionary.
    waiver: str | None = None  # CardinalityWaiver reason (INT_CARDINALITY)
    name_review: str | None = None  # reviewed_names reason (FIELD_NAME_NO_IDENTIFIER)
    precision: int | None = None  # significant digits the emitter keeps (count(precision=))

    @property
    def bigquery_type(self) -> str:
        return {"enum": "STRING", "int": "INTEGER", "bool": "BOOLEAN"}[self.kind]

    def allows(self, value: object) -> bool:
        """Whether ``value`` (as read back from a log line) is inside the field's set or
        bounds, and on its precision's grid (the emitter writes no other value)."""
        if self.kind == "enum":
            return isinstance(value, str) and value in self.members
        if self.kind == "bool":
            return isinstance(value, bool)
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        if self.ge is None or self.le is None or not self.ge <= value <= self.le:
            return False
        return self.precision is None or on_grid(value, self.precision)

    @property
    def grid(self) -> tuple[Band, ...]:
        """The precision's grid over the bounds (``grid.grid_bands``); empty without one."""
        if self.kind != "int" or self.precision is None or self.ge is None or self.le is None:
            return ()
        return grid_bands(self.ge, self.le, self.precision)

    @property
    def domain(self) -> str:
        """Allowed values or bounds, for humans (CLI tables, the data dictionary)."""
        if self.kind == "enum":
            return ", ".join(self.members)
        if self.kind == "int":
            rounded = f", {significant_digits(self.precision)}" if self.precision else ""
            return f"{self.ge:,} .. {self.le:,}{rounded}"
        return "true, false"


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One event: its name, version, description and fields in model order."""

    name: str
    schema_version: int
    description: str
    fields: tuple[FieldSpec, ...]
    reviews: tuple[DataReview, ...] = ()

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.fields)


def unwrap_optional(annotation: Any) -> Any:
    """The X of ``X | None`` / ``Optional[X]``; any other annotation as it is."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0]
        raise UnsupportedFieldType("a union of several types")
    return annotation


def constraints(info: FieldInfo) -> list[Any]:
    """Constraint metadata of a field, whether on the Field or inside ``Annotated[...]``.

    Pydantic keeps ``Field(ge=...)`` in ``info.metadata`` but leaves constraints of an
    ``Optional[Annotated[int, ...]]`` inside the annotation; rules must see both.
    """
    found = list(info.metadata)
    inner = unwrap_optional(info.annotation)
    if typing.get_origin(inner) is typing.Annotated:
        for extra in typing.get_args(inner)[1:]:
            nested = getattr(extra, "metadata", None)
            found.extend(nested if isinstance(nested, list) else [extra])
    return found


def base_type(info: FieldInfo) -> Any:
    inner = unwrap_optional(info.annotation)
    if typing.get_origin(inner) is typing.Annotated:
        return typing.get_args(inner)[0]
    return inner


def _bounds(info: FieldInfo) -> tuple[int | None, int | None]:
    ge: int | None = None
    le: int | None = None
    for item in constraints(info):
        if isinstance(item, annotated_types.Ge):
            ge = int(item.ge)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Le):
            le = int(item.le)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Gt | annotated_types.Lt):
            raise UnsupportedFieldType("an int bounded with gt/lt (use ge and le)")
    return ge, le


def _members(annotation: Any) -> tuple[str, ...] | None:
    """Members of a closed string set, or None if the annotation is not one."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [m.value for m in annotation]
        if all(isinstance(v, str) for v in values):
            return tuple(values)
        raise UnsupportedFieldType("an enum whose values are not all strings")
    if typing.get_origin(annotation) is Literal:
        values = list(typing.get_args(annotation))
        if all(isinstance(v, str) and not isinstance(v, enum.Enum) for v in values):
            return tuple(values)
        raise UnsupportedFieldType("a Literal whose values are not all strings")
    return None


def waiver_of(info: FieldInfo) -> str | None:
    """The reason of the field's ``CardinalityWaiver``, if it has one."""
    for item in constraints(info):
        if isinstance(item, CardinalityWaiver):
            return item.reason
    return None


def precision_of(info: FieldInfo) -> int | None:
    """The digits of the field's ``Precision``, if it has one."""
    for item in constraints(info):
        if isinstance(item, Precision):
            return item.digits
    return None


def describe_field(name: str, info: FieldInfo, name_review: str | None = None) -> FieldSpec:
    """Describe one pydantic field; raises UnsupportedFieldType for types outside the set."""
    inner = base_type(info)
    description = (info.description or "").strip()
    required = info.is_required()
    waiver = waiver_of(info)
    if inner is bool:
        return FieldSpec(
            name, "bool", required, description, waiver=waiver, name_review=name_review
        )
    if inner is int:
        ge, le = _bounds(info)
        return FieldSpec(
            name,
            "int",
            required,
            description,
            ge=ge,
            le=le,
            waiver=waiver,
            name_review=name_review,
            precision=precision_of(info),
        )
    members = _members(inner)
    if members is not None:
        return FieldSpec(
            name,
            "enum",
            required,
            description,
            members=members,
            waiver=waiver,
            name_review=name_review,
        )
    raise UnsupportedFieldType(_type_name(inner))


def _type_name(annotation: Any) -> str:
    if annotation is str:
        return "free str"
    if annotation is float:
        return "float"
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):  # a top-level Optional was unwrapped already
        return "a union inside Annotated (write Optional[Annotated[...]])"
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)} (containers are not allowed)"
    if isinstance(annotation, type):
        return f"{annotation.__name__} (only closed string sets, bounded int and bool)"
    return repr(annotation)


def rules_ran(model: type[BaseModel]) -> bool:
    """Whether the definition rules passed on this very class (its spec is cached)."""
    return model.__dict__.get("__event_spec__") is not None


def event_spec(model: type[BaseModel]) -> EventSpec:
    """The spec of a rule-checked event model.

    Raises ``SchemaRuleError`` (MODEL_OVERRIDE) for a class the definition rules never
    ran on: a base that overrides the definition hook. Everything that uses a model
    (the registry, the emitter) goes through here, so such a class is never used.
    """
    cached: EventSpec | None = model.__dict__.get("__event_spec__")
    if cached is None:
        raise SchemaRuleError(
            model.__name__,
            None,
            "MODEL_OVERRIDE",
            "the definition rules never ran on this class (a base overrides the hook)",
        )
    return cached


def build_event_spec(model: type[BaseModel]) -> EventSpec:
    """Describe a model that has just passed the definition rules, and cache it."""
    # The model is a TelemetryEvent; spec.py takes any pydantic model so that it does not
    # import _base, which imports it (no cycle).
    reviewed: Mapping[str, str] = getattr(model, "reviewed_names", {})
    fields = tuple(describe_field(n, i, reviewed.get(n)) for n, i in model.model_fields.items())
    spec = EventSpec(
        name=getattr(model, "event_name"),  # noqa: B009
        schema_version=getattr(model, "schema_version"),  # noqa: B009
        description=" ".join((model.__doc__ or "").split()),
        fields=fields,
        reviews=tuple(getattr(model, "data_reviews", ())),
    )
    setattr(model, "__event_spec__", spec)  # noqa: B010
    return spec
