"""The schema apply writes onto a view: server-derived shape, generated descriptions."""

from __future__ import annotations

from agent_telemetry.config import load_config
from agent_telemetry.deploy._decide import column_schema
from agent_telemetry.views import TableField, generate_views
from tests.conftest import EXAMPLE_CONFIG

VIEW = generate_views(load_config(EXAMPLE_CONFIG))[0]


def test_descriptions_are_generated_and_types_come_from_the_dry_run_over_a_stale_schema() -> None:
    stale = tuple(TableField(c.name, "STRING", "NULLABLE", "old text") for c in VIEW.columns)
    dry_run = (TableField("LANE", "STRING"), TableField("attempts", "INTEGER"))
    schema = column_schema(VIEW, stale, dry_run)
    assert [f.description for f in schema] == [c.description for c in VIEW.columns]
    by_name = {f.name: f for f in schema}
    assert (by_name["LANE"].type, by_name["attempts"].type) == ("STRING", "INTEGER")
    assert by_name["timestamp"].type == "STRING"  # the server's word over the generated one


def test_without_a_server_schema_the_generated_column_types_are_used() -> None:
    schema = column_schema(VIEW, (), ())
    assert [(f.name, f.type, f.mode) for f in schema] == [
        (c.name, c.type, c.mode) for c in (col.schema_field() for col in VIEW.columns)
    ]
    assert schema[-1].mode == "REPEATED"
