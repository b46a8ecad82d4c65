"""docs/analyst-bigquery.md's transcripts, run against bqemulator and compared.

Each ``<!-- docs-test: bigquery SETUP,... -->`` console block of the page is one test: its
commands run in a copy of the repository (the page's workspace, see tests/docs/runner.py)
with AGENT_TELEMETRY_BQ_ENDPOINT pointing at the emulator, after the named set-up steps
below, which do what the page says happened before the transcript (a log sink that
landed a line, an edit in the console, a sink that never saw a field). Blocks run in page
order and share the emulator's state, as the page tells one story.

With AGENT_TELEMETRY_DOCS_UPDATE=1 the page is rewritten with the real output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.config import DeploymentConfig, load_config
from agent_telemetry.views import sink_schema
from tests.deploy.bigquery.emulator import Emulator
from tests.deploy.bigquery.helpers import create_sink, emitted_lines, log_entry
from tests.docs.blocks import Step, load_page
from tests.docs.runner import EXECUTORS, PageRun, rewrite, run_console, updating

PAGE = "docs/analyst-bigquery.md"


def client_for(emulator: Emulator, config: DeploymentConfig) -> Any:
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    return bigquery.Client(
        project=config.target.project,
        client_options=ClientOptions(api_endpoint=emulator.endpoint),
        credentials=AnonymousCredentials(),
    )


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


def landed_one_line(client: Any, retry: Any, config: DeploymentConfig, schema: Any = None) -> None:
    """The source and target datasets, and a sink table holding one chat_turn line."""
    for project, dataset in (
        (config.source.project, config.source.dataset),
        (config.target.project, config.target.dataset),
    ):
        client.create_dataset(f"{project}.{dataset}", exists_ok=True, retry=retry)
    lines = emitted_lines([("chat_turn", {"tier": "public", "kind": "text"})])
    create_sink(client, retry, config, [log_entry(line) for line in lines], schema)


def sink(emulator: Emulator, retry: Any, workspace: Path) -> None:
    config = load_config(workspace / "telemetry.toml")
    landed_one_line(client_for(emulator, config), retry, config)


def console_edit(emulator: Emulator, retry: Any, workspace: Path) -> None:
    """Someone edits chat_turn's description in the console."""
    config = load_config(workspace / "telemetry.toml")
    client = client_for(emulator, config)
    view = client.get_table(f"{config.target.project}.{config.target.dataset}.chat_turn")
    view.description = "Chat turns (edited in the console)"
    client.update_table(view, ["description"], retry=retry)


def eu_sink(emulator: Emulator, retry: Any, workspace: Path) -> None:
    """eu.toml: the example deployment on fresh datasets, whose sink never saw attempts."""
    text = (workspace / "telemetry.toml").read_text(encoding="utf-8")
    eu = text.replace('dataset = "agent_logs"', 'dataset = "agent_logs_eu"').replace(
        'dataset = "agent_telemetry"', 'dataset = "agent_telemetry_eu"'
    )
    (workspace / "eu.toml").write_text(eu, encoding="utf-8")
    config = load_config(workspace / "eu.toml")
    landed_one_line(client_for(emulator, config), retry, config, sink_without(("attempts",)))


SETUPS: dict[str, Callable[[Emulator, Any, Path], None]] = {
    "sink": sink,
    "console-edit": console_edit,
    "eu-sink": eu_sink,
}


def bigquery_steps() -> list[tuple[int, Step]]:
    return [(i, s) for i, s in enumerate(load_page(PAGE).steps) if s.kind == "bigquery"]


@pytest.fixture(scope="module")
def page_run(
    emulator: Emulator, bq_retry: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PageRun]:
    def run(step: Step, workspace: Path) -> Any:
        for name in step.setups:
            SETUPS[name](emulator, bq_retry, workspace)
        return run_console(step, workspace, {"AGENT_TELEMETRY_BQ_ENDPOINT": emulator.endpoint})

    run_ = PageRun(
        load_page(PAGE), tmp_path_factory.mktemp("docs-bq"), {**EXECUTORS, "bigquery": run}
    )
    yield run_
    if updating():
        rewrite([o.replacement for o in run_.outcomes.values() if o.replacement is not None])


def test_the_page_has_bigquery_transcripts_and_known_setups() -> None:
    steps = bigquery_steps()
    assert len(steps) >= 6
    assert {name for _, step in steps for name in step.setups} == set(SETUPS)


@pytest.mark.parametrize(
    ("index", "step"), [pytest.param(*s, id=s[1].id) for s in bigquery_steps()]
)
def test_transcript(page_run: PageRun, index: int, step: Step) -> None:
    failures = page_run.outcome(index).failures()
    assert not failures, f"{step.id}:\n" + "\n\n".join(failures)
