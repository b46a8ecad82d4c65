"""Negative controls: the analyzer check can fail. Each broken statement runs against the
same catalog the committed views are analyzed against (the sink table typed from the
models) and must be rejected with the analyzer's own message and a location. If the
catalog were untyped or the analyzer accepted anything, these tests fail.

Plus the analyzer settings that make it BigQuery-like, and one documented limitation:
JSON paths into the analytics layout's json_payload are not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import sqlglot

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.views import GENERATED_DIR, PAYLOAD_COLUMN, sql_path, table_ref

if TYPE_CHECKING:
    from agent_telemetry.analyze import Analysis, Analyzer, Runtime


ALL = ["partitioned", "sharded", "analytics"]
RECORD = ["partitioned", "sharded"]  # the payload is a typed RECORD (analytics: JSON)


@pytest.fixture(scope="module")
def analyzers(
    analyzer_runtime: Runtime, config: DeploymentConfig
) -> Iterator[dict[Layout, Analyzer]]:
    """One analyzer per layout, its catalog the layout's source table (as for the views)."""
    from agent_telemetry.analyze import Analyzer, source_catalog

    sessions: dict[Layout, Analyzer] = {
        layout: Analyzer(source_catalog(config, layout)) for layout in LAYOUTS
    }
    yield sessions
    for session in sessions.values():
        session.close()


def _source(config: DeploymentConfig, layout: Layout) -> str:
    src = config.source
    return f"{table_ref(src.project, src.dataset, src.table_for(layout))} AS sink"


def _payload(layout: Layout, key: str) -> str:
    """How a view reads payload key ``key`` as a STRING in ``layout``."""
    if layout == "analytics":
        return f"JSON_VALUE(sink.json_payload, '$.{key}')"
    return f"sink.{PAYLOAD_COLUMN[layout]}.{key}"


def _rejected(analysis: Analysis, *fragments: str) -> None:
    assert not analysis.accepted, "the analyzer accepted a broken statement"
    for fragment in fragments:
        assert fragment in analysis.message
    assert analysis.line is not None
    assert analysis.column is not None


@pytest.mark.parametrize("layout", RECORD)
def test_an_unknown_payload_field_is_rejected(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig, layout: Layout
) -> None:
    analyzer = analyzers[layout]
    sql = f"SELECT {_payload(layout, 'lane_typo')} AS lane FROM {_source(config, layout)}"
    analysis = analyzer.analyze(sql)
    _rejected(analysis, "Field name lane_typo does not exist in STRUCT<event STRING")
    assert (analysis.line, analysis.column) == (1, sql.index("lane_typo") + 1)


@pytest.mark.parametrize("layout", ALL)
def test_a_string_compared_to_an_int64_is_rejected(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig, layout: Layout
) -> None:
    analyzer = analyzers[layout]
    sql = (
        f"SELECT sink.timestamp FROM {_source(config, layout)}\n"
        f"WHERE {_payload(layout, 'lane')} = 1"
    )
    analysis = analyzer.analyze(sql)
    _rejected(analysis, "No matching signature for operator = for argument types: STRING, INT64")
    assert (analysis.line, analysis.column) == (2, len("WHERE ") + 1)


@pytest.mark.parametrize("layout", ALL)
def test_an_unknown_function_is_rejected(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig, layout: Layout
) -> None:
    analyzer = analyzers[layout]
    sql = f"SELECT TIMESTAMP_TRUNCATE(sink.timestamp, DAY) AS day FROM {_source(config, layout)}"
    analysis = analyzer.analyze(sql)
    _rejected(analysis, "Function not found: TIMESTAMP_TRUNCATE")
    assert (analysis.line, analysis.column) == (1, len("SELECT ") + 1)


@pytest.mark.parametrize("layout", ALL)
def test_json_value_on_a_struct_is_rejected(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig, layout: Layout
) -> None:
    analyzer = analyzers[layout]
    # The sink's payload is a RECORD; in _AllLogs, resource is a STRUCT.
    struct = "sink.resource" if layout == "analytics" else f"sink.{PAYLOAD_COLUMN[layout]}"
    sql = f"SELECT JSON_VALUE({struct}, '$.lane') AS lane FROM {_source(config, layout)}"
    analysis = analyzer.analyze(sql)
    _rejected(
        analysis,
        "No matching signature for function JSON_VALUE",
        "Argument types: STRUCT<",
        "Signature: JSON_VALUE(JSON, [STRING])",
    )


@pytest.mark.parametrize("layout", ALL)
def test_a_view_column_list_one_short_is_rejected(
    analyzers: dict[Layout, Analyzer], layout: Layout
) -> None:
    analyzer = analyzers[layout]
    """A committed view whose column list lost its last entry (the query still has it)."""
    ddl = sql_path(GENERATED_DIR, layout, "pipeline_render").read_text(encoding="utf-8")
    tree = sqlglot.parse_one(ddl, dialect="bigquery")
    columns = tree.this.expressions
    count = len(columns)
    columns.pop()
    analysis = analyzer.analyze(tree.sql(dialect="bigquery", pretty=True))
    _rejected(
        analysis,
        f"The number of view column names ({count - 1}) must be equal to the number of "
        f"columns from the view query ({count})",
    )


@pytest.mark.parametrize("layout", ALL)
def test_the_same_view_with_its_column_list_whole_is_accepted(
    analyzers: dict[Layout, Analyzer], layout: Layout
) -> None:
    analyzer = analyzers[layout]
    """The control above fails because of the dropped column, not the round trip."""
    ddl = sql_path(GENERATED_DIR, layout, "pipeline_render").read_text(encoding="utf-8")
    tree = sqlglot.parse_one(ddl, dialect="bigquery")
    assert analyzer.analyze(tree.sql(dialect="bigquery", pretty=True)).accepted


# --- the settings that make the analyzer BigQuery-like ------------------------------------


def test_a_misspelt_view_option_is_rejected(analyzers: dict[Layout, Analyzer]) -> None:
    analyzer = analyzers["partitioned"]
    analysis = analyzer.analyze(
        "CREATE OR REPLACE VIEW `p.d.v` OPTIONS (descriptoin='x') AS SELECT 1 AS a"
    )
    _rejected(analysis, "Unknown option: descriptoin")


def test_labels_must_be_key_value_pairs(analyzers: dict[Layout, Analyzer]) -> None:
    analyzer = analyzers["partitioned"]
    ok = "CREATE OR REPLACE VIEW `p.d.v` OPTIONS (labels=[('k', 'v')]) AS SELECT 1 AS a"
    assert analyzer.analyze(ok).accepted
    analysis = analyzer.analyze(ok.replace("('k', 'v')", "'k'"))
    _rejected(analysis, "Option labels value has type ARRAY<STRING>")


def test_bigquery_type_names_only(analyzers: dict[Layout, Analyzer]) -> None:
    analyzer = analyzers["partitioned"]
    analysis = analyzer.analyze("SELECT CAST(1 AS DOUBLE) AS d")
    _rejected(analysis, "Type not found: DOUBLE")
    assert analyzer.analyze("SELECT CAST(1 AS FLOAT64) AS d").typed_columns == [("d", "FLOAT64")]


def test_json_values_cannot_be_compared_as_in_bigquery(
    analyzers: dict[Layout, Analyzer],
) -> None:
    analyzer = analyzers["analytics"]
    analysis = analyzer.analyze("SELECT JSON '1' = JSON '1' AS same")
    _rejected(analysis, "Equality is not defined for arguments of type JSON")


def test_a_sharded_sink_has_a_string_table_suffix_outside_select_star(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig
) -> None:
    layout: Layout = "sharded"
    analyzer = analyzers[layout]
    source = _source(config, layout)
    ok = analyzer.analyze(f"SELECT COUNT(*) AS n FROM {source} WHERE _TABLE_SUFFIX >= '20250101'")
    assert ok.typed_columns == [("n", "INT64")]
    _rejected(
        analyzer.analyze(f"SELECT COUNT(*) AS n FROM {source} WHERE _TABLE_SUFFIX >= 20250101"),
        "No matching signature for operator >=",
    )
    star = analyzer.analyze(f"SELECT * FROM {source}")
    assert "_TABLE_SUFFIX" not in {c.name for c in star.columns}


def test_limitation_json_paths_in_the_analytics_layout_are_not_checked(
    analyzers: dict[Layout, Analyzer], config: DeploymentConfig
) -> None:
    layout: Layout = "analytics"
    analyzer = analyzers[layout]
    """docs/analyze.md: an unknown key under json_payload is accepted (JSON has no schema);
    sqlglot's build-time payload-key check (views/_render.py) covers the generated views."""
    sql = f"SELECT {_payload(layout, 'lane_typo')} AS lane FROM {_source(config, layout)}"
    assert analyzer.analyze(sql).typed_columns == [("lane", "STRING")]
