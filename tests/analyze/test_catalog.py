"""Catalog building: GoogleSQL type text to ZetaSQL types and back, and the table paths
BigQuery accepts (quoted whole or part by part, with or without the project)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from agent_telemetry.analyze import source_catalog, type_text
from agent_telemetry.analyze._catalog import type_proto
from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.views import table_columns

if TYPE_CHECKING:
    from agent_telemetry.analyze import Analyzer, Runtime


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_source_column_type_survives_the_round_trip(layout: Layout) -> None:
    for text in table_columns(layout).values():
        assert type_text(type_proto(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "INT64",
        "ARRAY<STRUCT<a INT64, b ARRAY<STRING>>>",
        "STRUCT<type STRING, labels JSON>",
        "STRUCT<x FLOAT64>",
    ],
)
def test_nested_types(text: str) -> None:
    assert type_text(type_proto(text)) == text


@pytest.mark.parametrize(
    "text", ["", "INT32", "ARRAY<INT64", "STRUCT<>", "STRUCT<a>", "INT64 INT64", "ARRAY<a b>"]
)
def test_not_a_type(text: str) -> None:
    with pytest.raises(ValueError, match="not a GoogleSQL type"):
        type_proto(text)


@pytest.fixture(scope="module")
def partitioned(analyzer_runtime: Runtime, config: DeploymentConfig) -> Iterator[Analyzer]:
    from agent_telemetry.analyze import Analyzer

    with Analyzer(source_catalog(config, "partitioned")) as analyzer:
        yield analyzer


@pytest.mark.parametrize(
    "path",
    [
        "`acme-agents-prod.agent_logs.run_googleapis_com_stdout`",
        "`acme-agents-prod`.agent_logs.run_googleapis_com_stdout",
        "`acme-agents-prod`.`agent_logs.run_googleapis_com_stdout`",
        "`acme-agents-prod.agent_logs`.run_googleapis_com_stdout",
        "agent_logs.run_googleapis_com_stdout",
        "`agent_logs.run_googleapis_com_stdout`",
    ],
)
def test_every_way_bigquery_spells_a_table_path_resolves(partitioned: Analyzer, path: str) -> None:
    analysis = partitioned.analyze(f"SELECT COUNT(*) AS n FROM {path}")
    assert analysis.typed_columns == [("n", "INT64")], analysis.message


def test_another_dataset_is_not_found(partitioned: Analyzer) -> None:
    analysis = partitioned.analyze("SELECT COUNT(*) AS n FROM other.run_googleapis_com_stdout")
    assert not analysis.accepted
    assert analysis.message.startswith("Table not found: other.run_googleapis_com_stdout")
