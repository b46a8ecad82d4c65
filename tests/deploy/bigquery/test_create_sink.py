"""``agent-telemetry views create-sink`` against bqemulator: what a local recipe needs
before plan, approve and apply (docs/analyst-bigquery.md runs that recipe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_telemetry.config import DeploymentConfig, load_config
from agent_telemetry.views import sink_schema
from tests.deploy.bigquery.emulator import PROJECT, Emulator
from tests.deploy.bigquery.helpers import create_sink, sink_id
from tests.deploy.bigquery.test_cli import run, write_config


def test_create_sink_makes_what_a_first_plan_needs_and_every_dry_run_passes(
    tmp_path: Path, emulator: Emulator, bq_client: Any, deployment: DeploymentConfig
) -> None:
    # Datasets nobody made yet (the fixture's exist already).
    config = write_config(
        tmp_path / "telemetry.toml",
        f"{deployment.source.dataset}_new",
        f"{deployment.target.dataset}_new",
    )
    deployment = load_config(config)
    endpoint = ["--config", str(config), "--endpoint", emulator.endpoint]

    made = run(["views", "create-sink", *endpoint])
    assert made.exit_code == 0, made.output
    assert made.output.splitlines() == [
        f"created dataset {PROJECT}.{deployment.source.dataset}",
        f"created dataset {PROJECT}.{deployment.target.dataset}",
        f"created table   {sink_id(deployment)} "
        f"({len(sink_schema())} columns, partitioned by day on timestamp)",
    ]
    table = bq_client.get_table(sink_id(deployment))
    assert table.time_partitioning.field == "timestamp"
    assert [f.to_api_repr() for f in table.schema] == sink_schema()

    plan = run(["views", "plan", *endpoint])
    assert plan.exit_code == 0, plan.output
    assert "sink " + sink_id(deployment) + ": every payload field present" in plan.output
    assert "dry run: 6 ok, 0 failed" in plan.output


def test_an_existing_sink_is_left_as_it_is(
    tmp_path: Path,
    emulator: Emulator,
    bq_client: Any,
    bq_retry: Any,
    deployment: DeploymentConfig,
) -> None:
    """A log sink's own table (fewer columns) is never replaced or patched by create-sink:
    --patch-sink at apply, after approval, is the only way a sink's schema changes."""
    few = [f for f in sink_schema() if f["name"] != "jsonPayload"]
    create_sink(bq_client, bq_retry, deployment, schema=few)
    before = bq_client.get_table(sink_id(deployment))
    config = write_config(
        tmp_path / "telemetry.toml", deployment.source.dataset, deployment.target.dataset
    )

    again = run(["views", "create-sink", "--config", str(config), "--endpoint", emulator.endpoint])
    assert again.exit_code == 0, again.output
    assert again.output.splitlines() == [
        f"exists  dataset {PROJECT}.{deployment.source.dataset}",
        f"exists  dataset {PROJECT}.{deployment.target.dataset}",
        f"exists  table   {sink_id(deployment)}",
    ]
    after = bq_client.get_table(sink_id(deployment))
    assert [f.to_api_repr() for f in after.schema] == few
    assert after.etag == before.etag


def test_the_analytics_layout_has_no_sink_to_create(
    tmp_path: Path, emulator: Emulator, deployment: DeploymentConfig
) -> None:
    config = write_config(
        tmp_path / "telemetry.toml", deployment.source.dataset, deployment.target.dataset
    )
    refused = run(
        [
            "views",
            "create-sink",
            "--config",
            str(config),
            "--endpoint",
            emulator.endpoint,
            "--layout",
            "analytics",
        ]
    )
    assert refused.exit_code == 2, refused.output
    assert refused.output.strip().endswith(
        "the analytics layout reads _AllLogs, which Log Analytics owns"
    )
