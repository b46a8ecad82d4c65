"""What the view plans and ``generate_views`` hand over besides the SQL itself.

The layout, schema version and column descriptions of each view; the plans' reads and
log filter; the defaults (the config's layout, every registered version); specs that
bring a field of their own or list a bumped event's newest version first; and the
messages that name the view whose SQL or DDL failed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import Field

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout, SourceConfig, TargetConfig
from agent_telemetry.schema import Lane, PipelineRun, catalogue, event_spec, version_catalogue
from agent_telemetry.views import QUALITY_VIEW, ViewBuildError, _render, generate_views
from agent_telemetry.views._describe import source_plan, view_plans
from tests.schema.copies import copy_model
from tests.views.test_versions import SPECS

RUN_V1, RUN_V2 = SPECS[0], SPECS[1]


def _broken(template: str, old: str, new: str) -> Callable[..., str]:
    """``render`` with the last ``old`` in ``template``'s output replaced by ``new``: a
    template bug, as the build sees it."""
    render = _render.render

    def rendered(name: str, **context: Any) -> str:
        text = render(name, **context)
        if name != template:
            return text
        assert old in text
        head, _, tail = text.rpartition(old)
        return head + new + tail

    return rendered


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_view_records_the_layout_it_was_built_for(
    config: DeploymentConfig, layout: Layout
) -> None:
    views = generate_views(config, layout, (RUN_V1,))
    assert [v.layout for v in views] == [layout, layout]


def test_without_a_layout_the_configured_one_is_built() -> None:
    config = DeploymentConfig(
        source=SourceConfig(project="acme-logs", dataset="agent_logs", layout="sharded"),
        target=TargetConfig(project="acme-views", dataset="agent_telemetry"),
    )
    for view in generate_views(config, specs=(RUN_V1,)):
        assert view.layout == "sharded"
        assert view.labels["layout"] == "sharded"
        assert "`acme-logs.agent_logs.run_googleapis_com_stdout_*` AS sink" in view.query


def test_the_quality_view_has_the_newest_schema_version(config: DeploymentConfig) -> None:
    quality = generate_views(config, "partitioned", (RUN_V1, RUN_V2))[-1]
    assert quality.name == QUALITY_VIEW
    assert quality.schema_version == 2
    assert quality.labels["schema-version"] == "2"


def test_a_retired_version_is_named_retired_whatever_the_order_of_the_specs(
    config: DeploymentConfig,
) -> None:
    views = {v.name: v for v in generate_views(config, "partitioned", (RUN_V2, RUN_V1))}
    assert "Version 1 is retired: services now write version 2 (view pipeline_run_v2)." in (
        views["pipeline_run"].description
    )
    assert "retired" not in views["pipeline_run_v2"].description


def test_a_field_only_the_given_specs_define_is_read_by_its_view_and_by_quality(
    config: DeploymentConfig,
) -> None:
    # The sink schema the SQL is checked against is that of the specs given, not the
    # registered models': a new field is a known payload key.
    new = copy_model(
        PipelineRun,
        add={
            "warm_start": (
                bool | None,
                Field(None, strict=True, description="Whether the renderer was already warm."),
            )
        },
    )
    specs = (event_spec(new),)
    assert "warm_start" not in {f.name for s in version_catalogue() for f in s.fields}
    for layout in LAYOUTS:
        run, quality = generate_views(config, layout, specs)
        assert "warm_start" in [c.name for c in run.columns]
        assert "AS warm_start" in run.query
        assert "'warm_start' AS field" in quality.query


def test_a_field_description_ending_in_a_capital_x_is_kept_whole(
    config: DeploymentConfig,
) -> None:
    described = copy_model(
        PipelineRun, replace={"lane": (Lane, Field(description="Queue lane picked by router X."))}
    )
    view = generate_views(config, "partitioned", (event_spec(described),))[0]
    lane = next(c for c in view.columns if c.name == "lane")
    assert lane.description == "Queue lane picked by router X. One of: public, admin, premium."
    assert "description='Queue lane picked by router X. One of: public, admin, premium.'" in (
        view.ddl
    )


def test_several_name_clashes_are_listed_comma_separated(config: DeploymentConfig) -> None:
    run = event_spec(PipelineRun)
    quality_impostor = dataclasses.replace(run, name=QUALITY_VIEW)
    with pytest.raises(ViewBuildError) as caught:
        generate_views(config, "partitioned", (run, quality_impostor, run))
    assert str(caught.value) == "several views would be named pipeline_run, telemetry_quality"


def test_plans_default_to_every_registered_version() -> None:
    assert view_plans() == view_plans(version_catalogue())


def test_plans_read_integers_as_float64_and_other_fields_as_their_type() -> None:
    columns = [c for plan in view_plans(catalogue()) for c in plan.fields]
    assert {c.kind for c in columns} == {"enum", "int", "bool"}
    for column in columns:
        assert column.read_as == ("FLOAT64" if column.kind == "int" else column.sql_type)


def test_only_the_analytics_plan_filters_on_a_log_id(config: DeploymentConfig) -> None:
    assert source_plan(config, "analytics").log_id == config.source.log_id
    assert source_plan(config, "partitioned").log_id is None
    assert source_plan(config, "sharded").log_id is None


def test_an_event_view_that_does_not_qualify_is_refused_by_name(
    config: DeploymentConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _broken(
        "event_view.sql.j2", "sink.timestamp AS timestamp", "sink.no_such_column AS timestamp"
    )
    monkeypatch.setattr(_render, "render", broken)
    with pytest.raises(ViewBuildError, match=r"^pipeline_run: .*no_such_column"):
        generate_views(config, "partitioned", (RUN_V1,))


def test_a_quality_view_that_does_not_qualify_is_refused_by_name(
    config: DeploymentConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _broken(
        "telemetry_quality.sql.j2",
        "DATE(sink.timestamp) AS day",
        "DATE(sink.no_such_column) AS day",
    )
    monkeypatch.setattr(_render, "render", broken)
    with pytest.raises(ViewBuildError, match=r"^telemetry_quality: .*no_such_column"):
        generate_views(config, "partitioned", (RUN_V1,))


def test_a_ddl_header_that_does_not_parse_is_refused_by_name(
    config: DeploymentConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _broken("view_ddl.sql.j2", "CREATE OR REPLACE VIEW", "CREATE OR REPLACE VIEW (")
    monkeypatch.setattr(_render, "render", broken)
    # sqlglot's reason follows, with where in the header it stopped.
    with pytest.raises(
        ViewBuildError, match=r"^pipeline_run: DDL does not parse: .*Line \d+, Col: \d+"
    ):
        generate_views(config, "partitioned", (RUN_V1,))


def test_a_ddl_that_does_not_end_with_its_query_is_refused_by_name(
    config: DeploymentConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The header is printed around a stand-in query that the real one replaces; a header
    # that ends with anything else would splice the query into the wrong place.
    monkeypatch.setattr(_render, "render", _broken("view_ddl.sql.j2", "SELECT 1", "SELECT 2"))
    with pytest.raises(
        ViewBuildError, match=f"^{re.escape('pipeline_run: the DDL does not end with its query')}$"
    ):
        generate_views(config, "partitioned", (RUN_V1,))
