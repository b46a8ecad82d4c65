"""A BigQuery schema types the local sink the same, whichever spelling its types use."""

from __future__ import annotations

from typing import Any

import pytest

from agent_telemetry.views import googlesql_type, sink_fields, sink_schema
from agent_telemetry.warehouse._sink.duckdb_types import SinkSchemaError, column_types, table_fields


def _in_googlesql(field: dict[str, Any]) -> dict[str, Any]:
    spelled = {**field, "type": googlesql_type(field["type"])}
    if "fields" in field:
        spelled["fields"] = [_in_googlesql(child) for child in field["fields"]]
    return spelled


def test_googlesql_type_names_give_the_same_duckdb_table() -> None:
    googlesql = [_in_googlesql(f) for f in sink_schema("partitioned")]
    assert any(f["type"] == "STRUCT" for f in googlesql)
    expected = column_types(sink_fields("partitioned"))
    assert column_types(table_fields(googlesql)) == expected
    assert expected["timestamp"] == "TIMESTAMPTZ"
    assert '"schema_version" BIGINT' in expected["jsonPayload"]
    assert '"invalid_fields" VARCHAR[]' in expected["jsonPayload"]


def test_a_field_without_a_name_is_a_schema_error() -> None:
    with pytest.raises(SinkSchemaError, match="has no name"):
        table_fields([{"type": "STRING"}])
