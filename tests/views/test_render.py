"""Each layout's SQL parses, qualifies against the sink schema and is byte-stable."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import jinja2
import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.schema import catalogue, version_catalogue
from agent_telemetry.views import LANE_VIEW, QUALITY_VIEW, ViewBuildError, generate_views
from agent_telemetry.views._describe import source_plan
from agent_telemetry.views._lanes import compile_lane_query, lane_plan
from agent_telemetry.views._render import compile_query, render, sql_literal


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_view_per_event_then_quality_then_lane_health(
    config: DeploymentConfig, layout: Layout
) -> None:
    views = generate_views(config, layout)
    assert [v.name for v in views] == [*(s.name for s in catalogue()), QUALITY_VIEW, LANE_VIEW]
    # lane_health reads two views made before it; no other view reads a view.
    assert [v.reads for v in views] == [()] * (len(views) - 1) + [
        ("pipeline_run", "provider_status")
    ]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_view_parses_and_requalifies_to_the_same_sql(
    config: DeploymentConfig, layout: Layout
) -> None:
    source = source_plan(config, layout)
    for view in generate_views(config, layout):
        tree = sqlglot.parse_one(view.query, dialect="bigquery")
        assert isinstance(tree, exp.Query)
        # Qualifying the committed SQL again is a fixed point: it is already qualified.
        if view.reads:
            plan = lane_plan(version_catalogue())
            assert plan is not None
            again = compile_lane_query(view.query, config, plan, version_catalogue())
            assert again == view.query
        else:
            assert compile_query(view.query, source, view.name) == view.query
        ddl = sqlglot.parse_one(view.ddl, dialect="bigquery")
        assert isinstance(ddl, exp.Create)
        assert ddl.kind == "VIEW"
        assert view.ddl.endswith(view.query)
        # The query is printed once and spliced into the DDL: the whole DDL is still
        # exactly what sqlglot prints for it.
        assert ddl.sql(dialect="bigquery", pretty=True) + "\n" == view.ddl


@pytest.mark.parametrize("layout", LAYOUTS)
def test_generating_twice_gives_the_same_bytes(config: DeploymentConfig, layout: Layout) -> None:
    first = generate_views(config, layout)
    second = generate_views(config, layout)
    assert [v.ddl for v in first] == [v.ddl for v in second]


def test_generation_is_stable_across_processes(config: DeploymentConfig) -> None:
    code = (
        "import json\n"
        "from agent_telemetry.config import LAYOUTS, load_config\n"
        "from agent_telemetry.views import generate_views\n"
        "c = load_config('telemetry.toml')\n"
        "print(json.dumps({l: [v.sql_sha256 for v in generate_views(c, l)] for l in LAYOUTS}))"
    )
    from tests.conftest import REPO

    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    here = {layout: [v.sql_sha256 for v in generate_views(config, layout)] for layout in LAYOUTS}
    assert json.loads(out.stdout) == here


def test_view_metadata_comes_from_the_models(config: DeploymentConfig) -> None:
    views = {v.name: v for v in generate_views(config, "partitioned")}
    for spec in catalogue():
        view = views[spec.name]
        assert view.description.startswith(spec.description)
        assert [c.name for c in view.columns] == [
            "timestamp",
            "schema_version",
            *spec.field_names,
            "invalid_fields",
        ]
        tree = sqlglot.parse_one(view.query, dialect="bigquery")
        assert isinstance(tree, exp.Query)
        assert tree.named_selects == [c.name for c in view.columns]
        for field in spec.fields:
            column = next(c for c in view.columns if c.name == field.name)
            assert column.description.startswith(field.description.rstrip("."))
            if field.kind != "bool":
                assert field.domain in column.description
        assert view.labels == {
            "managed-by": "agent-telemetry",
            "schema-version": str(spec.schema_version),
            "layout": "partitioned",
            "view-kind": "event",
        }
        assert view.sql_sha256 == hashlib.sha256(view.query.encode()).hexdigest()
        assert view.table_id == f"acme-agents-prod.agent_telemetry.{spec.name}"
        assert f"description={sql_literal(view.description)}" in view.ddl.replace("\n", "")


def test_column_docs_give_a_bigquery_schema(config: DeploymentConfig) -> None:
    view = generate_views(config, "partitioned")[0]
    fields = {c.name: c.schema_field().to_api() for c in view.columns}
    assert fields["timestamp"]["type"] == "TIMESTAMP"
    assert fields["queue_wait_ms"]["type"] == "INTEGER"
    assert fields["lane"]["type"] == "STRING"
    assert fields["invalid_fields"] == {
        "name": "invalid_fields",
        "type": "STRING",
        "mode": "REPEATED",
        "description": fields["invalid_fields"]["description"],
    }


@pytest.mark.parametrize("layout", LAYOUTS)
def test_views_filter_on_event_name_and_schema_version(
    config: DeploymentConfig, layout: Layout
) -> None:
    for view in (v for v in generate_views(config, layout) if v.event is not None):
        assert f"= '{view.name}'" in view.query
        assert f".schema_version = {view.schema_version}\n" in view.query


def test_each_layout_reads_its_table(config: DeploymentConfig) -> None:
    def tables(layout: Layout) -> set[str]:
        return {
            t.sql("bigquery")
            for v in generate_views(config, layout)
            for t in sqlglot.parse_one(v.query, dialect="bigquery").find_all(exp.Table)
            if t.db and not v.reads
        }

    assert tables("partitioned") == {
        "`acme-agents-prod.agent_logs.run_googleapis_com_stdout` AS sink"
    }
    assert tables("sharded") == {
        "`acme-agents-prod.agent_logs.run_googleapis_com_stdout_*` AS sink"
    }
    assert tables("analytics") == {"`acme-agents-prod.agent_logs._AllLogs` AS sink"}
    for view in (v for v in generate_views(config, "analytics") if not v.reads):
        assert "sink.log_id = 'run.googleapis.com/stdout'" in view.query


def test_an_unknown_sink_column_fails_the_build(config: DeploymentConfig) -> None:
    source = source_plan(config, "partitioned")
    table = "`acme-agents-prod.agent_logs.run_googleapis_com_stdout`"
    with pytest.raises(ViewBuildError, match="nope"):
        compile_query(f"SELECT sink.nope AS lane FROM {table} AS sink", source, "v")
    # Unqualified, only sqlglot's column validation catches it (without it, qualify
    # leaves the name as it is and the view would fail only in BigQuery).
    with pytest.raises(ViewBuildError, match="nope"):
        compile_query(f"SELECT nope AS lane FROM {table} AS sink", source, "v")
    with pytest.raises(ViewBuildError, match=r"unknown payload column jsonPayload\.nope"):
        compile_query(f"SELECT sink.jsonPayload.nope AS lane FROM {table} AS sink", source, "v")
    with pytest.raises(ViewBuildError, match="other than the configured sink"):
        compile_query(
            "SELECT sink.lane FROM `acme-agents-prod.agent_logs.other` AS sink", source, "v"
        )


def test_an_unknown_json_key_fails_the_build(config: DeploymentConfig) -> None:
    source = source_plan(config, "analytics")
    table = "`acme-agents-prod.agent_logs._AllLogs`"
    with pytest.raises(ViewBuildError, match="unsupported JSON path"):
        compile_query(
            f"SELECT JSON_VALUE(sink.json_payload, '$.nope') AS lane FROM {table} AS sink",
            source,
            "v",
        )


def test_a_template_error_is_a_build_error_not_sql(config: DeploymentConfig) -> None:
    with pytest.raises(ViewBuildError, match="v:"):
        compile_query("SELECT FROM WHERE", source_plan(config, "partitioned"), "v")


DDL_CONTEXT = {
    "target_ref": "`p.d.v`",
    "columns": (),
    "description": "d",
    "labels": {},
    "query": "SELECT 1",
}


@pytest.mark.parametrize("missing", ["target_ref", "columns", "description", "query"])
def test_a_template_naming_a_value_it_was_not_given_fails_the_build(missing: str) -> None:
    # An undefined name must not render as nothing: a view without its name, columns,
    # description or query would be built (and maybe deployed) without a word.
    context = {k: v for k, v in DDL_CONTEXT.items() if k != missing}
    with pytest.raises(jinja2.UndefinedError, match=f"'{missing}' is undefined"):
        render("view_ddl.sql.j2", **context)
    assert "CREATE OR REPLACE VIEW `p.d.v`" in render("view_ddl.sql.j2", **DDL_CONTEXT)


@given(st.text())
def test_string_literals_round_trip_through_the_parser(text: str) -> None:
    tree = sqlglot.parse_one(f"SELECT {sql_literal(text)} AS x", dialect="bigquery")
    assert isinstance(tree, exp.Select)
    literal = tree.selects[0].this
    assert isinstance(literal, exp.Literal)
    assert literal.this == text
