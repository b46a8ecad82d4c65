"""The emulator fixture itself: the real client reaches it, and a server that cannot start
fails the tests with its reason instead of skipping them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.deploy.bigquery.emulator import EMULATOR_ENV, ENDPOINT_ENV, PROJECT, REPO


def test_real_client_round_trips_a_nested_table_through_the_emulator(
    bq_client: Any, bq_retry: Any, dataset_names: tuple[str, str]
) -> None:
    from google.cloud import bigquery

    source, _ = dataset_names
    schema = [
        bigquery.SchemaField("timestamp", "TIMESTAMP"),
        bigquery.SchemaField(
            "jsonPayload",
            "RECORD",
            fields=[
                bigquery.SchemaField("lane", "STRING"),
                bigquery.SchemaField("invalid_fields", "STRING", mode="REPEATED"),
            ],
        ),
    ]
    table = bq_client.create_table(
        bigquery.Table(f"{PROJECT}.{source}.sink", schema=schema), retry=bq_retry
    )
    errors = bq_client.insert_rows_json(
        table,
        [
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "jsonPayload": {"lane": "public", "invalid_fields": ["x"]},
            }
        ],
        retry=bq_retry,
    )
    assert errors == []
    rows = bq_client.query(
        "SELECT jsonPayload.lane AS lane, jsonPayload.invalid_fields AS bad"
        f" FROM `{PROJECT}.{source}.sink`",
        retry=bq_retry,
    ).result(retry=bq_retry)
    assert [(r.lane, list(r.bad)) for r in rows] == [("public", ["x"])]


def _pytest_one_emulator_test(env: dict[str, str]) -> str:
    """Run one emulator test in a fresh pytest under ``env``; its output, after it failed."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{Path(__file__)}::test_real_client_round_trips_a_nested_table_through_the_emulator",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "skipped" not in output
    return output


def _without_shared_endpoint() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != ENDPOINT_ENV}


def test_a_server_that_cannot_start_fails_the_tests_with_its_reason(tmp_path: Path) -> None:
    fake = tmp_path / "bqemulator"
    fake.write_text("#!/bin/sh\necho 'address already in use: the reason' >&2\nexit 3\n")
    fake.chmod(0o755)
    output = _pytest_one_emulator_test({**_without_shared_endpoint(), EMULATOR_ENV: str(fake)})
    assert "bqemulator exited with code 3" in output
    assert "address already in use: the reason" in output


def test_a_shared_endpoint_where_nothing_answers_fails_the_tests_by_name() -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    output = _pytest_one_emulator_test({**_without_shared_endpoint(), ENDPOINT_ENV: endpoint})
    assert f"{ENDPOINT_ENV}={endpoint}: no emulator answers /readyz there" in output
