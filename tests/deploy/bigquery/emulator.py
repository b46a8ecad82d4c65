"""Start and stop ``bqemulator`` (a BigQuery API server) on loopback; no pytest here, so
the docs transcripts (test_docs_transcripts.py) use it too.

The emulator is started with ``--rest-port 0 --grpc-port 0``: the kernel picks free
loopback ports and the emulator reports the REST port it bound in its ``rest.listen``
log line, so no other process can take a port between probing and binding.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
EMULATOR_ENV = "AGENT_TELEMETRY_BQEMULATOR"
# An emulator already running (``scripts/mutation.py`` starts one for all the deploy
# group's mutants): the tests use it instead of starting their own.
ENDPOINT_ENV = "AGENT_TELEMETRY_BQEMULATOR_ENDPOINT"
DEFAULT_EMULATOR = REPO / ".venv-bqemulator" / "bin" / "bqemulator"
PROJECT = "at-emulator"
START_TIMEOUT_S = 90.0  # two shared cores; a cold start takes a few seconds
STOP_TIMEOUT_S = 15.0


class EmulatorError(RuntimeError):
    """The emulator could not start; the message carries the reason and its log tail."""


@dataclass(frozen=True)
class Emulator:
    endpoint: str
    project: str
    log: Path


def tail(path: Path, lines: int = 25) -> str:
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


def executable() -> Path:
    return Path(os.environ.get(EMULATOR_ENV, DEFAULT_EMULATOR))


@contextmanager
def running_emulator(workdir: Path) -> Iterator[Emulator]:
    """A started emulator (stopped on exit), or the one ENDPOINT_ENV names (left running);
    raises EmulatorError with the reason."""
    shared = os.environ.get(ENDPOINT_ENV)
    if shared:
        if not _ready(shared):
            raise EmulatorError(f"{ENDPOINT_ENV}={shared}: no emulator answers /readyz there")
        yield Emulator(endpoint=shared, project=PROJECT, log=workdir / "emulator.log")
        return
    program = executable()
    if not program.is_file():
        raise EmulatorError(
            f"bqemulator not found at {program}: run `make .venv-bqemulator/.installed` "
            f"or set {EMULATOR_ENV} to its path"
        )
    log = workdir / "emulator.log"
    command = [
        str(program),
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
        while True:
            if process.poll() is not None:
                raise EmulatorError(
                    f"bqemulator exited with code {process.returncode} before it was ready; "
                    f"log tail:\n{tail(log)}"
                )
            port = _bound_rest_port(log)
            if port is not None:
                endpoint = f"http://127.0.0.1:{port}"
                if _ready(endpoint):
                    break
            if time.monotonic() > deadline:
                raise EmulatorError(
                    f"bqemulator was not ready within {START_TIMEOUT_S:.0f}s "
                    f"(REST endpoint: {endpoint or 'not bound'}); log tail:\n{tail(log)}"
                )
            time.sleep(0.1)
        yield Emulator(endpoint=endpoint, project=PROJECT, log=log)
    finally:
        _stop(process)
