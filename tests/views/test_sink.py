"""The sink table schema: the LogEntry envelope a Cloud Logging sink writes, payload typed from
the models."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from google.cloud.bigquery import SchemaField

from agent_telemetry.cli import main
from agent_telemetry.schema import EventSpec, FieldSpec, catalogue
from agent_telemetry.views import sink_schema
from agent_telemetry.views._sink import payload_fields, table_columns

# Column names of a Cloud Logging sink table for Cloud Run stdout: LogEntry field names
# keep their case (https://cloud.google.com/logging/docs/export/bigquery).
LOG_ENTRY = [
    "logName",
    "resource",
    "textPayload",
    "jsonPayload",
    "timestamp",
    "receiveTimestamp",
    "severity",
    "insertId",
    "labels",
    "trace",
    "spanId",
    "traceSampled",
    "sourceLocation",
    "split",
]
TYPES = {"enum": "STRING", "int": "INTEGER", "bool": "BOOLEAN"}


def _payload(layout: str = "partitioned") -> dict[str, dict[str, object]]:
    record = next(f for f in sink_schema(layout) if f["name"] == "jsonPayload")  # type: ignore[arg-type]
    assert record["type"] == "RECORD"
    return {f["name"]: f for f in record["fields"]}


def test_sink_schema_has_the_log_entry_envelope() -> None:
    assert [f["name"] for f in sink_schema("partitioned")] == LOG_ENTRY
    by_name = {f["name"]: f for f in sink_schema("partitioned")}
    assert by_name["timestamp"]["type"] == "TIMESTAMP"
    assert by_name["receiveTimestamp"]["type"] == "TIMESTAMP"
    assert [f["name"] for f in by_name["resource"]["fields"]] == ["type", "labels"]


@pytest.mark.parametrize("spec", catalogue(), ids=lambda s: s.name)
def test_every_model_field_is_a_typed_payload_column(spec: EventSpec) -> None:
    payload = _payload()
    for field in spec.fields:
        column = payload[field.name]
        assert column["type"] == TYPES[field.kind]
        assert column["mode"] == "NULLABLE"
        assert field.description in str(column["description"])


def test_envelope_keys_are_typed() -> None:
    payload = _payload()
    assert payload["event"]["type"] == "STRING"
    assert payload["schema_version"]["type"] == "INTEGER"
    assert payload["time"]["type"] == "STRING"
    assert (payload["invalid_fields"]["type"], payload["invalid_fields"]["mode"]) == (
        "STRING",
        "REPEATED",
    )
    assert payload["unknown_fields"]["type"] == "INTEGER"


def test_sharded_sink_has_the_same_schema() -> None:
    assert sink_schema("sharded") == sink_schema("partitioned")


def test_analytics_has_no_sink_table_to_create() -> None:
    with pytest.raises(ValueError, match="_AllLogs"):
        sink_schema("analytics")


def test_schema_loads_in_the_bigquery_client() -> None:
    fields = [SchemaField.from_api_repr(f) for f in sink_schema("partitioned")]
    payload = next(f for f in fields if f.name == "jsonPayload")
    assert payload.field_type == "RECORD"
    assert {f.name for f in payload.fields} >= {"lane", "invalid_fields", "passed"}


def test_a_field_name_shared_by_events_must_agree_on_type() -> None:
    one = EventSpec("a", 1, "A.", (FieldSpec("n", "int", False, "N.", ge=0, le=1),))
    two = EventSpec("b", 1, "B.", (FieldSpec("n", "enum", False, "N.", members=("x",)),))
    with pytest.raises(ValueError, match=r"b\.n: type STRING conflicts with a\.n \(INTEGER\)"):
        payload_fields((one, two))
    same = EventSpec("c", 1, "C.", (FieldSpec("n", "int", False, "Other N.", ge=0, le=9),))
    merged = {f.name: f for f in payload_fields((one, same))}
    assert merged["n"].description == "a: N. c: Other N."


def test_duckdb_column_types_follow_the_sink_schema() -> None:
    columns = table_columns("partitioned")
    assert columns["timestamp"] == "TIMESTAMP"
    assert columns["jsonPayload"].startswith("STRUCT<event STRING, schema_version INT64")
    assert "invalid_fields ARRAY<STRING>" in columns["jsonPayload"]
    assert table_columns("analytics")["json_payload"] == "JSON"


@pytest.mark.parametrize("layout", ["partitioned", "sharded"])
def test_sink_schema_command_prints_the_schema(layout: str) -> None:
    result = CliRunner().invoke(main, ["sink-schema", "--layout", layout])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == sink_schema(layout)  # type: ignore[arg-type]


def test_sink_schema_command_refuses_analytics() -> None:
    result = CliRunner().invoke(main, ["sink-schema", "--layout", "analytics"])
    assert result.exit_code == 2
