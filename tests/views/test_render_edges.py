"""Edge cases of the generated SQL and its documentation: domain-scoped projects
(``example.com:proj``), the sharded layout's shard column."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from agent_telemetry.config import DeploymentConfig, SourceConfig, TargetConfig, parse_config
from agent_telemetry.views import generate_views, table_ref
from agent_telemetry.views._docs import data_dictionary

DOMAIN_PROJECT = "example.com:acme-logs"


def test_a_domain_scoped_project_is_quoted_part_by_part() -> None:
    # One pair of backticks around the whole path would hide the dot in the project;
    # deploy sends this text to BigQuery as it is, so pin the exact form.
    ref = table_ref(DOMAIN_PROJECT, "agent_logs", "events")
    assert ref == "`example.com:acme-logs`.`agent_logs`.`events`"
    table = sqlglot.parse_one(f"SELECT * FROM {ref}", dialect="bigquery").find(exp.Table)
    assert table is not None
    assert (table.catalog, table.db, table.name) == (DOMAIN_PROJECT, "agent_logs", "events")


def test_a_plain_project_keeps_one_pair_of_backticks() -> None:
    # The form BigQuery documents for wildcard tables.
    assert table_ref("acme-logs", "agent_logs", "events_*") == "`acme-logs.agent_logs.events_*`"


def test_a_domain_scoped_sink_named_like_a_keyword_still_builds() -> None:
    # "select" is a valid table name; left unquoted after a quoted project, the
    # generated SQL would not parse.
    config = DeploymentConfig(
        source=SourceConfig(project=DOMAIN_PROJECT, dataset="agent_logs", table="select"),
        target=TargetConfig(project="example.com:acme-views", dataset="agent_telemetry"),
    )
    views = generate_views(config, "partitioned")
    for view in (v for v in views if not v.reads):
        tables = {
            (t.catalog, t.db, t.name)
            for t in sqlglot.parse_one(view.query, dialect="bigquery").find_all(exp.Table)
            if t.db
        }
        assert tables == {(DOMAIN_PROJECT, "agent_logs", "select")}
        assert view.table_id == f"example.com:acme-views.agent_telemetry.{view.name}"


def test_a_sharded_deployment_documents_its_shard_column_as_a_string() -> None:
    # The sharded layout's own column: the data dictionary and the view's BigQuery
    # schema give its type as every other STRING column's.
    config = parse_config(
        {
            "source": {"project": "acme-logs", "dataset": "agent_logs", "layout": "sharded"},
            "target": {"project": "acme-views", "dataset": "agent_telemetry"},
        }
    )
    views = generate_views(config)
    events = [v for v in views if v.event is not None]
    for view in events:
        column = next(c for c in view.columns if c.name == "table_suffix")
        assert column.schema_field().to_api()["type"] == "STRING"
    rows = [
        line
        for line in data_dictionary(config, views).splitlines()
        if line.startswith("| `table_suffix` |")
    ]
    assert len(rows) == len(events)
    assert {row.split(" | ")[1] for row in rows} == {"STRING"}
