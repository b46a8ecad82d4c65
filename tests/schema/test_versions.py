"""The registry of every event version: current models plus the retired ones."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pydantic import Field

from agent_telemetry.schema import (
    EVENT_VERSIONS,
    EVENTS,
    RETIRED,
    ChatTurn,
    PipelineRender,
    PipelineRun,
    SchemaRuleError,
    TelemetryEvent,
    count,
    event_spec,
    version_catalogue,
)
from agent_telemetry.schema.versions import (
    VERSION_RULES,
    VersionRuleError,
    current_models,
    registry_specs,
    version_registry,
)
from tests.schema.copies import copy_model, models_with


def test_the_package_registry_is_the_current_models_plus_the_retired_ones() -> None:
    assert set(EVENT_VERSIONS.values()) == {*EVENTS.values(), *RETIRED}
    assert current_models(EVENT_VERSIONS) == dict(EVENTS)
    for (name, version), model in EVENT_VERSIONS.items():
        assert (model.event_name, model.schema_version) == (name, version)
    assert version_catalogue() == tuple(event_spec(m) for m in EVENT_VERSIONS.values())


def test_the_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        EVENT_VERSIONS[("pipeline_run", 9)] = PipelineRun  # type: ignore[index]


def test_versions_follow_the_catalogue_order_then_ascend() -> None:
    v3 = copy_model(PipelineRun, version=3)
    chat_v2 = copy_model(ChatTurn, version=2)
    retired = (ChatTurn, PipelineRun, copy_model(PipelineRun, version=2))
    registry = version_registry((v3, chat_v2, PipelineRender), retired=retired)
    assert list(registry) == [
        ("pipeline_run", 1),
        ("pipeline_run", 2),
        ("pipeline_run", 3),
        ("chat_turn", 1),
        ("chat_turn", 2),
        ("pipeline_render", 1),
    ]
    assert current_models(registry) == {
        "pipeline_run": v3,
        "chat_turn": chat_v2,
        "pipeline_render": PipelineRender,
    }
    assert [s.schema_version for s in registry_specs(registry)] == [1, 2, 3, 1, 2, 1]


class Orphan(TelemetryEvent):
    """A retired version of an event nobody emits any more."""

    event_name: ClassVar[str] = "orphan_event"
    schema_version: ClassVar[int] = 1

    wait_ms: int | None = count(0, 10, "Milliseconds.")


V2 = copy_model(PipelineRun, version=2)


@pytest.mark.parametrize(
    ("current", "retired", "rule"),
    [
        (PipelineRun, (Orphan,), "VERSION_RETIRED_EVENT"),
        (PipelineRun, (V2,), "VERSION_RETIRED_OLDER"),
        (PipelineRun, (copy_model(PipelineRun),), "VERSION_RETIRED_OLDER"),
        (V2, (PipelineRun, copy_model(PipelineRun)), "VERSION_UNIQUE"),
    ],
    ids=["unknown event", "newer", "same as current", "same version twice"],
)
def test_a_retired_model_that_does_not_fit_fails_with_its_rule(
    current: type[TelemetryEvent], retired: tuple[type[TelemetryEvent], ...], rule: str
) -> None:
    with pytest.raises(VersionRuleError) as info:
        version_registry(models_with(current).values(), retired=retired)
    assert info.value.rule == rule
    assert info.value.model_class is retired[-1]
    assert isinstance(info.value, SchemaRuleError)  # `check` reports it as a definition rule
    assert rule in str(info.value)


def test_every_version_rule_has_a_purpose() -> None:
    assert {r.id for r in VERSION_RULES} == {
        "VERSION_RETIRED_EVENT",
        "VERSION_RETIRED_OLDER",
        "VERSION_UNIQUE",
    }
    assert all(r.purpose for r in VERSION_RULES)


def test_a_retired_class_goes_through_the_definition_rules() -> None:
    with pytest.raises(SchemaRuleError, match="FIELD_NAME_NO_IDENTIFIER"):

        class PipelineRunV1(TelemetryEvent):
            """Version 1, kept for its view."""

            event_name: ClassVar[str] = "pipeline_run"
            schema_version: ClassVar[int] = 1

            user_id: int | None = Field(None, ge=0, le=9, strict=True, description="Who.")
