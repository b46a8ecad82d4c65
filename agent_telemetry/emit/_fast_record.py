"""The hot path: one validator, checking every field against its ``FieldSpec``, that
returns the line's record.

``Model.__pydantic_validator__`` builds an instance (every field, unset ones as None)
that the emitter would then copy into a new dict behind the envelope, dropping the
Nones. Instead, this module composes a ``typed-dict`` validator whose output already is
the record: the envelope keys first (as defaults the caller cannot set), then the
given fields in model order, with an optional field left out when its value is None.
An optional field whose value is invalid is left out too, so the validator compares
what came back with what was given and accepts only when nothing else was left out.

Each field's validator is built from the field's ``FieldSpec`` alone: a ``literal`` of
its members (which returns the member's own exact ``str``), a strict ``int`` within its
``ge``/``le``, a strict ``bool``. That is the emitter's re-check of every value against
the field's set or bounds (``_guard`` on the careful path) done inside the one call the
hot path makes anyway, so it costs nothing per line; it reads neither the model's
validators nor its enum classes, so patching either after definition changes nothing
here. (The same check as a Python loop after the call measured +1.8 us per
pipeline_run line, 0.57x of a structlog line against the 0.50x budget.)

It is an accelerator, never the judge: it either returns the record the model's own
validator leads to, or raises, and then the caller asks the model (``check``). So it
exists only for a model whose core schema passes the definition rules' whitelist
(``schema.coreschema``: no validator, serializer or hooked enum, each field exactly its
``FieldSpec``'s set or bounds), where the spec's validators accept what the model's
accept, or less (a ``literal`` refuses a plain ``Enum`` member the model's enum schema
would take: the model then decides). Anything else (a model built around the class
hook, aliases, defaults other than None, plain non-str enums, an int without both
bounds) always takes the careful path. tests/emit/test_fast_record.py pins the
agreement on adversarial input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic_core import CoreSchema, SchemaValidator, core_schema

from agent_telemetry.schema import FieldSpec, TelemetryEvent, event_spec
from agent_telemetry.schema.capacity import round_significant, step_table
from agent_telemetry.schema.coreschema import field_problems, read_model

RecordValidator = Callable[[dict[str, Any]], dict[str, Any]]


class _CallerCannotSetThis:
    """No caller holds an instance: an envelope key given as a field always fails."""


_ENVELOPE_ONLY = core_schema.is_instance_schema(_CallerCannotSetThis)
_STR_ONLY = core_schema.is_instance_schema(str)


def _envelope_field(value: object) -> core_schema.TypedDictField:
    return core_schema.typed_dict_field(
        core_schema.with_default_schema(_ENVELOPE_ONLY, default=value), required=False
    )


def _domain(spec: FieldSpec) -> CoreSchema:
    """The field's set or bounds as a validator."""
    if spec.kind == "enum":
        return core_schema.literal_schema(list(spec.members))
    if spec.kind == "int":
        return core_schema.int_schema(ge=spec.ge, le=spec.le, strict=True)
    return core_schema.bool_schema(strict=True)


def _field(spec: FieldSpec) -> core_schema.TypedDictField:
    domain = _domain(spec)
    if spec.required:
        return core_schema.typed_dict_field(domain, required=True)
    if spec.kind == "enum":
        # A literal's error for None (the commonest optional value) is slow to build; a
        # cheap isinstance check turns None (and any other non-str) away first.
        domain = core_schema.chain_schema([_STR_ONLY, domain])
    # Left out when None (the line omits it) or invalid (then the length check raises).
    return core_schema.typed_dict_field(
        core_schema.with_default_schema(domain, on_error="omit"), required=False
    )


def _whitelisted(model: type[TelemetryEvent]) -> bool:
    """Whether the model's config and core schema are exactly what the definition rules
    allow (a config option such as str_to_lower would change what the model accepts)."""
    config = {k: v for k, v in model.model_config.items() if k != "title"}
    if config != dict(TelemetryEvent.model_config):
        return False
    try:
        spec = event_spec(model)
        read = read_model(model)
    except Exception:
        return False
    if read.problems or list(read.fields) != list(spec.field_names):
        return False
    return not any(field_problems(read.fields[f.name], read.reader, f) for f in spec.fields)


def record_validator(
    model: type[TelemetryEvent], envelope: Mapping[str, object]
) -> RecordValidator | None:
    """A validator from the model's fields to ``{**envelope, **values}``, or None.

    ``envelope``'s keys come first in the output, with its values; the caller replaces
    placeholders (``time``) afterwards. Values that are None are left out; enum values
    are the member's exact ``str``. The validator raises whenever the model's own
    validator must decide. None when the model's schema is not one the field specs
    reproduce exactly.
    """
    if not _whitelisted(model):
        return None
    spec = event_spec(model)
    if set(spec.field_names) & set(envelope):
        return None
    # An int without both bounds (only a model past the rules has one) has no value
    # inside its domain (``_guard``), but an unbounded int schema would take any: the
    # model and the re-check decide such a model's lines.
    if any(f.kind == "int" and (f.ge is None or f.le is None) for f in spec.fields):
        return None
    fields = {f.name: _field(f) for f in spec.fields}
    schema = core_schema.typed_dict_schema(
        {**{key: _envelope_field(value) for key, value in envelope.items()}, **fields},
        # Unknown keys are dropped, not refused: the record is then shorter than the
        # fields given, and ``_only_none_left_out`` sends the call to the model (which
        # counts them). "forbid" finds them too, at ~0.3 us a line (measured).
        extra_behavior="ignore",
    )
    validate_python = SchemaValidator(schema).validate_python
    size = len(envelope)
    names = frozenset(spec.field_names)
    # Fields with a precision, rounded after validation. A value below 10**digits has
    # no more digits than that and is written as is; above it, a bit-length step table
    # and one comparison replace counting digits. Inline rather than a call per field
    # (measured: the call cost more than the rounding).
    unsigned = tuple(
        (f.name, 10**f.precision, step_table(f.precision))
        for f in spec.fields
        if f.precision is not None and f.ge is not None and f.ge >= 0
    )
    signed = tuple(
        (f.name, f.precision)
        for f in spec.fields
        if f.precision is not None and (f.ge is None or f.ge < 0)
    )

    def validate(given: dict[str, Any]) -> dict[str, Any]:
        record: dict[str, Any] = validate_python(given)
        if len(record) != size + len(given):
            _only_none_left_out(record, given, names)
        for name, below, steps in unsigned:
            value = record.get(name, 0)  # absent (None given): nothing to round
            if value >= below:
                top, half_low, low, half_high, high = steps[value.bit_length()]
                if value < top:
                    record[name] = (value + half_low) // low * low
                else:
                    record[name] = (value + half_high) // high * high
        for name, digits in signed:
            if name in record:
                record[name] = round_significant(record[name], digits)
        return record

    return validate


def _only_none_left_out(
    record: dict[str, Any], given: dict[str, Any], names: frozenset[str]
) -> None:
    """Raise unless every key given but missing from ``record`` is a field given None.

    The validator leaves out an optional field that is None, which the line omits
    anyway, one that is invalid, which must be named, and an unknown key, which must be
    counted: so a record shorter than the fields given is accepted only when every key
    left out is one of the model's fields (an exact ``str``: a subclass could compare
    equal to one) whose value was None.
    """
    for name, value in given.items():
        if name not in record and (value is not None or type(name) is not str or name not in names):
            raise LookupError("a field was left out: the model decides")
