"""docs/analyst-bigquery.md's local recipe: its install command is the pinned emulator
this repository's BigQuery tests run on (emulator-requirements.txt), and its start
command, run as printed (only its two ports swapped for free ones), serves the BigQuery
API that `views create-sink` then writes to. The page's transcript of create-sink, plan,
approve and apply runs in test_docs_transcripts.py."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import pytest

from agent_telemetry.deploy._client import ENDPOINT_ENV
from tests.deploy.bigquery.emulator import REPO, _ready, _stop, executable, tail
from tests.deploy.bigquery.test_cli import run, write_config

PAGE = REPO / "docs" / "analyst-bigquery.md"
REQUIREMENTS = REPO / "tests" / "deploy" / "bigquery" / "emulator-requirements.txt"
MAKEFILE = REPO / "Makefile"
VENV = "~/.bqemulator"


def documented(test: str) -> str:
    """The ``sh`` block the page ties to ``test`` with a checked-by directive."""
    name = f"tests/deploy/bigquery/test_local_recipe.py::{test}"
    found = re.search(
        rf"<!-- docs-test: checked-by {re.escape(name)} -->\n```sh\n(.*?)```",
        PAGE.read_text(encoding="utf-8"),
        flags=re.S,
    )
    assert found is not None, f"no sh block checked by {name}"
    return found.group(1)


def test_the_documented_install_is_the_pinned_emulator() -> None:
    make_venv, install, extension = documented(
        "test_the_documented_install_is_the_pinned_emulator"
    ).split("&&")
    assert shlex.split(make_venv) == ["python3", "-m", "venv", VENV]
    words = shlex.split(install)
    assert words[:2] == [f"{VENV}/bin/pip", "install"]
    pins = [
        line.strip()
        for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert words[2:] == pins
    # The emulator loads DuckDB's spatial extension at start: from the wheel just
    # installed, so it starts offline too (as the Makefile sets the tests' one up).
    step = re.search(r"^\t\$\(EMU_VENV\)/bin/python (-c .*)$", MAKEFILE.read_text(), flags=re.M)
    assert step is not None
    assert shlex.split(extension) == [f"{VENV}/bin/python", *shlex.split(step.group(1))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_documented_start_command_serves_the_api(tmp_path: Path) -> None:
    start, export = documented("test_the_documented_start_command_serves_the_api").splitlines()
    assert start.endswith(" &")
    argv = shlex.split(start.removesuffix(" &"))
    assert argv[0] == f"{VENV}/bin/bqemulator"
    rest = argv[argv.index("--rest-port") + 1]
    assert export == f"export {ENDPOINT_ENV}=http://127.0.0.1:{rest}"
    if not executable().is_file():
        pytest.fail(f"bqemulator not found at {executable()}")
    # As printed, but this machine's emulator and two free ports (tests run side by side).
    argv[0] = str(executable())
    port = _free_port()
    argv[argv.index("--rest-port") + 1] = str(port)
    argv[argv.index("--grpc-port") + 1] = str(_free_port())
    log = tmp_path / "emulator.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while not _ready(endpoint):
            assert process.poll() is None, tail(log)
            assert time.monotonic() < deadline, tail(log)
            time.sleep(0.2)
        config = write_config(tmp_path / "local.toml", "logs", "telemetry", project="local-preview")
        made = run(["views", "create-sink", "--config", str(config), "--endpoint", endpoint])
        assert made.exit_code == 0, made.output
        assert made.output.splitlines()[0] == "created dataset local-preview.logs"
    finally:
        _stop(process)
