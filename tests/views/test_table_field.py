"""One shape of a schema field, one spelling of its type, whichever way it came in."""

from __future__ import annotations

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.views import (
    TableField,
    generate_views,
    googlesql_type,
    payload_fields,
    schema_type,
    sink_fields,
    sink_schema,
)


def _names(fields: tuple[TableField, ...]) -> set[str]:
    return {name for f in fields for name in (f.type, *_names(f.fields))}


def test_every_sink_type_reads_back_from_its_googlesql_name() -> None:
    for name in _names(sink_fields("partitioned")):
        assert schema_type(googlesql_type(name)) == name
    assert [googlesql_type(n) for n in ("INTEGER", "FLOAT", "BOOLEAN", "RECORD", "STRING")] == [
        "INT64",
        "FLOAT64",
        "BOOL",
        "STRUCT",
        "STRING",
    ]


def test_the_api_may_spell_a_type_either_way() -> None:
    googlesql = {"name": "n", "type": "int64", "mode": "repeated"}
    assert TableField.from_api(googlesql) == TableField("n", "INTEGER", "REPEATED")
    record = {"name": "r", "type": "STRUCT", "fields": [{"name": "b", "type": "BOOL"}]}
    assert TableField.from_api(record) == TableField(
        "r", "RECORD", fields=(TableField("b", "BOOLEAN"),)
    )


def test_the_json_schema_is_the_fields_written_out() -> None:
    assert [TableField.from_api(f) for f in sink_schema("sharded")] == list(sink_fields("sharded"))


def test_a_view_column_has_the_type_of_the_sink_field_it_reads(config: DeploymentConfig) -> None:
    sink = {f.name: f for f in payload_fields()}
    # telemetry_quality and lane_health read no field as it is
    for view in (v for v in generate_views(config, "partitioned") if v.event is not None):
        for column in view.columns:
            if column.name in sink:
                assert column.schema_field().shape() == sink[column.name].shape(), column.name


def test_a_record_is_a_struct_and_a_repeated_field_an_array_in_googlesql() -> None:
    labels = TableField("labels", "STRING", "REPEATED")
    record = TableField("r", "RECORD", fields=(TableField("n", "INTEGER"), labels))
    assert record.googlesql() == "STRUCT<n INT64, labels ARRAY<STRING>>"
    assert labels.type_label() == "ARRAY<STRING>"
