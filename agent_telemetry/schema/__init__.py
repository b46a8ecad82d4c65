"""The event models: the single source of truth for lines, views and the sink schema.

Imports nothing heavier than pydantic: services and the emitter depend on it.
"""

from agent_telemetry.schema._base import TelemetryEvent, count, flag
from agent_telemetry.schema._errors import SchemaRuleError
from agent_telemetry.schema._rules import RULES, Rule, looks_like_identifier, sanitise_column
from agent_telemetry.schema._spec import EventSpec, FieldSpec, event_spec
from agent_telemetry.schema.buckets import (
    RunsToday,
    TokensToday,
    runs_today_bucket,
    tokens_today_bucket,
)
from agent_telemetry.schema.events import (
    EVENTS,
    ChatTier,
    ChatTurn,
    ErrorClass,
    Lane,
    PipelineRender,
    PipelineRun,
    Probe,
    Provider,
    ProviderState,
    ProviderStatus,
    Refusal,
    RenderLane,
    RunReason,
    RunStatus,
    Theme,
    TurnError,
    TurnKind,
)

__all__ = [
    "EVENTS",
    "RULES",
    "ChatTier",
    "ChatTurn",
    "ErrorClass",
    "EventSpec",
    "FieldSpec",
    "Lane",
    "PipelineRender",
    "PipelineRun",
    "Probe",
    "Provider",
    "ProviderState",
    "ProviderStatus",
    "Refusal",
    "RenderLane",
    "Rule",
    "RunReason",
    "RunStatus",
    "RunsToday",
    "SchemaRuleError",
    "TelemetryEvent",
    "Theme",
    "TokensToday",
    "TurnError",
    "TurnKind",
    "count",
    "event_spec",
    "flag",
    "looks_like_identifier",
    "runs_today_bucket",
    "sanitise_column",
    "tokens_today_bucket",
]


def catalogue() -> tuple[EventSpec, ...]:
    """Specs of every event, in catalogue order."""
    return tuple(event_spec(model) for model in EVENTS.values())


__all__ += ["catalogue"]
