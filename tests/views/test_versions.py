"""One view per event version: version 1 keeps the event's name, version N is <event>_vN.

The views are generated from a spec set passed in (a bumped PipelineRun as copies), never
from an edited package.
"""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import Field

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, PipelineRun, event_spec
from agent_telemetry.schema.versions import registry_specs
from agent_telemetry.views import (
    LANE_VIEW,
    QUALITY_VIEW,
    ViewBuildError,
    binding_violations,
    generate_views,
    view_name,
)
from agent_telemetry.views._sink import payload_fields
from tests.schema.copies import copy_model, registry_with
from tests.schema.test_compat import LaneWithoutPremium

V2 = copy_model(
    PipelineRun,
    version=2,
    drop=("attempts",),
    replace={"lane": (LaneWithoutPremium, Field(description="Queue lane the run used."))},
)
SPECS: tuple[EventSpec, ...] = registry_specs(registry_with(V2, retired=(PipelineRun,)))


def test_version_one_keeps_the_event_name() -> None:
    assert view_name("pipeline_run", 1) == "pipeline_run"
    assert view_name("pipeline_run", 2) == "pipeline_run_v2"
    assert view_name("chat_turn", 12) == "chat_turn_v12"


@pytest.mark.parametrize("layout", ["partitioned", "sharded", "analytics"])
def test_a_bumped_event_has_a_view_per_version_each_bound_to_its_own_fields(
    config: DeploymentConfig, layout: Layout
) -> None:
    views = {v.name: v for v in generate_views(config, layout, SPECS)}
    assert list(views) == [
        "pipeline_run",
        "pipeline_run_v2",
        "chat_turn",
        "pipeline_render",
        "provider_status",
        QUALITY_VIEW,
        LANE_VIEW,
    ]
    # lane_health reads the newest version's view
    assert views[LANE_VIEW].reads == ("pipeline_run_v2", "provider_status")
    v1, v2 = views["pipeline_run"], views["pipeline_run_v2"]
    assert (v1.event, v1.schema_version, v1.labels["schema-version"]) == ("pipeline_run", 1, "1")
    assert (v2.event, v2.schema_version, v2.labels["schema-version"]) == ("pipeline_run", 2, "2")
    assert v1.query.rstrip().endswith("lines.schema_version = 1")
    assert v2.query.rstrip().endswith("lines.schema_version = 2")
    assert "attempts" in {c.name for c in v1.columns} - {c.name for c in v2.columns}
    spec_v1, spec_v2 = SPECS[0], SPECS[1]
    assert binding_violations(v1.ddl, spec_v1, layout, v1.name, SPECS) == []
    assert binding_violations(v2.ddl, spec_v2, layout, v2.name, SPECS) == []
    # Each view is held to its own version: v1's view is not a valid v2 view.
    wrong = binding_violations(v1.ddl, spec_v2, layout, v1.name, SPECS)
    assert [p.column for p in wrong] == ["attempts"]


def test_a_retired_versions_view_names_its_successor(config: DeploymentConfig) -> None:
    views = {v.name: v for v in generate_views(config, "partitioned", SPECS)}
    assert "Version 1 is retired: services now write version 2 (view pipeline_run_v2)." in (
        views["pipeline_run"].description
    )
    assert "retired" not in views["pipeline_run_v2"].description
    assert "retired" not in views["chat_turn"].description


def test_the_quality_view_covers_every_version(config: DeploymentConfig) -> None:
    quality = {v.name: v for v in generate_views(config, "partitioned", SPECS)}[QUALITY_VIEW]
    assert [c.name for c in quality.columns][:3] == ["day", "event", "schema_version"]
    for version in (1, 2):
        counted = f"entries.event = 'pipeline_run' AND entries.schema_version = {version}"
        assert counted in quality.query


def test_the_sink_keeps_the_columns_of_retired_versions() -> None:
    only_v2 = {f.name: f for f in payload_fields(tuple(s for s in SPECS if s != SPECS[0]))}
    every = {f.name: f for f in payload_fields(SPECS)}
    assert "attempts" not in only_v2
    assert every["attempts"].type == "INTEGER"
    # A field both versions have is described once per event, from the newest version.
    assert every["lane"].description == "pipeline_run: Queue lane the run used."


def test_two_views_with_one_name_are_refused(config: DeploymentConfig) -> None:
    impostor = dataclasses.replace(event_spec(PipelineRun), name="pipeline_run_v2")
    with pytest.raises(ViewBuildError, match="pipeline_run_v2"):
        generate_views(config, "partitioned", (*SPECS, impostor))
