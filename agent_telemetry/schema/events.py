"""The event catalogue, schema_version 1 (docs/design.md, "The event catalogue").

Enum types are StrEnums so services can write ``Lane.PUBLIC`` or plain ``"public"``.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema._base import TelemetryEvent, count, flag
from agent_telemetry.schema.buckets import RunsToday, TokensToday
from agent_telemetry.schema.spec import DataReview

MS_PER_HOUR = 3_600_000
# Significant digits kept of a duration: a timing rounds to within 0.5%, which keeps a
# p50, p95 or max within 1% and brings pipeline_run under the 64-bit budget
# (docs/design.md, "Capacity").
TIMING_PRECISION = 3


class Lane(StrEnum):
    PUBLIC = "public"
    ADMIN = "admin"
    PREMIUM = "premium"


class RunStatus(StrEnum):
    OK = "ok"
    NEEDS_ATTENTION = "needs_attention"
    FAILED = "failed"
    NOT_READY = "not_ready"


class RunReason(StrEnum):
    VALIDATION = "validation"
    RENDER = "render"
    DEADLINE = "deadline"
    BUDGET = "budget"
    ERROR = "error"
    BUSY = "busy"
    CAPACITY = "capacity"
    NO_DATASET = "no_dataset"
    INCOMPLETE_BINDINGS = "incomplete_bindings"
    STALLED = "stalled"


class ErrorClass(StrEnum):
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    MODEL_OVERLOADED = "model_overloaded"
    RENDERER_UNAVAILABLE = "renderer_unavailable"
    RENDER_BUSY = "render_busy"
    VALIDATION = "validation"
    UPSTREAM = "upstream"
    CANCELLED = "cancelled"
    OTHER = "other"


class Provider(StrEnum):
    ANTHROPIC = "anthropic"
    VERTEX = "vertex"
    OPENAI = "openai"
    OLLAMA = "ollama"
    OTHER = "other"


class PipelineRun(TelemetryEvent):
    """One line when a pipeline run ends, including failed and not-ready runs."""

    event_name: ClassVar[str] = "pipeline_run"
    schema_version: ClassVar[int] = 1

    lane: Lane = Field(description="Queue lane the run used.")
    status: RunStatus = Field(description="Outcome of the run.")
    reason: RunReason | None = Field(None, description="Why the run was not ok.")
    error_class: ErrorClass | None = Field(
        None, description="Innermost error of a failed run, mapped to a closed class."
    )
    queue_wait_ms: int | None = count(
        0, MS_PER_HOUR, "Milliseconds from enqueue to start.", precision=TIMING_PRECISION
    )
    queue_position: int | None = count(
        0, 60, "Position in the lane's queue on enqueue; 0 = started at once."
    )
    user_runs_today: RunsToday | None = Field(
        None, description="This run's ordinal among the caller's runs this UTC day, bucketed."
    )
    user_tokens_today: TokensToday | None = Field(
        None,
        description=(
            "Caller's weighted tokens today as a share of the public daily budget "
            "(for every tier), bucketed."
        ),
    )
    attempts: int | None = count(0, 2, "Retry attempts the run made.")
    duration_ms: int | None = count(
        0, MS_PER_HOUR, "Run wall time in milliseconds.", precision=TIMING_PRECISION
    )
    model_calls: int | None = count(0, 200, "Model calls the run made.")
    provider: Provider | None = Field(
        None, description="Model-provider lane the run used (as in provider_status)."
    )
    # The catalogue's first data review: issue 30 let a run say it was reaped silent
    # (reason stalled) and which provider lane it used, for the lane_health view. Issue
    # 36 counted the whole line (a rejected value per field, the unknown_fields flag):
    # the same lines as before, now counted at what they can say.
    data_reviews: ClassVar[tuple[DataReview, ...]] = (
        DataReview(
            reference="issue 30",
            reason=(
                "a run reaped after its heartbeat went silent (reason stalled) and the "
                "provider lane it used (the closed provider_status set), so a lane that "
                "looks busy but finishes nothing can be told from a busy one"
            ),
            bits=58.4,
            event="pipeline_run",
            schema_version=1,
        ),
        DataReview(
            reference="issue 36",
            reason=(
                "the whole line counted: each field's rejected state (named in "
                "invalid_fields) and the unknown_fields flag; no new field"
            ),
            bits=61.3,
            event="pipeline_run",
            schema_version=1,
        ),
    )


class ChatTier(StrEnum):
    PUBLIC = "public"
    ADMIN = "admin"


class TurnKind(StrEnum):
    TEXT = "text"
    ACTION = "action"


class Refusal(StrEnum):
    OUT_OF_SCOPE = "out_of_scope"
    BUDGET = "budget"
    UNSUPPORTED_CONTENT = "unsupported_content"
    RUN_LIMIT = "run_limit"
    STRIKE = "strike"
    CAPACITY = "capacity"


class TurnError(StrEnum):
    CAPACITY = "capacity"
    BUSY = "busy"
    DEADLINE = "deadline"
    GUARD_UNAVAILABLE = "guard_unavailable"
    UPSTREAM = "upstream"
    RUN_LIMIT = "run_limit"
    INTERNAL = "internal"


class ChatTurn(TelemetryEvent):
    """One line per chat turn."""

    event_name: ClassVar[str] = "chat_turn"
    schema_version: ClassVar[int] = 1

    tier: ChatTier = Field(description="Tier of the caller.")
    kind: TurnKind = Field(description="Whether the turn answered in text or took an action.")
    refusal: Refusal | None = Field(None, description="Why the turn was refused, if it was.")
    error: TurnError | None = Field(None, description="Error class of a turn that failed.")
    duration_ms: int | None = count(
        0, MS_PER_HOUR, "Turn wall time in milliseconds.", precision=TIMING_PRECISION
    )
    model_calls: int | None = count(0, 200, "Model calls the turn made.")
    pipeline_runs: int | None = count(0, 60, "Pipeline runs the turn started.")


class Theme(StrEnum):
    LIGHT = "light"
    DARK = "dark"


class RenderLane(StrEnum):
    RUN = "run"
    TOGGLE = "toggle"


class PipelineRender(TelemetryEvent):
    """One line per render."""

    event_name: ClassVar[str] = "pipeline_render"
    schema_version: ClassVar[int] = 1

    theme: Theme = Field(description="Theme rendered.")
    render_lane: RenderLane = Field(
        description="Render lane: part of a pipeline run, or a theme toggle."
    )
    slot_wait_ms: int | None = count(
        0, 120_000, "Milliseconds waited for a render slot.", precision=TIMING_PRECISION
    )
    render_ms: int | None = count(
        0, 600_000, "Render wall time in milliseconds.", precision=TIMING_PRECISION
    )
    passed: bool | None = flag("Whether the rendered output passed its checks.")
    attempt: int | None = count(1, 2, "Which attempt this render was (1 or 2).")


class ProviderState(StrEnum):
    LIVE = "live"
    RATE_LIMITED = "rate_limited"
    NO_QUOTA = "no_quota"
    UNREACHABLE = "unreachable"


class Probe(StrEnum):
    PREFLIGHT = "preflight"
    TURN_OUTCOME = "turn_outcome"


class ProviderStatus(TelemetryEvent):
    """One line when a model-provider lane's state is learned or changes.

    A 429 that holds a slot must look different from a slot doing work.
    """

    event_name: ClassVar[str] = "provider_status"
    schema_version: ClassVar[int] = 1

    provider: Provider = Field(description="Model provider of the lane.")
    state: ProviderState = Field(description="State of the provider lane.")
    probe: Probe = Field(
        description="How the state was learned: a preflight probe or a turn's outcome."
    )
    retry_after_s: int | None = count(
        0, 86_400, "Seconds the provider asked to wait before retrying.", precision=TIMING_PRECISION
    )
    blocked_runs: int | None = count(0, 60, "Runs blocked waiting on this provider lane.")


EVENTS: MappingProxyType[str, type[TelemetryEvent]] = MappingProxyType(
    {model.event_name: model for model in (PipelineRun, ChatTurn, PipelineRender, ProviderStatus)}
)
