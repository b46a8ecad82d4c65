"""The hot path: a validator, built from an event model's own schemas, that returns the
line's record.

``Model.__pydantic_validator__`` builds an instance (every field, unset ones as None)
that the emitter would then copy into a new dict behind the envelope, dropping the
Nones. Instead, this module composes, from the very per-field core schemas and config
pydantic generated for the model, a ``typed-dict`` validator whose output already is
the record: the envelope keys first (as defaults the caller cannot set), then the
given fields in model order, with an optional field left out when its value is None.
An optional field whose value is invalid is left out too, so the validator compares
what came back with what was given and accepts only when nothing else was left out.

It is an accelerator, never the judge: it either returns the exact record the model's
own validator leads to, or raises, and then the caller asks the model (``check``).
A model whose schema holds anything not understood here (validators around the model,
a custom ``__init__``, aliases, defaults other than None, plain non-str enums) gets no
fast record at all. tests/emit/test_fast_record.py pins the agreement on adversarial
input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic_core import SchemaValidator, core_schema

from agent_telemetry.schema import TelemetryEvent

RecordValidator = Callable[[dict[str, Any]], dict[str, Any]]

# Keys a schema may carry without changing what it accepts or returns.
_INERT = frozenset({"type", "schema", "metadata", "ref", "serialization"})
_MODEL_KEYS = _INERT | {"cls", "config", "custom_init", "root_model", "frozen"}
_FIELDS_KEYS = _INERT | {"fields", "model_name", "computed_fields", "extra_behavior"}
_FIELD_KEYS = _INERT | {"frozen", "serialization_alias", "serialization_exclude"}
_DEFAULT_KEYS = _INERT | {"default"}
_NULLABLE_KEYS = _INERT


class _CallerCannotSetThis:
    """No caller holds an instance: an envelope key given as a field always fails."""


_ENVELOPE_ONLY = core_schema.is_instance_schema(_CallerCannotSetThis)
_STR_ONLY = core_schema.is_instance_schema(str)


def _envelope_field(value: object) -> core_schema.TypedDictField:
    return core_schema.typed_dict_field(
        core_schema.with_default_schema(_ENVELOPE_ONLY, default=value), required=False
    )


def _optional_field(schema: Mapping[str, Any]) -> core_schema.TypedDictField | None:
    """``default: None`` around ``nullable: X`` becomes X, left out when None or invalid."""
    if schema.get("type") != "default" or not set(schema) <= _DEFAULT_KEYS:
        return None
    if "default" not in schema or schema["default"] is not None:
        return None
    nullable = schema["schema"]
    if nullable.get("type") != "nullable" or not set(nullable) <= _NULLABLE_KEYS:
        return None
    inner = nullable["schema"]
    if inner.get("type") == "enum" and inner.get("sub_type") == "str":
        # pydantic's enum error for None costs microseconds (measured: ~2.4 us against
        # ~0.1 us for an int field); a cheap isinstance check turns None (and any other
        # non-str, which the model then judges) away first.
        inner = core_schema.chain_schema([_STR_ONLY, inner])
    return core_schema.typed_dict_field(
        core_schema.with_default_schema(inner, on_error="omit"), required=False
    )


def _fields(fields: Mapping[str, Any]) -> dict[str, core_schema.TypedDictField] | None:
    out: dict[str, core_schema.TypedDictField] = {}
    for name, field in fields.items():
        if field.get("type") != "model-field" or not set(field) <= _FIELD_KEYS:
            return None
        schema = field["schema"]
        if schema.get("type") == "default":
            optional = _optional_field(schema)
            if optional is None:
                return None
            out[name] = optional
        else:
            out[name] = core_schema.typed_dict_field(schema, required=True)
    return out


def record_validator(
    model: type[TelemetryEvent], envelope: Mapping[str, object]
) -> RecordValidator | None:
    """A validator from the model's fields to ``{**envelope, **values}``, or None.

    ``envelope``'s keys come first in the output, with its values; the caller replaces
    placeholders (``time``) afterwards. Values that are None are left out. The validator
    raises whenever the model's own validator must decide. None when the model's schema
    is not one this module can reproduce exactly.
    """
    model_schema: Mapping[str, Any] = model.__pydantic_core_schema__
    if model_schema.get("type") != "model" or not set(model_schema) <= _MODEL_KEYS:
        return None
    if model_schema.get("custom_init") or model_schema.get("root_model"):
        return None
    fields_schema = model_schema["schema"]
    if fields_schema.get("type") != "model-fields" or not set(fields_schema) <= _FIELDS_KEYS:
        return None
    config: core_schema.CoreConfig = model_schema.get("config") or core_schema.CoreConfig()
    extra = fields_schema.get("extra_behavior") or config.get("extra_fields_behavior")
    fields = _fields(fields_schema["fields"])
    if extra != "forbid" or fields is None or set(fields) & set(envelope):
        return None
    schema = core_schema.typed_dict_schema(
        {**{key: _envelope_field(value) for key, value in envelope.items()}, **fields},
        extra_behavior="forbid",
        config=config,
    )
    validate_python = SchemaValidator(schema, config).validate_python
    size = len(envelope)

    def validate(given: dict[str, Any]) -> dict[str, Any]:
        record: dict[str, Any] = validate_python(given)
        if len(record) != size + len(given):
            _only_none_left_out(record, given)
        return record

    return validate


def _only_none_left_out(record: dict[str, Any], given: dict[str, Any]) -> None:
    """Raise unless every field given but missing from ``record`` was None.

    The validator leaves out an optional field that is None, which the line omits
    anyway, and one that is invalid, which must be named: so a record shorter than the
    fields given is accepted only when every field left out was None.
    """
    for name, value in given.items():
        if value is not None and name not in record:
            raise LookupError("a field was left out: the model decides")
