"""The definition rules every event model obeys, as a table of named checks.

Each rule has a stable ID and a one-line purpose; ``RULES`` is the catalogue that
docs/rules.md prints and that ``TelemetryEvent`` runs when a subclass is defined: the
first rule in table order that the model breaks (at its first field, for field rules)
is raised. A check returns None when the model passes, or a short detail saying what
is wrong. Details name fields and rules, never values a service might pass at run time.

Two views of a model are checked: the annotation (``spec.describe_field``: what the
lock, views and emitter read) and what pydantic will actually run
(``coreschema``: validators, serializers, custom types); they must agree.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agent_telemetry.schema.capacity import (
    EVENT_BUDGET_BITS,
    MAX_MEMBERS,
    MAX_PRECISION,
    PRECISION_REQUIRED_BITS,
    event_capacity,
    is_exact,
    rounded_values,
    show_bits,
    tenths,
)
from agent_telemetry.schema.coreschema import (
    ModelSchema,
    Problem,
    field_problems,
    is_code,
    read_model,
)
from agent_telemetry.schema.envelope import RESERVED_FIELD_NAMES
from agent_telemetry.schema.grid import significant_digits
from agent_telemetry.schema.identifiers import identifier_word
from agent_telemetry.schema.spec import (
    CARDINALITY_BUDGET,
    MAX_SAFE_INT,
    DataReview,
    EventSpec,
    FieldSpec,
    UnsupportedFieldType,
    describe_field,
    precision_of,
    waiver_of,
)
from agent_telemetry.schema.sql_keywords import BIGQUERY_RESERVED_KEYWORDS

MAX_NAME_LENGTH = 64

_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
_EVENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_MEMBER = re.compile(r"[a-z0-9_]{1,32}")
_HEX_RUN = re.compile(r"[0-9a-f]{16,}")
_ALNUM_RUN = re.compile(r"[a-z0-9]{16,}")
_UUID = re.compile(r"[0-9a-f]{8}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{4}[-_]?[0-9a-f]{12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_NUMERIC_GROUPS = re.compile(r"[0-9]+(?:[._][0-9]+){2,}")
_WORD_OR_NUMBER = re.compile(r"[a-z]+|[0-9]+")
MAX_SCHEMA_VERSION = 999


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


def looks_numbered(text: str) -> str | None:
    """What makes ``text`` read as a number that names someone, or None.

    Six or more digits in all (a phone number, a user number: ``4155550123``,
    ``u000001``); three or more numeric groups joined by dots or underscores (an IP
    address, a dotted phone number: ``10_0_0_1``); or a number of four or more digits
    beside a word (a numbered member: ``user_12345``). Buckets such as ``2_5``,
    ``90_100`` and ``41_plus`` pass; so do years alone (``2026``).
    """
    if sum(c.isdigit() for c in text) >= 6:
        return "6 or more digits"
    if _NUMERIC_GROUPS.search(text):
        return "3 or more numeric groups joined by dots or underscores"
    parts = _WORD_OR_NUMBER.findall(text.lower())
    if any(p.isdigit() and len(p) >= 4 for p in parts) and any(p.isalpha() for p in parts):
        return "a number of 4 or more digits beside a word"
    return None


def name_token(name: str) -> str | None:
    """Why a name (of an event or a field) reads as carrying a value, or None: a uuid, a
    run of 16+ letters and digits mixed (hex or base64: a hash nearly always has a
    digit; a run of letters alone is a long word), or a number that names someone
    (``looks_numbered``)."""
    lowered = name.lower()
    runs = _ALNUM_RUN.findall(lowered) + [m.group() for m in _UUID.finditer(lowered)]
    if any(re.search(r"[a-z]", run) and re.search(r"[0-9]", run) for run in runs):
        return "a hex or base64-like run"
    return looks_numbered(name)


@dataclass(frozen=True, slots=True)
class ModelContext:
    model: type[BaseModel]
    base: type[BaseModel]  # TelemetryEvent, passed in: rules.py does not import _base (no cycle)
    schema: ModelSchema  # what pydantic runs around the fields


@dataclass(frozen=True, slots=True)
class FieldContext:
    model: str
    name: str
    info: FieldInfo
    spec: FieldSpec | None  # None when the type itself is outside the closed set
    problems: tuple[Problem, ...]  # what pydantic runs for this field, outside the whitelist
    reviewed: str | None  # the event's reviewed_names reason for this name, if any


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    scope: Literal["model", "field"]
    purpose: str
    check: Callable[..., str | None]


def _problem(rule: str) -> Callable[[Any], str | None]:
    """A check that reports the first core-schema problem filed under ``rule``."""

    def check(ctx: ModelContext | FieldContext) -> str | None:
        problems = ctx.problems if isinstance(ctx, FieldContext) else ctx.schema.problems
        return next((p.detail for p in problems if p.rule == rule), None)

    return check


# --- model rules -------------------------------------------------------------------


def _event_name(ctx: ModelContext) -> str | None:
    name = getattr(ctx.model, "event_name", None)
    if not isinstance(name, str) or not _EVENT_NAME.fullmatch(name):
        return "event_name must be lowercase snake_case, at most 64 characters"
    if name == "telemetry_rejected":
        return "event_name 'telemetry_rejected' is reserved for the emitter"
    return None


def _event_name_no_identifier(ctx: ModelContext) -> str | None:
    name = getattr(ctx.model, "event_name", "")
    word = identifier_word(name)
    if word is not None:
        return f"event_name holds the identifier word {word!r}; an event name is a kind of line"
    token = name_token(name)
    if token is not None:
        return f"event_name holds {token}; an event name is a kind of line"
    return None


def _schema_version(ctx: ModelContext) -> str | None:
    version = getattr(ctx.model, "schema_version", None)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return "schema_version must be an int >= 1"
    if version > MAX_SCHEMA_VERSION:
        return (
            f"schema_version must be at most {MAX_SCHEMA_VERSION}: a version counts reviewed "
            "changes; a larger number could name someone"
        )
    return None


def _config(ctx: ModelContext) -> str | None:
    # Any other setting changes what pydantic accepts or dumps (strict, aliases,
    # use_enum_values, defer_build, ...): the base's config is the only one reviewed.
    config = {k: v for k, v in ctx.model.model_config.items() if k != "title"}
    if config != dict(ctx.base.model_config):
        return 'model_config must stay the base\'s (extra="forbid", frozen=True, nothing else)'
    return None


def _description(ctx: ModelContext) -> str | None:
    if not (ctx.model.__doc__ or "").strip():
        return "the event needs a docstring (it becomes the view description)"
    return None


def _unique_columns(ctx: ModelContext) -> str | None:
    seen: dict[str, str] = {}
    for name in ctx.model.model_fields:
        column = sanitise_column(name)
        if column in seen:
            return f"fields {seen[column]!r} and {name!r} land in the same sink column"
        seen[column] = name
    return None


# Class-dict entries Python and pydantic put on every model; they are not the author's.
_MODEL_INTERNALS = frozenset({"__signature__", "__weakref__", "__dict__"})


def _own_code(ctx: ModelContext) -> Iterator[tuple[type, str]]:
    """(class, name) of every function, property or descriptor the event or a base of
    its own (anything between it and TelemetryEvent, mixins too) defines."""
    base = set(ctx.base.__mro__)
    for klass in ctx.model.__mro__:
        if klass in base:
            continue
        for name, value in vars(klass).items():
            if name in _MODEL_INTERNALS or not is_code(value):
                continue
            if name == "__hash__" and getattr(value, "__module__", "").startswith("pydantic."):
                continue  # pydantic's hash of a frozen model
            yield klass, name


def _overrides(ctx: ModelContext) -> str | None:
    if type(ctx.model) is not type(ctx.base):
        # A metaclass's __call__ runs on every instance, past every field's validation.
        return f"metaclass {type(ctx.model).__name__}: an event's class is pydantic's own"
    for klass, name in _own_code(ctx):
        where = "" if klass is ctx.model else f" (in {klass.__name__})"
        return f"{name}{where}: an event defines no methods, properties or hooks"
    return None


def _reviewed_names(ctx: ModelContext) -> str | None:
    reviewed = getattr(ctx.model, "reviewed_names", {})
    if not isinstance(reviewed, Mapping):
        return "reviewed_names maps field names to the reason each was reviewed"
    for name, reason in reviewed.items():
        if name not in ctx.model.model_fields:
            return f"reviewed_names lists {name!r}, which is not a field"
        if not isinstance(reason, str) or not reason.strip():
            return f"reviewed_names[{name!r}] needs the reason it was reviewed"
        if identifier_word(name) is None:
            return f"reviewed_names lists {name!r}, which needs no review; remove it"
    return None


_REVIEW_FORM = "DataReview(reference=..., reason=..., bits=..., event=..., schema_version=...)"


def _data_reviews(ctx: ModelContext) -> str | None:
    reviews = getattr(ctx.model, "data_reviews", ())
    if not isinstance(reviews, tuple):
        return f"data_reviews is a tuple of {_REVIEW_FORM}"
    for review in reviews:
        if not isinstance(review, DataReview):
            return f"data_reviews holds only {_REVIEW_FORM}"
        for part in ("reference", "reason", "event"):
            text = getattr(review, part)
            if not isinstance(text, str) or not text.strip():
                return f"a data review needs its {part}"
        version = review.schema_version
        if isinstance(version, bool) or not isinstance(version, int):
            return "a data review names the schema_version it approves"
        bits = review.bits
        if isinstance(bits, bool) or not isinstance(bits, int | float):
            return "a data review's bits is a number of bits, to one decimal"
        if not 0.1 <= bits <= EVENT_BUDGET_BITS or abs(bits * 10 - round(bits * 10)) > 1e-6:
            return (
                f"a data review approves from 0.1 to {EVENT_BUDGET_BITS} bits, to one "
                "decimal, as check prints capacities"
            )
    return None


def _specs_of(ctx: ModelContext) -> EventSpec | None:
    """The event's spec when every field describes cleanly, else None (field rules say why)."""
    try:
        fields = tuple(describe_field(n, i) for n, i in ctx.model.model_fields.items())
    except UnsupportedFieldType:
        return None
    for field in fields:
        if field.kind == "int" and (field.ge is None or field.le is None or field.ge > field.le):
            return None
        if field.precision is not None and not _precision_ok(field):
            return None
    name = getattr(ctx.model, "event_name", "")
    version = getattr(ctx.model, "schema_version", 1)
    return EventSpec(name, version, "", fields)


def _event_capacity(ctx: ModelContext) -> str | None:
    spec = _specs_of(ctx)
    if spec is None:
        return None
    capacity = event_capacity(spec)
    if capacity.within_budget:
        return None
    widest = ", ".join(f"{f.name} ({f.bits})" for f in capacity.widest())
    return (
        f"{spec.name} can say {capacity.bits} bits per line, over the budget of "
        f"{EVENT_BUDGET_BITS}; the fields that carry the most: {widest}. Bucket or round "
        "them, or split the event"
    )


# --- field rules -------------------------------------------------------------------


def _is_pydantic_own(item: object) -> bool:
    module = item.__module__ if isinstance(item, type) else type(item).__module__
    return module == "pydantic" or module.startswith("pydantic.")


def _annotation_parts(info: FieldInfo) -> Iterator[object]:
    """Every type and metadata object in the field's annotation, nested ones included."""
    stack: list[object] = [info.annotation, *info.metadata]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, FieldInfo):
            stack.extend(item.metadata)
        else:
            stack.extend(typing.get_args(item))
            stack.extend(getattr(item, "__metadata__", ()))


# What makes a class or marker a custom type (the second is pydantic v1's spelling).
_SCHEMA_HOOKS = ("__get_pydantic_core_schema__", "__get_validators__")


def _custom_type(ctx: FieldContext) -> str | None:
    from pydantic import BaseModel

    for item in _annotation_parts(ctx.info):
        hooks = [h for h in _SCHEMA_HOOKS if hasattr(item, h)]
        if not hooks or _is_pydantic_own(item):
            continue  # pydantic's own markers: their schema is read by the rules below
        if isinstance(item, type) and issubclass(item, BaseModel):
            continue  # a nested model: FIELD_TYPE
        name = item.__name__ if isinstance(item, type) else type(item).__name__
        return f"{name} defines {hooks[0]}: a custom type decides what is stored"
    return None


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


def _bounds(ctx: FieldContext) -> tuple[int, int] | None:
    spec = ctx.spec
    if spec is None or spec.kind != "int" or spec.ge is None or spec.le is None:
        return None
    return spec.ge, spec.le


def _int_safe(ctx: FieldContext) -> str | None:
    bounds = _bounds(ctx)
    if bounds is not None and (bounds[0] < -MAX_SAFE_INT or bounds[1] > MAX_SAFE_INT):
        return (
            "bounds must lie within +-(2**53 - 1): Cloud Logging keeps JSON numbers as "
            "doubles, so a larger int arrives changed"
        )
    return None


def _precision_ok(spec: FieldSpec) -> bool:
    digits = spec.precision
    if isinstance(digits, bool) or not isinstance(digits, int):
        return False
    if not 1 <= digits <= MAX_PRECISION or spec.ge is None or spec.le is None:
        return False
    return is_exact(spec.ge, digits) and is_exact(spec.le, digits)


def _int_values(ctx: FieldContext) -> int | None:
    """How many values a bounded int field can write (after a valid precision's rounding)."""
    bounds = _bounds(ctx)
    if bounds is None or bounds[0] > bounds[1] or ctx.spec is None:
        return None
    digits = ctx.spec.precision if _precision_ok(ctx.spec) else None
    return rounded_values(bounds[0], bounds[1], digits)


def _int_cardinality(ctx: FieldContext) -> str | None:
    waiver = waiver_of(ctx.info)
    if waiver is not None and (not isinstance(waiver, str) or not waiver.strip()):
        return "the cardinality waiver needs the reason it was reviewed"
    if ctx.spec is not None and ctx.spec.kind == "bool" and waiver is not None:
        return "a cardinality waiver belongs on a bounded int (count(..., waiver=...))"
    values = _int_values(ctx)
    if values is not None and values > CARDINALITY_BUDGET and waiver is None:
        return (
            f"{values:,} possible values exceed the budget of {CARDINALITY_BUDGET:,}: a "
            'domain that wide can carry a user number; narrow it, or add count(..., waiver="why")'
        )
    return None


def _int_precision(ctx: FieldContext) -> str | None:
    spec = ctx.spec
    digits = precision_of(ctx.info)
    if spec is None:
        return None
    if digits is not None and spec.kind != "int":
        return "a precision belongs on a bounded int (count(..., precision=N))"
    if digits is not None:
        if isinstance(digits, bool) or not isinstance(digits, int):
            return f"precision is a number of significant digits, 1 to {MAX_PRECISION}"
        if not 1 <= digits <= MAX_PRECISION:
            return f"precision is a number of significant digits, 1 to {MAX_PRECISION}"
        bounds = _bounds(ctx)
        if bounds is not None and not (is_exact(bounds[0], digits) and is_exact(bounds[1], digits)):
            return (
                f"both bounds must be exact at {significant_digits(digits)}, so that rounding "
                "never leaves them"
            )
    values = _int_values(ctx)
    if values is None:
        return None
    values += 0 if spec.required else 1
    waived = waiver_of(ctx.info) is not None
    if values > 2**PRECISION_REQUIRED_BITS and not waived:
        return (
            f"{show_bits(tenths(values))} bits: an int of more than {PRECISION_REQUIRED_BITS} "
            "bits is a measurement; keep the digits its analysis needs "
            '(count(..., precision=3)), or add count(..., waiver="why")'
        )
    if values <= 2**PRECISION_REQUIRED_BITS and waived:
        return f"the field is within {PRECISION_REQUIRED_BITS} bits: remove the waiver"
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


def _name_keyword(ctx: FieldContext) -> str | None:
    if ctx.name in BIGQUERY_RESERVED_KEYWORDS:
        return "the name is a BigQuery reserved keyword: every query would have to quote it"
    return None


def _name_no_identifier(ctx: FieldContext) -> str | None:
    word = identifier_word(ctx.name)
    if word is None or (isinstance(ctx.reviewed, str) and ctx.reviewed.strip()):
        return None
    return (
        f"the name holds the identifier word {word!r}; telemetry carries none. Rename it, "
        "or, if it is no identifier, list it in the event's reviewed_names with a reason"
    )


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


def _member_number(ctx: FieldContext) -> str | None:
    if ctx.spec and ctx.spec.kind == "enum":
        for member in ctx.spec.members:
            why = looks_numbered(member)
            if why is not None:
                return f"a member holds {why}: it reads as a phone number, an address or a user"
    return None


def _enum_size(ctx: FieldContext) -> str | None:
    if not ctx.spec or ctx.spec.kind != "enum":
        return None
    size = len(ctx.spec.members)
    waived = waiver_of(ctx.info) is not None
    if size > MAX_MEMBERS and not waived:
        return (
            f"{size:,} members: a closed set of more than {MAX_MEMBERS} can name users one "
            'by one; bucket it, or add a reviewed Annotated[..., CardinalityWaiver("why")]'
        )
    if size <= MAX_MEMBERS and waived:
        return f"the set has at most {MAX_MEMBERS} members: remove the waiver"
    return None


def _name_no_token(ctx: FieldContext) -> str | None:
    token = name_token(ctx.name)
    if token is None:
        return None
    return f"the name holds {token}; a field name is a column, not a value"


# Table order is report order: the first rule a model breaks is the one raised, so the
# rules about what pydantic runs come before the ones about the declared type they
# would otherwise be mistaken for (a PlainValidator is FIELD_VALIDATOR, not FIELD_TYPE).
RULES: tuple[Rule, ...] = (
    Rule("EVENT_NAME", "model", "event_name is lowercase snake_case and not reserved", _event_name),
    Rule(
        "EVENT_NAME_NO_IDENTIFIER",
        "model",
        "no identifier word, hex run or long number in the event name",
        _event_name_no_identifier,
    ),
    Rule("EVENT_VERSION", "model", "schema_version is an int from 1 to 999", _schema_version),
    Rule("EVENT_DESCRIPTION", "model", "the event has a docstring", _description),
    Rule("MODEL_CONFIG", "model", 'model_config is the base\'s: extra="forbid", frozen', _config),
    Rule(
        "MODEL_SCHEMA",
        "model",
        "pydantic builds a plain model schema (no root model, nothing unknown)",
        _problem("MODEL_SCHEMA"),
    ),
    Rule("FIELD_NAME_UNIQUE", "model", "names are unique after sink sanitising", _unique_columns),
    Rule(
        "FIELD_CUSTOM_TYPE",
        "field",
        "no type or marker with its own __get_pydantic_core_schema__",
        _custom_type,
    ),
    Rule(
        "FIELD_VALIDATOR",
        "field",
        "no validator of any mode on a field, no default_factory",
        _problem("FIELD_VALIDATOR"),
    ),
    Rule("FIELD_SERIALIZER", "field", "no serializer on a field", _problem("FIELD_SERIALIZER")),
    Rule("FIELD_TYPE", "field", "closed string set, bounded int, bool, or Optional", _field_type),
    Rule(
        "ENUM_PLAIN",
        "field",
        "enums are plain StrEnums: no _missing_, __new__, __init__ or methods",
        _problem("ENUM_PLAIN"),
    ),
    Rule(
        "FIELD_CORE_SCHEMA",
        "field",
        "pydantic runs exactly the declared set or bounds, nothing else",
        _problem("FIELD_CORE_SCHEMA"),
    ),
    Rule("INT_BOUNDED", "field", "ints have both ge and le", _int_bounded),
    Rule("INT_SAFE_RANGE", "field", "int bounds lie within +-(2**53 - 1)", _int_safe),
    Rule(
        "INT_CARDINALITY",
        "field",
        "an int domain over 10,000,000 values needs a reviewed waiver",
        _int_cardinality,
    ),
    Rule(
        "INT_PRECISION",
        "field",
        "an int of more than 16 bits declares a precision (or a reviewed waiver)",
        _int_precision,
    ),
    Rule("FIELD_STRICT", "field", "ints and bools accept no coercion", _problem("FIELD_STRICT")),
    Rule("OPTIONAL_DEFAULT_NONE", "field", "optional fields default to None", _optional_default),
    Rule("FIELD_NAME_FORMAT", "field", "lowercase snake_case, <= 64 characters", _name_format),
    Rule("FIELD_NAME_RESERVED", "field", "no field shadows an envelope key", _name_reserved),
    Rule(
        "FIELD_NAME_NO_IDENTIFIER",
        "field",
        "no identifier word in the name, glued or not",
        _name_no_identifier,
    ),
    Rule(
        "FIELD_NAME_NO_TOKEN",
        "field",
        "no hex run, uuid or long number in a field name",
        _name_no_token,
    ),
    Rule(
        "FIELD_NAME_KEYWORD",
        "field",
        "no field is named a BigQuery reserved keyword",
        _name_keyword,
    ),
    Rule("FIELD_DESCRIPTION", "field", "every field has a description", _description_present),
    Rule("ENUM_MEMBER_FORMAT", "field", "members match [a-z0-9_]{1,32}", _member_format),
    Rule(
        "ENUM_SIZE",
        "field",
        "a closed set has at most 64 members (or a reviewed waiver)",
        _enum_size,
    ),
    Rule(
        "ENUM_MEMBER_NO_IDENTIFIER",
        "field",
        "no member looks like an identifier",
        _member_no_identifier,
    ),
    Rule(
        "ENUM_MEMBER_NUMBER",
        "field",
        "no member reads as a phone number, an address or a numbered user",
        _member_number,
    ),
    Rule(
        "MODEL_VALIDATOR",
        "model",
        "no model_validator, model_post_init or custom __init__",
        _problem("MODEL_VALIDATOR"),
    ),
    Rule("MODEL_SERIALIZER", "model", "no model_serializer", _problem("MODEL_SERIALIZER")),
    Rule("COMPUTED_FIELD", "model", "no computed_field", _problem("COMPUTED_FIELD")),
    Rule(
        "MODEL_OVERRIDE",
        "model",
        "no methods, properties, hooks or metaclass (model_dump, __pydantic_init_subclass__, ...)",
        _overrides,
    ),
    Rule(
        "NAME_REVIEWED",
        "model",
        "reviewed_names lists only fields the identifier rule refuses, each with a reason",
        _reviewed_names,
    ),
    Rule(
        "DATA_REVIEW",
        "model",
        "data_reviews holds DataReview entries, each with a reference, a reason and bits",
        _data_reviews,
    ),
    Rule(
        "EVENT_CAPACITY",
        "model",
        "an event version can say at most 64 bits per line",
        _event_capacity,
    ),
)
RULE_IDS: frozenset[str] = frozenset(rule.id for rule in RULES)


def _field_contexts(model: type[BaseModel], schema: ModelSchema) -> list[FieldContext]:
    reviewed = getattr(model, "reviewed_names", {})
    reviewed = reviewed if isinstance(reviewed, Mapping) else {}
    contexts = []
    for name, info in model.model_fields.items():
        try:
            spec: FieldSpec | None = describe_field(name, info)
        except UnsupportedFieldType:
            spec = None
        field = schema.fields.get(name)
        if field is None:
            problems: tuple[Problem, ...] = (
                Problem("FIELD_CORE_SCHEMA", "pydantic has no schema for this field"),
            )
        else:
            problems = field_problems(field, schema.reader, spec)
        reason = reviewed.get(name)
        contexts.append(FieldContext(model.__name__, name, info, spec, problems, reason))
    return contexts


def violations(
    model: type[BaseModel], base: type[BaseModel]
) -> Iterator[tuple[str, str | None, str]]:
    """Yield (rule id, field or None, detail) for every rule the model breaks, in
    ``RULES`` order (each field rule over the fields in model order). ``base`` is
    TelemetryEvent: its config is the only one allowed, its methods are not the event's."""
    schema = read_model(model)
    model_ctx = ModelContext(model, base, schema)
    fields = _field_contexts(model, schema)
    for rule in RULES:
        if rule.scope == "model":
            detail = rule.check(model_ctx)
            if detail:
                yield rule.id, None, detail
            continue
        for ctx in fields:
            detail = rule.check(ctx)
            if detail:
                yield rule.id, ctx.name, detail
