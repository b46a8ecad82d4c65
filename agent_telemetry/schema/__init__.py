"""The event models: the single source of truth for lines, views and the sink schema.

``EVENTS`` maps each event to its current model (what services emit); ``EVENT_VERSIONS``
maps every ``(event, schema_version)`` to its model, retired versions
(``agent_telemetry.schema.retired``) included: views, lock and compatibility rules are
generated from every version.

This face holds what a service author needs to define and emit events. Tooling lives
in public submodules: ``schema.lock`` (the schema lock), ``schema.compat`` (compatibility
rules), ``schema.rules`` (definition rules), ``schema.coreschema`` (what pydantic runs,
read against the rules' whitelist), ``schema.identifiers`` (the identifier words of field
names), ``schema.versions`` (the version registry), ``schema.envelope`` (the envelope
every line carries) and ``schema.spec``.

Imports nothing heavier than pydantic: services and the emitter depend on it.
"""

from types import MappingProxyType

# Imported first, on purpose: importing a submodule sets the package attribute of its
# name, and ``catalogue`` below is the (older, public) function. Loaded here, the module
# is in sys.modules before the function is defined, so later imports of
# ``agent_telemetry.schema.catalogue`` find it there and leave the function in place.
import agent_telemetry.schema.catalogue as _catalogue_module  # noqa: F401
from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema._base import TelemetryEvent, count, flag
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
from agent_telemetry.schema.retired import RETIRED
from agent_telemetry.schema.spec import DataReview, EventSpec, FieldSpec, event_spec
from agent_telemetry.schema.versions import registry_specs, version_registry

EVENT_VERSIONS: MappingProxyType[tuple[str, int], type[TelemetryEvent]] = version_registry(
    EVENTS.values(), RETIRED
)


def catalogue() -> tuple[EventSpec, ...]:
    """Specs of every event's current version, in catalogue order."""
    return tuple(event_spec(model) for model in EVENTS.values())


def version_catalogue() -> tuple[EventSpec, ...]:
    """Specs of every version of every event (retired ones too), in ``EVENT_VERSIONS`` order."""
    return registry_specs(EVENT_VERSIONS)


__all__ = [
    "EVENTS",
    "EVENT_VERSIONS",
    "RETIRED",
    "ChatTier",
    "ChatTurn",
    "DataReview",
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
    "RunReason",
    "RunStatus",
    "RunsToday",
    "SchemaRuleError",
    "TelemetryEvent",
    "Theme",
    "TokensToday",
    "TurnError",
    "TurnKind",
    "catalogue",
    "count",
    "event_spec",
    "flag",
    "runs_today_bucket",
    "tokens_today_bucket",
    "version_catalogue",
]
