"""The TypeScript and Go emitters of examples/ write lines the catalogue accepts (issue 38).

Each example is built with its own toolchain and run; every line it writes validates
against the JSON Schema ``agent-telemetry jsonschema`` exports for examples/service
(ajv under Node and Python ``jsonschema``), and check-logs --strict-types calls the
output clean. The closed sets each example declares are the schema's, so an example
cannot drift from the catalogue.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.jsonschema.differential import NODE_DIR, ROOT, ajv_verdicts, python_verdicts

SERVICE_CONFIG = ROOT / "examples" / "service" / "telemetry.toml"
CLI = [sys.executable, "-m", "agent_telemetry._entry"]
WRITTEN = {"cache_lookup", "pipeline_run"}  # the two events the examples write


def _run(command: list[str], **kwargs: Any) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        command, capture_output=True, text=True, check=True, env=env, **kwargs
    ).stdout


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The service's schema, as `agent-telemetry jsonschema` prints it."""
    path = tmp_path_factory.mktemp("schema") / "events.schema.json"
    path.write_text(_run([*CLI, "jsonschema", "--config", str(SERVICE_CONFIG)]), encoding="utf-8")
    return path


def _typescript(out: Path) -> Path:
    tsc = NODE_DIR / "node_modules" / ".bin" / "tsc"
    assert tsc.exists(), "run `make test`: npm ci in examples/typescript"
    _run([str(tsc), "-p", str(NODE_DIR), "--outDir", str(out)])
    (out / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    node = shutil.which("node")
    assert node is not None
    return out / "emit.js"


def _go(out: Path) -> Path:
    go = shutil.which("go")
    assert go is not None, "go is not installed (make test's set-up installs golang-go)"
    binary = out / "emit"
    _run([go, "build", "-o", str(binary), "."], cwd=ROOT / "examples" / "go")
    return binary


@pytest.fixture(scope="module", params=["typescript", "go"])
def emitter(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs the built example."""
    out = tmp_path_factory.mktemp(request.param)
    if request.param == "typescript":
        return [shutil.which("node") or "node", str(_typescript(out))]
    return [str(_go(out))]


def test_every_line_validates_and_check_logs_calls_it_clean(
    emitter: list[str], exported: Path, tmp_path: Path
) -> None:
    output = _run(emitter)
    lines = output.splitlines()
    assert {json.loads(line)["event"] for line in lines} == WRITTEN
    assert ajv_verdicts(exported, lines) == [True] * len(lines)
    schema = json.loads(exported.read_text(encoding="utf-8"))
    assert python_verdicts(schema, lines) == [True] * len(lines)
    path = tmp_path / "out.jsonl"
    path.write_text(output, encoding="utf-8")
    report = json.loads(
        _run(
            [
                *CLI,
                "check-logs",
                "--config",
                str(SERVICE_CONFIG),
                "--strict-types",
                "--format",
                "json",
                str(path),
            ]
        )
    )
    assert report["clean"]
    assert report["telemetry_lines"] == len(lines)
    # The precision rounding shows: a run's 1,234,567 ms waited is written 1,230,000.
    waits = [json.loads(line).get("queue_wait_ms") for line in lines]
    assert 1_230_000 in waits


def test_the_closed_sets_are_the_schemas(emitter: list[str], exported: Path) -> None:
    declared: dict[str, dict[str, list[str]]] = json.loads(_run([*emitter, "closed-sets"]))
    schema = json.loads(exported.read_text(encoding="utf-8"))
    assert set(declared) == WRITTEN
    for event, sets in declared.items():
        properties = schema["$defs"][f"{event}.v1"]["properties"]
        for name, members in sets.items():
            field = properties[name]
            values = field["enum"] if "enum" in field else field["anyOf"][0]["enum"]
            assert members == values, f"{event}.{name}"
    # Every closed set of a field the example writes is declared.
    for line in _run(emitter).splitlines():
        record = json.loads(line)
        enums = {
            name
            for name, field in schema["$defs"][f"{record['event']}.v1"]["properties"].items()
            if "enum" in field or "enum" in field.get("anyOf", [{}])[0]
        }
        assert enums & set(record) <= set(declared[record["event"]]) | {"invalid_fields"}
