"""The base event model: every subclass is checked against the definition rules."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import (
    CardinalityWaiver,
    DataReview,
    EventSpec,
    Precision,
    build_event_spec,
    event_spec,
)

# The hooks that run the definition rules: a class that redefines one could skip them.
_DEFINITION_HOOKS = ("__init_subclass__", "__pydantic_init_subclass__")


def count(
    ge: int,
    le: int,
    description: str,
    *,
    precision: int | None = None,
    waiver: str | None = None,
) -> Any:
    """An optional, strictly typed, bounded integer field (``None`` when not known).

    ``precision``: significant digits to keep (durations, sizes): the emitter rounds each
    value to it (half away from zero) before writing, and the field's capacity counts
    the values left. A field of more than 16 bits needs one, or a waiver (INT_PRECISION);
    both bounds must be exact at that precision.

    ``waiver``: the reviewed reason a field that wide is needed as it is (more than 16
    bits, or more than 10,000,000 values: INT_CARDINALITY); the lock records it and the
    data dictionary shows it.
    """
    info = cast(FieldInfo, Field(None, ge=ge, le=le, strict=True, description=description))
    # pydantic ignores foreign metadata; the specs read it.
    if precision is not None:
        info.metadata.append(Precision(precision))
    if waiver is not None:
        info.metadata.append(CardinalityWaiver(waiver))
    return info


def flag(description: str) -> Any:
    """An optional, strictly typed boolean field."""
    return Field(None, strict=True, description=description)


class TelemetryEvent(BaseModel):
    """Base of every event. Subclasses set ``event_name`` and ``schema_version``.

    ``reviewed_names`` maps a field name the identifier rule refuses to the reason it
    was reviewed as no identifier (FIELD_NAME_NO_IDENTIFIER); the lock records it and
    ``check`` shows it.

    ``data_reviews`` lists the recorded data reviews of this version's capacity
    (``DataReview``): every growth against the base lock needs a new one that covers it
    (CAPACITY_GROWTH).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=False)

    event_name: ClassVar[str]
    schema_version: ClassVar[int]
    reviewed_names: ClassVar[Mapping[str, str]] = MappingProxyType({})
    data_reviews: ClassVar[tuple[DataReview, ...]] = ()
    __event_spec__: ClassVar[EventSpec | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Python calls the *parent's* __init_subclass__ for each new class, so this runs
        # for every class below TelemetryEvent before its own hooks could take over.
        for hook in _DEFINITION_HOOKS:
            if hook in cls.__dict__:
                raise SchemaRuleError(
                    cls.__name__,
                    None,
                    "MODEL_OVERRIDE",
                    f"{hook}: an event or its base may not replace the definition hooks",
                )
        super().__init_subclass__(**kwargs)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Abstract intermediate bases (no event_name of their own) are not events.
        if "event_name" not in cls.__dict__:
            return
        for rule, field, detail in violations(cls, TelemetryEvent):
            raise SchemaRuleError(cls.__name__, field, rule, detail)
        build_event_spec(cls)

    @classmethod
    def spec(cls) -> EventSpec:
        """The plain description of this event (fields in model order)."""
        return event_spec(cls)
