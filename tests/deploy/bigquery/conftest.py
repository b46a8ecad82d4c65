"""A real BigQuery API on loopback: ``bqemulator`` in its own venv, driven by the real client.

The emulator starts once per session (see ``emulator.py``), so once on each xdist worker
that runs these tests: ``make test`` splits them into two groups (tests/scheduling.py).
If it cannot start, every test here fails with the reason and the tail of its log: these
tests never skip, and ``make test`` builds the emulator's venv first.

Emulator gaps (bqemulator 1.4.0) the deployment is designed around, not tested less:
- ``tables.get`` of a view returns no ``view.query``: what was applied is recorded in
  labels, and a view's output columns are read from a dry run of ``SELECT *`` from it;
- ``tables.patch`` of a schema changes the catalog only, not the DuckDB storage, so a
  field added to the sink is listed by ``get_table`` but not queryable until
  ``helpers.resync_emulator_storage`` does what BigQuery does by itself;
- a 500 (e.g. a label patched to null) is retried by the client for ten minutes: every
  call passes a short retry deadline;
- over a wildcard (sharded) table, a query reading an array a CTE built from the sink
  fails (a Binder Error), so the sharded telemetry_quality cannot run here (DuckDB runs
  it: tests/warehouse/test_dedupe.py).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest

from agent_telemetry.config import DeploymentConfig, parse_config
from agent_telemetry.deploy import BigQueryWarehouse
from tests.deploy.bigquery.emulator import PROJECT, Emulator, EmulatorError, running_emulator

RETRY_DEADLINE_S = 20.0


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    try:
        with running_emulator(tmp_path_factory.mktemp("bqemulator")) as server:
            yield server
    except EmulatorError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def bq_client(emulator: Emulator) -> Any:
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    return bigquery.Client(
        project=emulator.project,
        client_options=ClientOptions(api_endpoint=emulator.endpoint),
        credentials=AnonymousCredentials(),
    )


@pytest.fixture(scope="session")
def bq_retry() -> Any:
    from google.cloud.bigquery.retry import DEFAULT_RETRY

    return DEFAULT_RETRY.with_deadline(RETRY_DEADLINE_S)


@pytest.fixture(scope="session")
def warehouse(bq_client: Any, emulator: Emulator) -> BigQueryWarehouse:
    return BigQueryWarehouse(
        bq_client, endpoint=emulator.endpoint, retry_deadline_s=RETRY_DEADLINE_S
    )


_counter = itertools.count()


@pytest.fixture
def dataset_names(bq_client: Any, bq_retry: Any) -> tuple[str, str]:
    """A fresh source and target dataset per test, so tests share one emulator safely
    (named by process too: a shared emulator serves many test processes)."""
    n = f"{os.getpid()}_{next(_counter)}"
    source, target = f"logs_{n}", f"telemetry_{n}"
    for name in (source, target):
        bq_client.create_dataset(f"{PROJECT}.{name}", retry=bq_retry)
    return source, target


@pytest.fixture
def deployment(dataset_names: tuple[str, str]) -> DeploymentConfig:
    source, target = dataset_names
    return parse_config(
        {
            "source": {"project": PROJECT, "dataset": source, "layout": "partitioned"},
            "target": {"project": PROJECT, "dataset": target},
        }
    )
