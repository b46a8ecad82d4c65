"""Every committed view of every layout, analyzed whole by GoogleSQL's own analyzer (ZetaSQL)
against its source table typed from the models, is accepted, and its output columns have
the types the models promise and the data dictionary documents.

Whatever SQL is committed is what is analyzed (agent_telemetry/views/generated/<layout>/);
the expected types come from the models and views' column declarations, never from the
SQL itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.schema import version_catalogue
from agent_telemetry.views import (
    ENVELOPE_COLUMNS,
    LANE_VIEW,
    PAYLOAD_COLUMN,
    QUALITY_COLUMNS,
    QUALITY_VIEW,
    payload_fields,
    sink_schema,
    view_name,
)
from agent_telemetry.views._lanes import lane_plan
from agent_telemetry.views._sink import SHARD_COLUMN
from tests.conftest import REPO

if TYPE_CHECKING:
    from agent_telemetry.analyze import ViewAnalysis

# What the models promise for each kind of field (docs/design.md, "Views").
PROMISED = {"enum": "STRING", "int": "INT64", "bool": "BOOL"}
SPECS = {view_name(s.name, s.schema_version): s for s in version_catalogue()}
LANES = lane_plan(version_catalogue())
assert LANES is not None
LANE_COLUMNS = [(c.name, c.sql_type) for c in LANES.columns]
VIEWS = [*SPECS, QUALITY_VIEW, LANE_VIEW]
DICTIONARY = REPO / "docs" / "telemetry.md"


def expected_columns(view: str, layout: Layout = "partitioned") -> dict[str, str]:
    """Column -> type the models promise: the envelope columns, then each field by kind;
    telemetry_quality's columns as views declares them (QUALITY_COLUMNS), lane_health's as
    its plan declares them."""
    if view == QUALITY_VIEW:
        return {c.name: c.sql_type for c in QUALITY_COLUMNS}
    if view == LANE_VIEW:
        return dict(LANE_COLUMNS)
    envelope = {c.name: c.sql_type for c in ENVELOPE_COLUMNS}
    if layout == "sharded":  # the shard a date filter prunes by
        envelope[SHARD_COLUMN] = "STRING"
    return envelope | {f.name: PROMISED[f.kind] for f in SPECS[view].fields}


def _by_view(analyses: list[ViewAnalysis]) -> dict[str, ViewAnalysis]:
    return {a.view: a for a in analyses}


def _verdict(found: ViewAnalysis) -> str:
    a = found.analysis
    return f"{found.path}:{a.line}:{a.column}: {a.message}"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_view_of_the_models_is_committed_and_analyzed_whole(
    committed: dict[Layout, list[ViewAnalysis]], layout: Layout
) -> None:
    found = _by_view(committed[layout])
    assert sorted(found) == sorted(VIEWS)
    for view in found.values():
        assert view.sql.lstrip().startswith("CREATE OR REPLACE VIEW")
        assert "OPTIONS" in view.sql  # the column and view options are part of what is analyzed


@pytest.mark.parametrize(("layout", "view"), [(lay, v) for lay in LAYOUTS for v in VIEWS])
def test_view_is_accepted_with_the_types_the_models_promise(
    committed: dict[Layout, list[ViewAnalysis]],
    config: DeploymentConfig,
    layout: Layout,
    view: str,
) -> None:
    found = _by_view(committed[layout])[view]
    analysis = found.analysis
    assert analysis.accepted, _verdict(found)
    # A CREATE VIEW statement, creating exactly this view where telemetry.toml puts it.
    assert analysis.name_path == (config.target.project, config.target.dataset, view)
    got = analysis.typed_columns
    assert len({name for name, _ in got}) == len(got)
    assert dict(got) == expected_columns(view, layout)
    if view == QUALITY_VIEW:
        assert got == [(c.name, c.sql_type) for c in QUALITY_COLUMNS]  # in order, too
    elif view == LANE_VIEW:
        assert got == LANE_COLUMNS  # in order, too
    else:
        assert got[0] == ("timestamp", "TIMESTAMP")
        assert got[-1] == ("invalid_fields", "ARRAY<STRING>")
        kinds = {f.name: f.kind for f in SPECS[view].fields}
        assert [name for name, _ in got if name in kinds] == list(kinds)  # model order


def _dictionary() -> dict[str, list[tuple[str, str]]]:
    """docs/telemetry.md: view -> [(column, type)] from each view's column table."""
    views: dict[str, list[tuple[str, str]]] = {}
    section = None
    for line in DICTIONARY.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        row = re.match(r"\| `([^`]+)` \| ([A-Z0-9<>, ]+) \|", line)
        if section in VIEWS and row:
            views.setdefault(section, []).append((row[1], row[2].strip()))
    return views


def test_the_data_dictionary_lists_the_types_the_analyzer_derives(
    committed: dict[Layout, list[ViewAnalysis]], config: DeploymentConfig
) -> None:
    documented = _dictionary()
    assert sorted(documented) == sorted(VIEWS)
    # The dictionary documents the configured layout's views.
    for view, found in _by_view(committed[config.source.layout]).items():
        assert found.analysis.typed_columns == documented[view], view


@pytest.mark.parametrize("layout", ["partitioned", "sharded"])
def test_the_catalog_is_the_sink_schema_of_the_models(layout: Layout) -> None:
    from agent_telemetry.analyze import source_columns, type_text

    columns = {name: type_text(t) for name, t in source_columns(layout)}
    assert list(columns) == [f["name"] for f in sink_schema(layout)]
    payload = columns[PAYLOAD_COLUMN[layout]]
    fields = [f"{f.name} " for f in payload_fields()]
    assert payload.startswith("STRUCT<")
    assert all(f in payload for f in fields)
    assert "invalid_fields ARRAY<STRING>" in payload


def test_the_analytics_catalog_reads_json_payload_as_json() -> None:
    from agent_telemetry.analyze import source_columns, type_text

    columns = {name: type_text(t) for name, t in source_columns("analytics")}
    assert columns[PAYLOAD_COLUMN["analytics"]] == "JSON"
    assert columns["timestamp"] == "TIMESTAMP"
    assert columns["log_id"] == "STRING"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_lane_health_needs_the_event_views_before_it(
    committed: dict[Layout, list[ViewAnalysis]], config: DeploymentConfig, layout: Layout
) -> None:
    """Against the sink alone (no event view created yet) GoogleSQL refuses lane_health: it
    reads the views, which deploy creates first."""
    from agent_telemetry.analyze import Analyzer, source_catalog

    lanes = _by_view(committed[layout])[LANE_VIEW]
    alone = Analyzer(source_catalog(config, layout)).analyze(lanes.sql)
    assert not alone.accepted
    assert "pipeline_run" in alone.message or "provider_status" in alone.message
