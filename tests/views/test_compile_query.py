"""What compile_query accepts and refuses: the sink schema it qualifies against, the
payload keys and tables it checks, and the view named in each refusal.

The queries stand for what a template could render: compile_query is the check between
the templates and the committed SQL.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, version_catalogue
from agent_telemetry.views import ViewBuildError, table_ref
from agent_telemetry.views._describe import source_plan
from agent_telemetry.views._render import compile_query
from agent_telemetry.views._sink import payload_fields

# Every event version that has no `lane` field: a sink typed for these has no such key.
WITHOUT_LANE: tuple[EventSpec, ...] = tuple(
    s for s in version_catalogue() if "lane" not in s.field_names
)
OTHER_TABLE = "`acme-agents-prod.agent_logs.other`"
READS_ANOTHER_TABLE = r"^v: reads a table other than the configured sink$"


def _compile(
    config: DeploymentConfig,
    layout: Layout,
    sql: str,
    specs: tuple[EventSpec, ...] | None = None,
) -> str:
    """``sql`` with ``{sink}`` standing for the layout's sink table, compiled as view ``v``."""
    source = source_plan(config, layout)
    sink = table_ref(source.project, source.dataset, source.table)
    return compile_query(sql.format(sink=sink), source, "v", specs)


# --- the sink schema follows the specs given --------------------------------------------


def test_a_struct_star_expands_to_the_payload_fields_of_the_given_specs(
    config: DeploymentConfig,
) -> None:
    query = _compile(
        config, "partitioned", "SELECT sink.jsonPayload.* FROM {sink} AS sink", WITHOUT_LANE
    )
    tree = sqlglot.parse_one(query, dialect="bigquery")
    assert isinstance(tree, exp.Select)
    assert tree.named_selects == [f.name for f in payload_fields(WITHOUT_LANE)]
    assert "lane" not in tree.named_selects


def test_a_payload_key_outside_the_given_specs_is_refused(config: DeploymentConfig) -> None:
    # `lane` is in the default catalogue, but not in the sink these specs describe.
    sql = "SELECT sink.jsonPayload.lane AS lane FROM {sink} AS sink"
    assert "sink.jsonPayload.lane AS lane" in _compile(config, "partitioned", sql)
    with pytest.raises(ViewBuildError, match=r"^v: unknown payload column jsonPayload\.lane$"):
        _compile(config, "partitioned", sql, WITHOUT_LANE)


# --- qualified as BigQuery reads it --------------------------------------------------------


def test_an_unknown_column_of_the_analytics_view_fails_the_build(
    config: DeploymentConfig,
) -> None:
    # _AllLogs is spelled with capitals: the table is found in the schema (and its columns
    # checked) only when it is looked up as BigQuery names tables.
    assert "sink.insert_id AS insert_id" in _compile(
        config, "analytics", "SELECT sink.insert_id FROM {sink} AS sink"
    )
    with pytest.raises(ViewBuildError, match="nope"):
        _compile(config, "analytics", "SELECT sink.nope AS lane FROM {sink} AS sink")


def test_a_quoted_column_in_another_case_is_the_sink_column(config: DeploymentConfig) -> None:
    # BigQuery column names ignore case even when quoted; the sink's spelling is restored.
    query = _compile(
        config,
        "partitioned",
        "SELECT sink.`INSERTID` AS a, sink.`JSONPAYLOAD`.`Lane` AS b FROM {sink} AS sink",
    )
    assert "sink.`insertId` AS a" in query
    assert "sink.`jsonPayload`.`lane` AS b" in query


# --- payload keys: only the payload column is checked --------------------------------------


@pytest.mark.parametrize("read", ["sink.resource.type", "sink.labels.instanceId"])
def test_a_record_column_other_than_the_payload_may_be_read(
    config: DeploymentConfig, read: str
) -> None:
    # Their keys are not payload keys; the qualifier, not the payload check, owns them.
    query = _compile(config, "partitioned", f"SELECT {read} AS x FROM {{sink}} AS sink")
    assert f"{read.lower()} AS x" in query


def test_a_json_column_other_than_the_payload_may_be_read(config: DeploymentConfig) -> None:
    query = _compile(
        config,
        "analytics",
        "SELECT JSON_VALUE(sink.labels, '$.instanceId') AS i FROM {sink} AS sink",
    )
    assert "JSON_VALUE(sink.labels, '$.instanceId') AS i" in query


@pytest.mark.parametrize(
    "function",
    [
        "JSON_VALUE",
        "JSON_EXTRACT_SCALAR",
        "JSON_QUERY_ARRAY",
        "JSON_EXTRACT_ARRAY",
        "JSON_VALUE_ARRAY",
        "JSON_EXTRACT_STRING_ARRAY",
    ],
)
def test_every_json_array_and_scalar_read_of_an_unknown_payload_key_is_refused(
    config: DeploymentConfig, function: str
) -> None:
    known = f"SELECT {function}(sink.json_payload, '$.invalid_fields') AS x FROM {{sink}} AS sink"
    assert "(sink.json_payload, '$.invalid_fields') AS x" in _compile(config, "analytics", known)
    with pytest.raises(ViewBuildError, match=r"^v: unsupported JSON path into json_payload$"):
        _compile(config, "analytics", known.replace("invalid_fields", "nope"))


@pytest.mark.parametrize(
    ("layout", "read"),
    [
        ("analytics", "JSON_QUERY(sink.json_payload, '$.nope')"),
        ("analytics", "JSON_EXTRACT(sink.json_payload, '$.nope')"),
        ("analytics", "JSON_QUERY(sink.json_payload, '$.lane')"),
        ("analytics", "sink.json_payload['nope']"),
        ("analytics", "TO_JSON_STRING(sink.json_payload)"),
        ("analytics", "sink.json_payload"),
        ("partitioned", "sink.jsonPayload"),
        ("partitioned", "TO_JSON_STRING(sink.jsonPayload)"),
    ],
)
def test_a_payload_read_other_than_by_one_known_key_is_refused(
    config: DeploymentConfig, layout: Layout, read: str
) -> None:
    # These reach keys no model defines (or the whole payload) without naming a key the
    # check could look up; before, the first four built without a word.
    with pytest.raises(ViewBuildError, match=r"^v: reads (json_payload|jsonPayload) other than"):
        _compile(config, layout, f"SELECT {read} AS x FROM {{sink}} AS sink")


def test_a_bad_payload_read_after_other_columns_is_still_refused(
    config: DeploymentConfig,
) -> None:
    # The check walks every column; one that is not the payload does not end the walk.
    sql = (
        "SELECT sink.timestamp AS t, sink.insert_id AS i, JSON_QUERY(sink.json_payload, '$.nope')"
        " AS x FROM {sink} AS sink"
    )
    with pytest.raises(ViewBuildError, match=r"^v: reads json_payload other than"):
        _compile(config, "analytics", sql)


# --- tables: the sink and the query's own CTEs only ----------------------------------------


def test_an_unqualified_table_that_is_not_a_cte_is_refused(config: DeploymentConfig) -> None:
    with pytest.raises(ViewBuildError, match=READS_ANOTHER_TABLE):
        _compile(config, "partitioned", "SELECT 1 AS x FROM other")


@pytest.mark.parametrize(
    "reads_other",
    [
        f"SELECT lines.ts FROM lines CROSS JOIN {OTHER_TABLE} AS o",
        f"SELECT lines.ts FROM lines WHERE EXISTS(SELECT 1 FROM {OTHER_TABLE})",
    ],
)
def test_a_table_read_after_a_cte_is_still_checked(
    config: DeploymentConfig, reads_other: str
) -> None:
    sql = "WITH lines AS (SELECT sink.timestamp AS ts FROM {sink} AS sink) "
    assert "FROM lines AS lines" in _compile(
        config, "partitioned", sql + "SELECT lines.ts FROM lines"
    )
    with pytest.raises(ViewBuildError, match=READS_ANOTHER_TABLE):
        _compile(config, "partitioned", sql + reads_other)


# --- each refusal names the view ----------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "sql", "reason"),
    [
        ("partitioned", f"SELECT 1 AS x FROM {OTHER_TABLE}", "reads a table other than"),
        ("partitioned", "SELECT sink.jsonPayload.nope FROM {sink} AS sink", "unknown payload"),
        (
            "analytics",
            "SELECT JSON_VALUE(sink.json_payload, '$.nope') AS x FROM {sink} AS sink",
            "unsupported JSON path",
        ),
    ],
)
def test_a_refused_query_names_the_view(
    config: DeploymentConfig, layout: Layout, sql: str, reason: str
) -> None:
    source = source_plan(config, layout)
    sink = table_ref(source.project, source.dataset, source.table)
    with pytest.raises(ViewBuildError, match=rf"^pipeline_run_v7: {reason}"):
        compile_query(sql.format(sink=sink), source, "pipeline_run_v7")
