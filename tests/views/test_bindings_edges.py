"""Edge cases of the binding check: odd statements, payload reads and JSON paths."""

from __future__ import annotations

import pytest

from agent_telemetry.config import Layout
from agent_telemetry.views import binding_violations, column_lineage
from tests.views.test_bindings import _spec, _views

LANE_READ: dict[Layout, str] = {
    "partitioned": "SAFE_CAST(sink.jsonPayload.lane AS STRING) AS lane",
}
OUTER_INVALID_FIELDS = "  lines.invalid_fields AS invalid_fields"


def _query(layout: Layout, old: str, new: str) -> str:
    """The pipeline_run view of ``layout`` with one text edit (which must apply)."""
    query = _views(layout)["pipeline_run"].query
    assert old in query, "the edit no longer applies to the generated SQL"
    return query.replace(old, new, 1)


@pytest.mark.parametrize(
    "statement", ["CREATE TABLE t (lane STRING)", "DELETE FROM `p.d.t` WHERE TRUE"]
)
def test_a_statement_that_is_not_a_query_is_reported_as_such(statement: str) -> None:
    (violation,) = binding_violations(statement, _spec("pipeline_run"), "partitioned")
    assert str(violation) == "pipeline_run.*: does not parse as a BigQuery query (not a query)"


def test_a_column_reading_the_whole_payload_record_says_so() -> None:
    # Not a key of the payload, and not a sink column called "jsonpayload" either.
    query = _query(
        "partitioned", LANE_READ["partitioned"], "TO_JSON_STRING(sink.jsonPayload) AS lane"
    )
    assert column_lineage(query, "partitioned", "lane") == {"jsonPayload.<whole record>"}
    assert [str(v) for v in binding_violations(query, _spec("pipeline_run"), "partitioned")] == [
        "pipeline_run.lane: lineage reaches jsonPayload.<whole record>; "
        "expected exactly jsonPayload.lane"
    ]


@pytest.mark.parametrize("path", ["$..lane", "$.lane.x", "$"])
def test_a_json_path_other_than_one_key_is_unsupported(path: str) -> None:
    # A recursive, nested or root path may read something other than the key it names.
    query = _query("analytics", "'$.lane'", f"'{path}'")
    # (the JSON_TYPE check beside it reads the key itself: json_payload.lane)
    assert "json_payload.<unsupported path>" in column_lineage(query, "analytics", "lane")
    (violation,) = binding_violations(query, _spec("pipeline_run"), "analytics")
    assert violation.column == "lane"


def test_a_column_blending_a_payload_key_with_an_envelope_column_is_caught() -> None:
    # The envelope column sits deeper than the payload key: both must still be found.
    query = _query(
        "partitioned",
        LANE_READ["partitioned"],
        "SAFE_CAST(COALESCE(sink.jsonPayload.lane, UPPER(sink.severity)) AS STRING) AS lane",
    )
    assert column_lineage(query, "partitioned", "lane") == {"jsonPayload.lane", "severity"}


def test_a_column_name_may_be_given_as_a_bigquery_quoted_identifier() -> None:
    query = _views("partitioned")["pipeline_run"].query
    assert column_lineage(query, "partitioned", "`lane`") == {"jsonPayload.lane"}


def test_a_column_mixing_an_unnested_array_with_another_key_reaches_both() -> None:
    # The UNNEST is met first in the lineage walk; what comes after it still counts.
    query = _query(
        "partitioned",
        OUTER_INVALID_FIELDS,
        "  ARRAY_CONCAT(ARRAY(SELECT n FROM UNNEST(lines.invalid_fields) AS n), [lines.lane])"
        " AS invalid_fields",
    )
    reached = column_lineage(query, "partitioned", "invalid_fields")
    assert reached == {"jsonPayload.invalid_fields", "jsonPayload.lane"}
    problems = binding_violations(query, _spec("pipeline_run"), "partitioned")
    assert [v.column for v in problems] == ["invalid_fields"]


def test_an_unnest_of_a_cte_column_reaches_what_that_column_reads() -> None:
    # Sound: the CTE's invalid_fields reads the payload key; its name is not a sink column.
    query = _query(
        "partitioned",
        OUTER_INVALID_FIELDS,
        "  ARRAY(SELECT n FROM UNNEST(lines.invalid_fields) AS n) AS invalid_fields",
    )
    assert column_lineage(query, "partitioned", "invalid_fields") == {"jsonPayload.invalid_fields"}
    assert binding_violations(query, _spec("pipeline_run"), "partitioned") == []


def test_an_unnest_of_a_column_that_resolves_nowhere_is_unresolved() -> None:
    query = _query(
        "partitioned",
        OUTER_INVALID_FIELDS,
        "  ARRAY(SELECT n FROM UNNEST(elsewhere.invalid_fields) AS n) AS invalid_fields",
    )
    assert column_lineage(query, "partitioned", "invalid_fields") == {
        "<unresolved elsewhere.invalid_fields>"
    }


def test_a_constant_smuggled_through_an_unnest_subquery_is_not_bound() -> None:
    """An attack on the proof: the CTE makes `timestamp` and `lane` constants, and the
    outer query reads them back through ``(SELECT x FROM UNNEST([lines.col]) AS x)``. An
    UNNEST over a CTE's column reads that column, not the sink column of the same name."""
    query = _query(
        "partitioned",
        "    sink.timestamp AS timestamp,\n",
        "    CURRENT_TIMESTAMP() AS timestamp,\n    STRUCT('admin' AS lane) AS jsonPayload,\n",
    )
    query = query.replace(
        "  lines.timestamp AS timestamp,\n",
        "  (SELECT t FROM UNNEST([lines.timestamp]) AS t) AS timestamp,\n",
        1,
    )
    query = query.replace(
        "  CASE WHEN lines.lane IN ('public', 'admin', 'premium') THEN lines.lane END AS lane,\n",
        "  (SELECT l FROM UNNEST([lines.jsonPayload.lane]) AS l) AS lane,\n",
        1,
    )
    assert "UNNEST([lines.timestamp])" in query
    assert "UNNEST([lines.jsonPayload.lane])" in query
    assert column_lineage(query, "partitioned", "timestamp") == frozenset()
    assert column_lineage(query, "partitioned", "lane") == frozenset()
    problems = {
        v.column: v.problem for v in binding_violations(query, _spec("pipeline_run"), "partitioned")
    }
    assert problems["timestamp"] == (
        "lineage reaches nothing in the sink; expected exactly timestamp"
    )
    assert problems["lane"] == (
        "lineage reaches nothing in the sink; expected exactly jsonPayload.lane"
    )


SINK = "`acme-agents-prod.agent_logs.run_googleapis_com_stdout`"


@pytest.mark.parametrize(
    "other_rows",
    [
        "LAG(sink.jsonPayload.lane) OVER ()",
        "MAX(sink.jsonPayload.lane) OVER ()",
        f"(SELECT MAX(s2.jsonPayload.lane) FROM {SINK} AS s2)",
        f"(SELECT s2.jsonPayload.lane FROM {SINK} AS s2 LIMIT 1)",
    ],
)
def test_a_column_showing_another_lines_value_is_not_bound(other_rows: str) -> None:
    # The right key from the wrong line: lineage alone names the key, not the row.
    query = _query(
        "partitioned", LANE_READ["partitioned"], f"SAFE_CAST({other_rows} AS STRING) AS lane"
    )
    assert [str(v) for v in binding_violations(query, _spec("pipeline_run"), "partitioned")] == [
        "pipeline_run.lane: lineage reaches <other rows>, jsonPayload.lane; "
        "expected exactly jsonPayload.lane"
    ]


def test_an_unnest_resolves_each_name_where_it_sits() -> None:
    # `sink` names the sink table inside the CTE but the (constant) CTE outside it: the
    # outer UNNEST reads the CTE, so its timestamp reaches nothing in the sink.
    query = f"""
    WITH lines AS (
      SELECT CURRENT_TIMESTAMP() AS timestamp, sink.jsonPayload.lane AS lane
      FROM {SINK} AS sink
    )
    SELECT (SELECT t FROM UNNEST([sink.timestamp]) AS t) AS timestamp, sink.lane AS lane
    FROM lines AS sink
    """
    assert column_lineage(query, "partitioned", "timestamp") == frozenset()
    assert column_lineage(query, "partitioned", "lane") == {"jsonPayload.lane"}


def test_an_unnest_of_the_sink_and_a_derived_column_counts_only_the_sink() -> None:
    # Every column of the UNNEST is resolved, not only those before the first sink one.
    query = f"""
    WITH lines AS (
      SELECT (SELECT v FROM UNNEST([sink.timestamp, fake.other]) AS v LIMIT 1) AS timestamp
      FROM {SINK} AS sink, (SELECT CURRENT_TIMESTAMP() AS other) AS fake
    )
    SELECT lines.timestamp AS timestamp FROM lines
    """
    assert column_lineage(query, "partitioned", "timestamp") == {"timestamp"}


def test_an_unresolved_name_is_shown_as_bigquery_spells_it() -> None:
    query = _query(
        "partitioned",
        OUTER_INVALID_FIELDS,
        "  ARRAY(SELECT n FROM UNNEST(`else-where`.invalid_fields) AS n) AS invalid_fields",
    )
    assert column_lineage(query, "partitioned", "invalid_fields") == {
        "<unresolved `else-where`.invalid_fields>"
    }


SHARD_READ = "  lines.table_suffix AS table_suffix,\n"


@pytest.mark.parametrize(
    ("new", "problem"),
    [
        ("", "envelope column has no column in the view"),
        (
            "  CAST(lines.timestamp AS STRING) AS table_suffix,\n",
            "lineage reaches timestamp; expected exactly _table_suffix",
        ),
    ],
)
def test_a_sharded_view_must_show_the_shard_it_read(new: str, problem: str) -> None:
    # table_suffix is the sharded layout's own envelope column (the one filter that
    # prunes shards): a view without it, or with it reading something else, is refused.
    query = _query("sharded", SHARD_READ, new)
    assert [str(v) for v in binding_violations(query, _spec("pipeline_run"), "sharded")] == [
        f"pipeline_run.table_suffix: {problem}"
    ]
