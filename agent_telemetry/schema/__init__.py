"""The event models: the single source of truth for lines, views and the sink schema.

``EVENTS`` maps each event to its current model (what services emit); ``EVENT_VERSIONS``
maps every ``(event, schema_version)`` to its model, retired versions
(``agent_telemetry.schema.retired``) included: views, lock and compatibility rules are
generated from every version.

Imports nothing heavier than pydantic: services and the emitter depend on it.
"""

from types import MappingProxyType

from agent_telemetry.schema._base import TelemetryEvent, count, flag
from agent_telemetry.schema._compat import (
    COMPAT_RULES,
    Change,
    Classification,
    CompatException,
    CompatOutcome,
    CompatRule,
    ExceptionEntryError,
    apply_exceptions,
    classify,
    compare,
    near_identical,
)
from agent_telemetry.schema._envelope import (
    ENVELOPE_HEAD,
    ENVELOPE_KEYS,
    ENVELOPE_TAIL,
    NOT_A_FIELD,
    REJECTED_EVENT,
    REJECTED_SCHEMA_VERSION,
    RejectReason,
)
from agent_telemetry.schema._errors import SchemaRuleError
from agent_telemetry.schema._lock import (
    LOCK_PATH,
    LockedEvent,
    LockedField,
    LockFormatError,
    SchemaLock,
    build_lock,
    dump_lock,
    load_lock,
    lock_json,
    lock_lines,
    parse_lock,
    read_lock,
)
from agent_telemetry.schema._rules import RULES, Rule, looks_like_identifier, sanitise_column
from agent_telemetry.schema._spec import EventSpec, FieldSpec, event_spec
from agent_telemetry.schema._versions import (
    VERSION_RULES,
    Registry,
    VersionRule,
    VersionRuleError,
    current_models,
    registry_specs,
    version_registry,
)
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

__all__ = [
    "COMPAT_RULES",
    "ENVELOPE_HEAD",
    "ENVELOPE_KEYS",
    "ENVELOPE_TAIL",
    "EVENTS",
    "EVENT_VERSIONS",
    "LOCK_PATH",
    "NOT_A_FIELD",
    "REJECTED_EVENT",
    "REJECTED_SCHEMA_VERSION",
    "RETIRED",
    "RULES",
    "VERSION_RULES",
    "Change",
    "ChatTier",
    "ChatTurn",
    "Classification",
    "CompatException",
    "CompatOutcome",
    "CompatRule",
    "ErrorClass",
    "EventSpec",
    "ExceptionEntryError",
    "FieldSpec",
    "Lane",
    "LockFormatError",
    "LockedEvent",
    "LockedField",
    "PipelineRender",
    "PipelineRun",
    "Probe",
    "Provider",
    "ProviderState",
    "ProviderStatus",
    "Refusal",
    "Registry",
    "RejectReason",
    "RenderLane",
    "Rule",
    "RunReason",
    "RunStatus",
    "RunsToday",
    "SchemaLock",
    "SchemaRuleError",
    "TelemetryEvent",
    "Theme",
    "TokensToday",
    "TurnError",
    "TurnKind",
    "VersionRule",
    "VersionRuleError",
    "apply_exceptions",
    "build_lock",
    "classify",
    "compare",
    "count",
    "current_models",
    "dump_lock",
    "event_spec",
    "flag",
    "load_lock",
    "lock_json",
    "lock_lines",
    "looks_like_identifier",
    "near_identical",
    "parse_lock",
    "read_lock",
    "registry_specs",
    "runs_today_bucket",
    "sanitise_column",
    "tokens_today_bucket",
    "version_registry",
]

EVENT_VERSIONS: MappingProxyType[tuple[str, int], type[TelemetryEvent]] = version_registry(
    EVENTS.values(), RETIRED
)


def catalogue() -> tuple[EventSpec, ...]:
    """Specs of every event's current version, in catalogue order."""
    return tuple(event_spec(model) for model in EVENTS.values())


def version_catalogue() -> tuple[EventSpec, ...]:
    """Specs of every version of every event (retired ones too), in ``EVENT_VERSIONS`` order."""
    return registry_specs(EVENT_VERSIONS)


__all__ += ["catalogue", "version_catalogue"]
