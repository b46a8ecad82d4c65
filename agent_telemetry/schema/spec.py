"""A plain description of each event and field, read off the pydantic models.

``describe_field`` reads one pydantic field; ``event_spec`` (in ``agent_telemetry.schema``)
reads a whole event model with it.

Everything downstream (the emitter's line order, view SQL, the sink schema, the data
dictionary, the schema lock) is generated from these specs, never from the models'
internals directly, so there is one place that knows how a field is typed.
"""

from __future__ import annotations

import enum
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import annotated_types

from agent_telemetry.errors import AgentTelemetryError

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

FieldKind = Literal["enum", "int", "bool"]
_KIND_TYPES: dict[FieldKind, str] = {"enum": "STRING", "int": "INTEGER", "bool": "BOOLEAN"}


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

    @property
    def bigquery_type(self) -> str:
        """The sink column type of this field's kind, as BigQuery's JSON schema names it.

        The one place a kind gets a type: the GoogleSQL and DuckDB names the views and the
        warehouse use are derived from it (``agent_telemetry.views.table_field``).
        """
        return _KIND_TYPES[self.kind]

    def allows(self, value: object) -> bool:
        """Whether ``value`` (as read back from a log line) is inside the field's set or bounds."""
        if self.kind == "enum":
            return isinstance(value, str) and value in self.members
        if self.kind == "bool":
            return isinstance(value, bool)
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        return self.ge is not None and self.le is not None and self.ge <= value <= self.le

    @property
    def domain(self) -> str:
        """Allowed values or bounds, for humans (CLI tables, the data dictionary)."""
        if self.kind == "enum":
            return ", ".join(self.members)
        if self.kind == "int":
            return f"{self.ge:,} .. {self.le:,}"
        return "true, false"


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One event: its name, version, description and fields in model order."""

    name: str
    schema_version: int
    description: str
    fields: tuple[FieldSpec, ...]

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.fields)


def unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """Return (inner type, was_optional) for ``X | None`` / ``Optional[X]``."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return args[0], True
        raise UnsupportedFieldType("a union of several types")
    return annotation, False


def constraints(info: FieldInfo) -> list[Any]:
    """Constraint metadata of a field, whether on the Field or inside ``Annotated[...]``.

    Pydantic keeps ``Field(ge=...)`` in ``info.metadata`` but leaves constraints of an
    ``Optional[Annotated[int, ...]]`` inside the annotation; rules must see both.
    """
    found = list(info.metadata)
    inner, _ = unwrap_optional(info.annotation)
    if typing.get_origin(inner) is typing.Annotated:
        for extra in typing.get_args(inner)[1:]:
            nested = getattr(extra, "metadata", None)
            found.extend(nested if isinstance(nested, list) else [extra])
            if getattr(extra, "strict", None) is True:
                found.append(extra)
    return found


def base_type(info: FieldInfo) -> Any:
    inner, _ = unwrap_optional(info.annotation)
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


def describe_field(name: str, info: FieldInfo) -> FieldSpec:
    """Describe one pydantic field; raises UnsupportedFieldType for types outside the set."""
    inner = base_type(info)
    description = (info.description or "").strip()
    required = info.is_required()
    if inner is bool:
        return FieldSpec(name, "bool", required, description)
    if inner is int:
        ge, le = _bounds(info)
        return FieldSpec(name, "int", required, description, ge=ge, le=le)
    members = _members(inner)
    if members is not None:
        return FieldSpec(name, "enum", required, description, members=members)
    raise UnsupportedFieldType(_type_name(inner))


def _type_name(annotation: Any) -> str:
    if annotation is str:
        return "free str"
    if annotation is float:
        return "float"
    origin = typing.get_origin(annotation)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)} (containers are not allowed)"
    if isinstance(annotation, type):
        return f"{annotation.__name__} (only closed string sets, bounded int and bool)"
    return repr(annotation)
