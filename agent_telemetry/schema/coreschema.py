"""What pydantic will actually run for an event model: its core schema, read against a
whitelist.

An annotation can look closed (``ChatTier``) while pydantic runs something else
(``Annotated[ChatTier, PlainValidator(lambda v: v)]`` stores any input). So the rules
read ``Model.__pydantic_core_schema__`` (pydantic-core's dict shapes: ``model`` ->
``model-fields`` -> each ``model-field``'s ``schema``; ``default`` and ``nullable``
wrappers; ``function-before/after/wrap/plain`` validators; a ``serialization`` key on
any schema; ``definitions`` / ``definition-ref``) and allow only:

- around the model: ``definitions``, ``model``, ``model-fields``, with no validator,
  serializer, computed field, post-init hook or custom ``__init__``;
- per field: ``default`` (no factory) -> ``nullable`` -> one leaf: ``literal`` of
  strings, ``enum`` of a plain ``StrEnum``, ``int`` with ``ge`` and ``le``, ``bool``;
  each leaf exactly the set or bounds the annotation declares (``FieldSpec``), so
  what the lock, the views and the emitter's re-check read is what pydantic enforces.

Every other schema, and every key this module does not know, is a problem: a new
pydantic feature is refused until someone reviews it here. The emitter also uses
``field_problems`` to decide whether its hot path may reproduce a field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_telemetry.schema.spec import FieldSpec

Schema = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing outside the whitelist: the rule it breaks and what it is."""

    rule: str
    detail: str


# Keys each allowed schema may carry. ``metadata`` holds JSON-schema hints only, and
# ``ref`` names a schema for ``definition-ref``; neither changes what is accepted.
_LEAF_KEYS: dict[str, frozenset[str]] = {
    "literal": frozenset({"type", "expected", "metadata", "ref"}),
    "enum": frozenset({"type", "cls", "members", "sub_type", "strict", "metadata", "ref"}),
    "int": frozenset({"type", "ge", "le", "strict", "metadata", "ref"}),
    "bool": frozenset({"type", "strict", "metadata", "ref"}),
}
_DEFAULT_KEYS = frozenset({"type", "schema", "default", "metadata", "ref"})
_NULLABLE_KEYS = frozenset({"type", "schema", "metadata", "ref"})
_MODEL_FIELD_KEYS = frozenset({"type", "schema", "metadata", "frozen"})
_MODEL_KEYS = frozenset(
    {"type", "cls", "config", "custom_init", "root_model", "schema", "metadata", "ref"}
)
_FIELDS_KEYS = frozenset(
    {"type", "fields", "model_name", "computed_fields", "extra_behavior", "metadata", "ref"}
)
# Keys a leaf may not carry, and the rule that refuses them.
_CODE_KEYS = {"serialization": "FIELD_SERIALIZER", "default_factory": "FIELD_VALIDATOR"}


def _is_function(schema: Schema) -> bool:
    return str(schema.get("type", "")).startswith("function-")


class SchemaReader:
    """Resolves ``definition-ref`` against the model's ``definitions``."""

    def __init__(self, definitions: Mapping[str, Schema]) -> None:
        self.definitions = definitions

    def resolve(self, schema: Schema) -> Schema | None:
        seen: set[str] = set()
        while schema.get("type") == "definition-ref":
            ref = schema.get("schema_ref")
            if not isinstance(ref, str) or ref in seen or ref not in self.definitions:
                return None
            seen.add(ref)
            schema = self.definitions[ref]
        return schema


@dataclass(frozen=True, slots=True)
class ModelSchema:
    """The model's schema, unwrapped: problems around the model and each field's schema."""

    problems: tuple[Problem, ...]
    fields: Mapping[str, Schema]
    reader: SchemaReader


def _unwrap_functions(
    schema: Schema, reader: SchemaReader, where: str
) -> Iterator[Problem | Schema]:
    """Yield a MODEL_VALIDATOR problem per validator wrapped around ``schema``, then the
    schema inside (if any)."""
    node: Schema | None = reader.resolve(schema)
    while node is not None and _is_function(node):
        yield Problem("MODEL_VALIDATOR", f"a {node['type']} validator around the {where}")
        inner = node.get("schema")
        node = reader.resolve(inner) if isinstance(inner, Mapping) else None
    if node is not None:
        yield node


def read_model(model: type[Any]) -> ModelSchema:
    """Read the model's core schema down to its fields."""
    empty = SchemaReader({})
    if not getattr(model, "__pydantic_complete__", False):
        problem = Problem("MODEL_SCHEMA", "pydantic could not build the schema (unresolved type?)")
        return ModelSchema((problem,), {}, empty)
    top: Schema = model.__pydantic_core_schema__
    definitions: dict[str, Schema] = {}
    if top.get("type") == "definitions":
        for item in top.get("definitions", ()):
            definitions[item.get("ref")] = item
        top = top["schema"]
    reader = SchemaReader(definitions)
    problems: list[Problem] = []
    node: Schema | None = None
    for item in _unwrap_functions(top, reader, "model"):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            node = item
    if node is None or node.get("type") != "model" or node.get("cls") is not model:
        problems.append(Problem("MODEL_SCHEMA", "the schema is not this model's own"))
        return ModelSchema(tuple(problems), {}, reader)
    problems.extend(_model_node(node))
    fields_node: Schema | None = None
    for item in _unwrap_functions(node["schema"], reader, "fields"):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            fields_node = item
    if fields_node is None or fields_node.get("type") != "model-fields":
        problems.append(Problem("MODEL_SCHEMA", "the model has no plain field list"))
        return ModelSchema(tuple(problems), {}, reader)
    problems.extend(_fields_node(fields_node))
    return ModelSchema(tuple(problems), dict(fields_node.get("fields", {})), reader)


def _model_node(node: Schema) -> Iterator[Problem]:
    if "serialization" in node:
        yield Problem("MODEL_SERIALIZER", "a model_serializer decides what the event dumps")
    if node.get("post_init"):
        yield Problem("MODEL_VALIDATOR", "model_post_init runs after validation")
    if node.get("custom_init"):
        yield Problem("MODEL_VALIDATOR", "a custom __init__ runs on every instance")
    if node.get("root_model"):
        yield Problem("MODEL_SCHEMA", "a RootModel is not an event")
    extra = set(node) - _MODEL_KEYS - {"serialization", "post_init"}
    if extra:
        yield Problem("MODEL_SCHEMA", f"the model schema carries {', '.join(sorted(extra))}")


def _fields_node(node: Schema) -> Iterator[Problem]:
    if "serialization" in node:
        yield Problem("MODEL_SERIALIZER", "a serializer around the fields")
    computed = node.get("computed_fields") or ()
    if computed:
        names = ", ".join(str(c.get("property_name")) for c in computed)
        yield Problem("COMPUTED_FIELD", f"computed field(s) {names} are dumped beside the fields")
    extra = set(node) - _FIELDS_KEYS - {"serialization"}
    if extra:
        yield Problem("MODEL_SCHEMA", f"the field list carries {', '.join(sorted(extra))}")


def field_problems(
    field: Schema, reader: SchemaReader, spec: FieldSpec | None
) -> tuple[Problem, ...]:
    """Problems of one ``model-field`` schema, checked against its ``FieldSpec`` (None
    when the annotation is already outside the closed set: the shape is still read)."""
    problems: list[Problem] = []
    extra = set(field) - _MODEL_FIELD_KEYS
    if extra:
        # aliases, exclude=True, ...: the line must carry the field under its own name
        carries = ", ".join(sorted(extra))
        problems.append(Problem("FIELD_CORE_SCHEMA", f"the field carries {carries}"))
    top = field.get("schema")
    if isinstance(top, Mapping):
        problems.extend(_walk(top, reader, spec, ("default", "nullable", "leaf"), None))
    else:
        problems.append(Problem("FIELD_CORE_SCHEMA", "the field has no schema"))
    return tuple(problems)


def _walk(
    raw: Schema,
    reader: SchemaReader,
    spec: FieldSpec | None,
    allowed: tuple[str, ...],
    parent: str | None,
) -> Iterator[Problem]:
    if raw.get("type") == "definition-ref":
        # A ref carries keys of its own: a serializer on a shared enum lands there.
        for key, rule in _CODE_KEYS.items():
            if key in raw:
                yield Problem(rule, f"a {key.replace('_', ' ')} on a definition-ref")
        yield from _keys(raw, {"type", "schema_ref", "metadata"} | set(_CODE_KEYS))
    node = reader.resolve(raw)
    if node is None:
        yield Problem("FIELD_CORE_SCHEMA", "a definition-ref that resolves to nothing")
        return
    kind = str(node.get("type"))
    for key, rule in _CODE_KEYS.items():
        if key in node:
            yield Problem(rule, f"a {key.replace('_', ' ')} on the {kind} schema")
    if _is_function(node):
        yield Problem("FIELD_VALIDATOR", f"a {kind} validator")
        inner = node.get("schema")
        if isinstance(inner, Mapping):
            yield from _walk(inner, reader, spec, allowed, parent)
        return
    where = f" inside {parent}" if parent else ""
    if kind == "default":
        if "default" in allowed:
            yield from _keys(node, _DEFAULT_KEYS | set(_CODE_KEYS) | {"default_factory_takes_data"})
            if spec is not None and spec.required:
                yield Problem("FIELD_CORE_SCHEMA", "a default on a field declared required")
            yield from _walk(node["schema"], reader, spec, ("nullable", "leaf"), kind)
            return
    elif kind == "nullable":
        if "nullable" in allowed:
            yield from _keys(node, _NULLABLE_KEYS | set(_CODE_KEYS))
            yield from _walk(node["schema"], reader, spec, ("leaf",), kind)
            return
    elif kind in _LEAF_KEYS:
        yield from _keys(node, _LEAF_KEYS[kind] | set(_CODE_KEYS) | {"missing"})
        if spec is not None and "default" in allowed and not spec.required:
            yield Problem("FIELD_CORE_SCHEMA", "no default on a field declared optional")
        yield from _leaf(node, kind, spec)
        return
    else:
        yield Problem("FIELD_CORE_SCHEMA", f"pydantic runs a {kind!r} schema{where}")
        return
    yield Problem("FIELD_CORE_SCHEMA", f"a {kind} schema{where}")


def _keys(node: Schema, allowed: frozenset[str] | set[str]) -> Iterator[Problem]:
    extra = set(node) - allowed
    if extra:
        kind = node.get("type")
        yield Problem("FIELD_CORE_SCHEMA", f"the {kind} schema carries {', '.join(sorted(extra))}")


def _leaf(node: Schema, kind: str, spec: FieldSpec | None) -> Iterator[Problem]:
    declared = None if spec is None else spec.kind
    if kind in ("int", "bool") and node.get("strict") is not True:
        yield Problem("FIELD_STRICT", f"the {kind} schema is lax (accepts True, 1.0, '1')")
    if kind == "enum":
        if "missing" in node:
            yield Problem("ENUM_PLAIN", "the enum schema calls a _missing_ hook")
        if node.get("sub_type") != "str":
            yield Problem("ENUM_PLAIN", "the enum is not a StrEnum")
        cls = node.get("cls")
        hook = enum_problem(cls) if isinstance(cls, type) else "the enum schema has no class"
        if hook:
            yield Problem("ENUM_PLAIN", hook)
    if spec is None:
        return
    runs = {"literal": "enum", "enum": "enum", "int": "int", "bool": "bool"}[kind]
    if runs != declared:
        yield Problem("FIELD_CORE_SCHEMA", f"pydantic runs a {kind} schema for a {declared} field")
        return
    if kind == "literal":
        expected = node.get("expected", ())
        if not all(type(v) is str for v in expected) or tuple(expected) != spec.members:
            yield Problem("FIELD_CORE_SCHEMA", "the literal's values are not the declared set")
    elif kind == "enum":
        members = node.get("members", ())
        values = tuple(getattr(m, "value", None) for m in members)
        if values != spec.members:
            yield Problem("FIELD_CORE_SCHEMA", "the enum schema's members are not the declared set")
    elif kind == "int" and (node.get("ge"), node.get("le")) != (spec.ge, spec.le):
        yield Problem("FIELD_CORE_SCHEMA", "the int schema's bounds are not the declared ones")


class _Plain(StrEnum):
    """The reference: what a plain StrEnum's class dict holds besides its members."""

    X = "x"


_STRENUM_BASES = frozenset(StrEnum.__mro__)


def is_code(value: object) -> bool:
    """Functions, methods, properties and other descriptors; not classes or plain data."""
    if isinstance(value, type):
        return False
    return callable(value) or hasattr(value, "__get__")


def enum_problem(cls: type) -> str | None:
    """None for a plain StrEnum; otherwise what makes it more than a closed set of strings.

    Plain: a ``StrEnum`` whose classes (and any base of its own) define nothing but
    members: no ``_missing_`` (it turns any input into a member), ``__new__``,
    ``__init__``, ``__eq__``, ``__hash__``, method or property; each member's value is
    a ``str``, and the member is that very string.
    """
    if not issubclass(cls, StrEnum):
        return f"{cls.__name__} is not a StrEnum"
    reference = vars(_Plain)
    for klass in cls.__mro__:
        if klass in _STRENUM_BASES:
            continue
        members = set(getattr(klass, "_member_map_", {}))
        for name, value in vars(klass).items():
            if name in members or (name in reference and reference[name] is value):
                continue
            if is_code(value) or name in ("_missing_", "__new__", "__init__"):
                return f"{cls.__name__} defines {name}; an event enum is a plain StrEnum"
    for member in cls:
        value = member._value_
        if type(value) is not str or str.__str__(member) != value:
            return f"{cls.__name__}.{member.name} is not a plain string member"
    return None
