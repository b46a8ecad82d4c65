"""Sink tables for the integration tests: created like a log sink creates them, loaded
with lines the real emitter wrote, through the real client."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.emit import configure, emit, reset_defaults
from agent_telemetry.views import sink_schema

SINK_TABLE = "run_googleapis_com_stdout"


def emitted_lines(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The JSON lines the emitter writes (lenient mode) for ``calls``."""
    stream = io.StringIO()
    configure(stream=stream, strict=False)
    try:
        for event, fields in calls:
            emit(event, **fields)
    finally:
        reset_defaults()
    return stream.getvalue().splitlines()


def log_entry(line: str) -> dict[str, Any]:
    """A stdout JSON line as a Cloud Logging sink lands it: ``time`` and ``severity`` are
    lifted into the LogEntry, the rest is ``jsonPayload``."""
    payload = json.loads(line)
    return {
        "logName": "projects/at-emulator/logs/run.googleapis.com%2Fstdout",
        "timestamp": payload.pop("time"),
        "severity": payload.pop("severity"),
        "jsonPayload": payload,
    }


def sink_id(config: DeploymentConfig) -> str:
    table = config.source.table or SINK_TABLE
    return f"{config.source.project}.{config.source.dataset}.{table}"


def create_sink(
    client: Any,
    retry: Any,
    config: DeploymentConfig,
    entries: Sequence[Mapping[str, Any]] = (),
    schema: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """The day-partitioned sink table (models' schema unless ``schema``), loaded with
    ``entries`` by a load job."""
    from google.cloud import bigquery

    fields = [bigquery.SchemaField.from_api_repr(dict(f)) for f in (schema or sink_schema())]
    table = bigquery.Table(sink_id(config), schema=fields)
    table.time_partitioning = bigquery.TimePartitioning(field="timestamp")
    table = client.create_table(table, retry=retry)
    load(client, table, entries)


def load(client: Any, table: Any, entries: Sequence[Mapping[str, Any]]) -> None:
    from google.cloud import bigquery

    if not entries:
        return
    data = "\n".join(json.dumps(e, default=_json_default) for e in entries).encode()
    config = bigquery.LoadJobConfig(
        source_format=bigquery.SourceFormat.NEWLINE_DELIMITED_JSON, schema=table.schema
    )
    job = client.load_table_from_file(io.BytesIO(data), table, job_config=config)
    job.result(timeout=60)


def _json_default(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def rows(client: Any, retry: Any, sql: str) -> list[dict[str, Any]]:
    return [dict(r.items()) for r in client.query(sql, retry=retry).result(retry=retry)]


def resync_emulator_storage(client: Any, retry: Any, table_id: str) -> None:
    """Emulator gap: its ``tables.patch`` changes the catalog schema but not the stored
    table, so a field added to the sink is not queryable. Recreate the stored table from
    the patched schema, rows kept: what BigQuery does itself when a schema is patched."""
    from google.cloud import bigquery

    table = client.get_table(table_id, retry=retry)
    kept = [dict(r.items()) for r in client.list_rows(table, retry=retry)]
    fresh = bigquery.Table(table_id, schema=table.schema)
    fresh.time_partitioning = table.time_partitioning
    client.delete_table(table_id, retry=retry)
    load(client, client.create_table(fresh, retry=retry), kept)
