"""The base event model: every subclass is checked against the definition rules.

``event_spec`` lives here, beside the class whose attributes it reads: ``spec`` and
``rules`` describe and check plain pydantic models and never need this module.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import EventSpec, describe_field


def count(ge: int, le: int, description: str) -> Any:
    """An optional, strictly typed, bounded integer field (``None`` when not known)."""
    return Field(None, ge=ge, le=le, strict=True, description=description)


def flag(description: str) -> Any:
    """An optional, strictly typed boolean field."""
    return Field(None, strict=True, description=description)


class TelemetryEvent(BaseModel):
    """Base of every event. Subclasses set ``event_name`` and ``schema_version``."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=False)

    event_name: ClassVar[str]
    schema_version: ClassVar[int]
    __event_spec__: ClassVar[EventSpec | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Abstract intermediate bases (no event_name of their own) are not events.
        if "event_name" not in cls.__dict__:
            return
        for rule, field, detail in violations(cls):
            raise SchemaRuleError(cls.__name__, field, rule, detail)
        event_spec(cls)

    @classmethod
    def spec(cls) -> EventSpec:
        """The plain description of this event (fields in model order)."""
        return event_spec(cls)


def event_spec(model: type[TelemetryEvent]) -> EventSpec:
    """The spec of a (rule-checked) event model."""
    cached: EventSpec | None = model.__dict__.get("__event_spec__")
    if cached is not None:
        return cached
    fields = tuple(describe_field(n, i) for n, i in model.model_fields.items())
    spec = EventSpec(
        name=model.event_name,
        schema_version=model.schema_version,
        description=" ".join((model.__doc__ or "").split()),
        fields=fields,
    )
    model.__event_spec__ = spec
    return spec
