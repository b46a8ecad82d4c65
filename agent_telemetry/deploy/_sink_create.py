"""Create a sink where there is none: the source and target datasets and the sink table,
with the schema the catalogue's events imply (``views.sink_fields``).

A log sink that creates its own table adds a payload column only when a line first
carries that key; a table created here has every field from the start, so every view's
dry run passes before the first line lands. Nothing that exists is touched: an existing
dataset or table is reported and left as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.deploy._client import BigQueryWarehouse
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import sink_fields

# Cloud Logging partitions a sink's table by day on the entry's timestamp.
PARTITION_COLUMN = "timestamp"


def sink_table_id(config: DeploymentConfig, layout: Layout, today: datetime) -> str:
    """The table to create: the configured one, or today's date shard of a sharded sink."""
    table = config.source.table_for(layout)
    if table.endswith("*"):
        table = table[:-1] + today.strftime("%Y%m%d")
    return f"{config.source.project}.{config.source.dataset}.{table}"


def create_sink(
    warehouse: BigQueryWarehouse,
    config: DeploymentConfig,
    layout: Layout | None,
    specs: tuple[EventSpec, ...],
    today: datetime | None = None,
) -> Iterator[str]:
    """Create what is missing, one line per dataset and table saying what happened."""
    layout = layout or config.source.layout
    if layout == "analytics":
        raise ValueError("the analytics layout reads _AllLogs, which Log Analytics owns")
    for project, dataset in (
        (config.source.project, config.source.dataset),
        (config.target.project, config.target.dataset),
    ):
        made = warehouse.create_dataset(project, dataset)
        yield f"{'created' if made else 'exists '} dataset {project}.{dataset}"
    table_id = sink_table_id(config, layout, today or datetime.now(UTC))
    fields = sink_fields(layout, specs)
    day = PARTITION_COLUMN if layout == "partitioned" else None
    made = warehouse.create_table(table_id, fields, day_partition=day)
    shape = f"{len(fields)} columns" + (", partitioned by day on timestamp" if day else "")
    yield f"{'created' if made else 'exists '} table   {table_id}" + (f" ({shape})" if made else "")
