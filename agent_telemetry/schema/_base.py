"""The base event model: every subclass is checked against the definition rules."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema.rules import violations
from agent_telemetry.schema.spec import EventSpec, event_spec


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
