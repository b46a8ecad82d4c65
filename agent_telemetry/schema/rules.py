"""The definition rules every event model obeys, as a table of named checks.

Each rule has a stable ID and a one-line purpose; ``RULES`` is the catalogue that the
docs print and that ``TelemetryEvent`` runs when a subclass is defined. A check returns
None when the model passes, or a short detail saying what is wrong. Details name
fields and rules, never values a service might pass at run time.

The rules take any pydantic model: what they check is whether it is a valid event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agent_telemetry.schema.envelope import RESERVED_FIELD_NAMES
from agent_telemetry.schema.spec import (
    FieldSpec,
    UnsupportedFieldType,
    constraints,
    describe_field,
)

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

# Segments that mark a name as carrying an identifier (docs/design.md, "Field names").
IDENTIFIER_SEGMENTS = frozenset(
    [
        "id",
        "ids",
        "uuid",
        "guid",
        "hash",
        "sha",
        "digest",
        "key",
        "secret",
        "email",
        "ip",
        "fingerprint",
        "password",
        "cookie",
        "jwt",
        "address",
        "session",
    ]
)
MAX_NAME_LENGTH = 64

_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_EVENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_MEMBER = re.compile(r"[a-z0-9_]{1,32}")
_HEX_RUN = re.compile(r"[0-9a-f]{16,}")
_ALNUM_RUN = re.compile(r"[a-z0-9]{16,}")
_UUID = re.compile(r"[0-9a-f]{8}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def sanitise_column(name: str) -> str:
    """The column name a BigQuery log sink gives a payload key."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def looks_like_identifier(text: str) -> bool:
    """Hex or base64-like runs of 16+ characters, uuids and emails look like identifiers.

    A run of letters alone is a word ("internationalisation"), not a token, so the
    base64 test asks for letters and digits mixed.
    """
    lowered = text.lower()
    if _UUID.search(lowered) or _EMAIL.search(text) or _HEX_RUN.search(lowered):
        return True
    return any(
        re.search(r"[a-z]", run) and re.search(r"[0-9]", run) for run in _ALNUM_RUN.findall(lowered)
    )


@dataclass(frozen=True, slots=True)
class FieldContext:
    model: str
    name: str
    info: FieldInfo
    spec: FieldSpec | None  # None when the type itself is outside the closed set


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    scope: Literal["model", "field"]
    purpose: str
    check: Callable[..., str | None]


# --- model rules -------------------------------------------------------------------


def _event_name(model: type[BaseModel]) -> str | None:
    name = getattr(model, "event_name", None)
    if not isinstance(name, str) or not _EVENT_NAME.fullmatch(name):
        return "event_name must be lowercase snake_case, at most 64 characters"
    if name == "telemetry_rejected":
        return "event_name 'telemetry_rejected' is reserved for the emitter"
    return None


def _schema_version(model: type[BaseModel]) -> str | None:
    version = getattr(model, "schema_version", None)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return "schema_version must be an int >= 1"
    return None


def _config(model: type[BaseModel]) -> str | None:
    if model.model_config.get("extra") != "forbid" or not model.model_config.get("frozen"):
        return 'model_config must keep extra="forbid" and frozen=True'
    return None


def _description(model: type[BaseModel]) -> str | None:
    if not (model.__doc__ or "").strip():
        return "the event needs a docstring (it becomes the view description)"
    return None


def _unique_columns(model: type[BaseModel]) -> str | None:
    seen: dict[str, str] = {}
    for name in model.model_fields:
        column = sanitise_column(name)
        if column in seen:
            return f"fields {seen[column]!r} and {name!r} land in the same sink column"
        seen[column] = name
    return None


# --- field rules -------------------------------------------------------------------


def _field_type(ctx: FieldContext) -> str | None:
    try:
        describe_field(ctx.name, ctx.info)
    except UnsupportedFieldType as exc:
        return (
            f"type is {exc.what}; allowed: a closed set of strings (Literal/StrEnum), "
            "int with ge and le, bool, or Optional of one of those"
        )
    return None


def _int_bounded(ctx: FieldContext) -> str | None:
    if ctx.spec and ctx.spec.kind == "int":
        if ctx.spec.ge is None or ctx.spec.le is None:
            return "an int needs both ge and le bounds"
        if ctx.spec.ge > ctx.spec.le:
            return "ge is greater than le"
    return None


def _int_strict(ctx: FieldContext) -> str | None:
    # Lax ints would accept True, 1.0 and "1"; a bool where a count belongs is a bug.
    if ctx.spec and ctx.spec.kind in ("int", "bool"):
        strict = any(getattr(m, "strict", None) is True for m in constraints(ctx.info))
        if not strict:
            return "int and bool fields must be strict (use the Count/Flag helpers)"
    return None


def _optional_default(ctx: FieldContext) -> str | None:
    if not ctx.info.is_required() and ctx.info.default is not None:
        return "an optional field must default to None"
    return None


def _name_format(ctx: FieldContext) -> str | None:
    if len(ctx.name) > MAX_NAME_LENGTH or not _SNAKE_CASE.fullmatch(ctx.name):
        return f"names are lowercase snake_case, at most {MAX_NAME_LENGTH} characters"
    return None


def _name_reserved(ctx: FieldContext) -> str | None:
    if sanitise_column(ctx.name) in RESERVED_FIELD_NAMES:
        return "the name is an envelope key every line already carries"
    return None


def _name_no_identifier(ctx: FieldContext) -> str | None:
    for segment in ctx.name.lower().split("_"):
        if segment in IDENTIFIER_SEGMENTS:
            return f"name segment {segment!r} marks an identifier; telemetry carries none"
    return None


def _description_present(ctx: FieldContext) -> str | None:
    if not (ctx.info.description or "").strip():
        return "every field needs a description (it becomes the column description)"
    return None


def _member_format(ctx: FieldContext) -> str | None:
    if ctx.spec and ctx.spec.kind == "enum":
        if not ctx.spec.members:
            return "a closed set needs at least one member"
        for member in ctx.spec.members:
            if not _MEMBER.fullmatch(member):
                return "members match [a-z0-9_]{1,32}"
        if len(set(ctx.spec.members)) != len(ctx.spec.members):
            return "members are unique"
    return None


def _member_no_identifier(ctx: FieldContext) -> str | None:
    if ctx.spec and ctx.spec.kind == "enum":
        for member in ctx.spec.members:
            if looks_like_identifier(member):
                return "a member looks like an identifier (hex/base64 run, uuid or email)"
    return None


RULES: tuple[Rule, ...] = (
    Rule("EVENT_NAME", "model", "event_name is lowercase snake_case and not reserved", _event_name),
    Rule("EVENT_VERSION", "model", "schema_version is an int >= 1", _schema_version),
    Rule("EVENT_DESCRIPTION", "model", "the event has a docstring", _description),
    Rule("MODEL_CONFIG", "model", 'extra="forbid" and frozen', _config),
    Rule("FIELD_NAME_UNIQUE", "model", "names are unique after sink sanitising", _unique_columns),
    Rule("FIELD_TYPE", "field", "closed string set, bounded int, bool, or Optional", _field_type),
    Rule("INT_BOUNDED", "field", "ints have both ge and le", _int_bounded),
    Rule("FIELD_STRICT", "field", "ints and bools accept no coercion", _int_strict),
    Rule("OPTIONAL_DEFAULT_NONE", "field", "optional fields default to None", _optional_default),
    Rule("FIELD_NAME_FORMAT", "field", "lowercase snake_case, <= 64 characters", _name_format),
    Rule("FIELD_NAME_RESERVED", "field", "no field shadows an envelope key", _name_reserved),
    Rule("FIELD_NAME_NO_IDENTIFIER", "field", "no identifier segment", _name_no_identifier),
    Rule("FIELD_DESCRIPTION", "field", "every field has a description", _description_present),
    Rule("ENUM_MEMBER_FORMAT", "field", "members match [a-z0-9_]{1,32}", _member_format),
    Rule(
        "ENUM_MEMBER_NO_IDENTIFIER",
        "field",
        "no member looks like an identifier",
        _member_no_identifier,
    ),
)


def violations(model: type[BaseModel]) -> Iterator[tuple[str, str | None, str]]:
    """Yield (rule id, field or None, detail) for every rule the model breaks."""
    for rule in RULES:
        if rule.scope == "model":
            detail = rule.check(model)
            if detail:
                yield rule.id, None, detail
    for name, info in model.model_fields.items():
        try:
            spec: FieldSpec | None = describe_field(name, info)
        except UnsupportedFieldType:
            spec = None
        ctx = FieldContext(model.__name__, name, info, spec)
        for rule in RULES:
            if rule.scope == "field":
                detail = rule.check(ctx)
                if detail:
                    yield rule.id, name, detail
