"""A real BigQuery API on loopback: ``bqemulator`` in its own venv, driven by the real client.

The emulator is started once per session with ``--rest-port 0 --grpc-port 0``: the kernel
picks free loopback ports and the emulator reports the REST port it bound in its
``rest.listen`` log line, so there is no window in which another process can take a port
we probed. If it cannot start, every test here fails with the reason and the tail of its
log: these tests never skip (``make test`` builds the emulator's venv first).

Known emulator gaps these tests are designed around (bqemulator 1.4.0):
- ``tables.get`` of a view returns no ``view.query``: what was applied is read back from
  labels, and a view's output columns from a dry run of ``SELECT * FROM view``;
- ``tables.patch`` of a schema changes the catalog only, not the DuckDB storage, so a
  field added to the sink is listed by ``get_table`` but not yet queryable
  (``resync_emulator_storage`` below does what BigQuery does itself);
- a label set to null in a patch is a 500, which the client retries for ten minutes:
  every call here passes a short retry deadline.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
EMULATOR_ENV = "AGENT_TELEMETRY_BQEMULATOR"
DEFAULT_EMULATOR = REPO / ".venv-bqemulator" / "bin" / "bqemulator"
PROJECT = "at-emulator"
START_TIMEOUT_S = 90.0  # two shared cores; a cold start takes a few seconds
STOP_TIMEOUT_S = 15.0
RETRY_DEADLINE_S = 20.0


@dataclass(frozen=True)
class Emulator:
    endpoint: str
    project: str
    log: Path


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _bound_rest_port(log: Path) -> int | None:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if '"rest.listen"' not in line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("event") == "rest.listen" and isinstance(record.get("port"), int):
            return int(record["port"])
    return None


def _ready(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/readyz", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    executable = Path(os.environ.get(EMULATOR_ENV, DEFAULT_EMULATOR))
    if not executable.is_file():
        pytest.fail(
            f"bqemulator not found at {executable}: run `make .venv-bqemulator/.installed` "
            f"or set {EMULATOR_ENV} to its path",
            pytrace=False,
        )
    workdir = tmp_path_factory.mktemp("bqemulator")
    log = workdir / "emulator.log"
    command = [
        str(executable),
        "start",
        "--rest-host",
        "127.0.0.1",
        "--rest-port",
        "0",
        "--grpc-host",
        "127.0.0.1",
        "--grpc-port",
        "0",
        "--project",
        PROJECT,
        "--ephemeral",
        "--log-format",
        "json",
        "--log-level",
        "info",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=workdir
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        endpoint = None
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(
                    f"bqemulator exited with code {process.returncode} before it was ready; "
                    f"log tail:\n{_tail(log)}",
                    pytrace=False,
                )
            port = _bound_rest_port(log)
            if port is not None:
                endpoint = f"http://127.0.0.1:{port}"
                if _ready(endpoint):
                    break
            time.sleep(0.1)
        else:
            pytest.fail(
                f"bqemulator was not ready within {START_TIMEOUT_S:.0f}s "
                f"(REST endpoint: {endpoint or 'not bound'}); log tail:\n{_tail(log)}",
                pytrace=False,
            )
        assert endpoint is not None
        yield Emulator(endpoint=endpoint, project=PROJECT, log=log)
    finally:
        _stop(process)


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


_counter = itertools.count()


@pytest.fixture
def dataset_names(bq_client: Any, bq_retry: Any) -> tuple[str, str]:
    """A fresh source and target dataset per test, so tests share one emulator safely."""
    n = next(_counter)
    source, target = f"logs_{n}", f"telemetry_{n}"
    for name in (source, target):
        bq_client.create_dataset(f"{PROJECT}.{name}", retry=bq_retry)
    return source, target
