"""Print the README's "Analyst workflow: BigQuery" transcripts: real commands against a
fresh bqemulator, with the example deployment file.

    .venv/bin/python -m tests.deploy.bigquery.readme_transcript
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

from agent_telemetry.config import DeploymentConfig, load_config
from agent_telemetry.views import sink_schema
from tests.deploy.bigquery.emulator import REPO, running_emulator
from tests.deploy.bigquery.helpers import create_sink, emitted_lines, log_entry

CLI = Path(sys.executable).parent / "agent-telemetry"


def show(command: str, env: dict[str, str], cwd: Path) -> None:
    args = shlex.split(command)
    result = subprocess.run(
        [str(CLI), *args[1:]], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    print(f"$ {command}")
    print((result.stdout + result.stderr).rstrip())
    print(f"$ echo $?\n{result.returncode}\n")


def sink_without(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """A sink that made its own table: numbers FLOAT, no column for keys never logged."""
    schema = sink_schema()
    for field in schema:
        if field["name"] == "jsonPayload":
            field["fields"] = [
                {**f, "type": "FLOAT"} if f["type"] == "INTEGER" else f
                for f in field["fields"]
                if f["name"] not in names
            ]
    return schema


def prepare(client: bigquery.Client, config: DeploymentConfig, schema: Any = None) -> None:
    client.create_dataset(f"{config.source.project}.{config.source.dataset}", exists_ok=True)
    client.create_dataset(f"{config.target.project}.{config.target.dataset}", exists_ok=True)
    lines = emitted_lines([("chat_turn", {"tier": "public", "kind": "text"})])
    create_sink(client, None, config, [log_entry(x) for x in lines], schema)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(REPO / "telemetry.toml", work / "telemetry.toml")
        (work / "approvals").mkdir()
        config = load_config(work / "telemetry.toml")
        with running_emulator(work) as emulator:
            client = bigquery.Client(
                project=config.target.project,
                client_options=ClientOptions(api_endpoint=emulator.endpoint),
                credentials=AnonymousCredentials(),
            )
            prepare(client, config)
            env = {**os.environ, "AGENT_TELEMETRY_BQ_ENDPOINT": emulator.endpoint}

            print("## plan, approve, review, apply\n")
            show("agent-telemetry views plan --exit-code", env, work)
            show("agent-telemetry views approve --by 'Ana Analyst' -o approvals/01.json", env, work)
            record = (work / "approvals/01.json").read_text(encoding="utf-8")
            print("$ head -16 approvals/01.json")
            print("\n".join(record.splitlines()[:16]) + "\n")
            show("agent-telemetry views apply --approval approvals/01.json", env, work)
            show("agent-telemetry views plan --exit-code", env, work)
            show("agent-telemetry views apply --approval approvals/01.json", env, work)

            print("## drift\n")
            view = f"{config.target.project}.{config.target.dataset}.chat_turn"
            table = client.get_table(view)
            table.description = "Chat turns (edited in the console)"
            client.update_table(table, ["description"])
            show("agent-telemetry views plan --exit-code", env, work)
            show("agent-telemetry views approve --by 'Ana Analyst' -o approvals/02.json", env, work)
            show("agent-telemetry views apply --approval approvals/02.json", env, work)
            show("agent-telemetry views apply --approval approvals/02.json --adopt", env, work)

            print("## a sink that lacks fields\n")
            text = (work / "telemetry.toml").read_text(encoding="utf-8")
            fresh = text.replace('dataset = "agent_logs"', 'dataset = "agent_logs_eu"').replace(
                'dataset = "agent_telemetry"', 'dataset = "agent_telemetry_eu"'
            )
            (work / "eu.toml").write_text(fresh, encoding="utf-8")
            prepare(client, load_config(work / "eu.toml"), sink_without(("attempts",)))
            show("agent-telemetry views plan --config eu.toml --exit-code", env, work)
            show(
                "agent-telemetry views approve --config eu.toml --by 'Ana Analyst' "
                "-o approvals/eu-01.json",
                env,
                work,
            )
            show(
                "agent-telemetry views apply --config eu.toml --approval approvals/eu-01.json",
                env,
                work,
            )


if __name__ == "__main__":
    main()
