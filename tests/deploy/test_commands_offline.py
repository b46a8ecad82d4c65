"""What ``views plan | approve | apply | create-sink`` decide before any server is asked: the
missing extra, the deployment file, the catalogue, the endpoint, and the views a plan
would deploy. In-process (click's runner), so ``scripts/mutation.py`` sees
``deploy/cli.py`` run; the server's side is tests/deploy/bigquery/test_cli.py."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.config import Layout
from agent_telemetry.deploy._approval import write_approval
from agent_telemetry.deploy.cli import planned_views
from agent_telemetry.project import resolve_project
from tests.deploy.test_approval import _sha, record

COMMANDS = {
    "plan": [],
    "approve": ["--by", "Ana Analyst"],
    "apply": ["--approval", "approval.json"],
    "create-sink": [],
}
ONE_EVENT = (
    "from agent_telemetry.schema.events import ChatTurn\n\n"
    "EVENTS = {ChatTurn.event_name: ChatTurn}\n"
)
CONFIG = """[source]
project = "proj-one"
dataset = "logs"
layout = "partitioned"

[target]
project = "proj-one"
dataset = "telemetry"

[catalogue]
module = "{module}"
lock = "schema.lock.json"
"""


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder with no telemetry.toml (so only ``--config`` can name one), no Google
    credentials and no metadata-server probe, and a catalogue module of its own."""
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "AGENT_TELEMETRY_BQ_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    module = f"offline_events_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(ONE_EVENT, encoding="utf-8")
    (tmp_path / "deploy.toml").write_text(CONFIG.format(module=module), encoding="utf-8")
    write_approval(record(), tmp_path / "approval.json")  # apply reads it before connecting
    yield tmp_path
    sys.modules.pop(module, None)


def run(command: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["views", command, *COMMANDS[command], *args])


@pytest.mark.parametrize("command", COMMANDS)
def test_without_the_bigquery_extra_each_command_says_how_to_install_it(
    command: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As tests/deploy/test_plan.py does in a fresh interpreter, here in this one: the
    package's client module loads again and finds google-cloud-bigquery missing."""
    import google.cloud

    monkeypatch.setitem(sys.modules, "google.cloud.bigquery", None)
    monkeypatch.delattr(google.cloud, "bigquery", raising=False)
    monkeypatch.delitem(sys.modules, "agent_telemetry.deploy._client", raising=False)

    result = run(command, "--config", "deploy.toml")

    assert (result.exit_code, result.output) == (
        2,
        "Error: google-cloud-bigquery is not installed; install the extra: "
        "pip install 'agent-telemetry[bigquery]'\n",
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_the_deployment_file_named_is_the_one_read_and_its_error_names_it(
    command: str, workspace: Path
) -> None:
    (workspace / "broken.toml").write_text("[source\n", encoding="utf-8")
    for config, error in (
        ("missing.toml", "missing.toml: no such file"),
        (
            "broken.toml",
            "broken.toml: not valid TOML (Expected ']' at the end of a table declaration "
            "(at line 1, column 8))",
        ),
    ):
        result = run(command, "--config", config)
        assert (result.exit_code, result.output) == (2, f"Error: {error}\n")


@pytest.mark.parametrize("command", ["plan", "approve", "create-sink"])
def test_a_catalogue_that_does_not_import_is_one_line_before_any_server(
    command: str, workspace: Path
) -> None:
    """Before the credentials too: there are none here, and a login would not help."""
    module = f"broken_{workspace.name.replace('-', '_')}"
    (workspace / f"{module}.py").write_text("import no_such_module_here\n", encoding="utf-8")
    (workspace / "deploy.toml").write_text(CONFIG.format(module=module), encoding="utf-8")
    result = run(command, "--config", "deploy.toml")
    assert result.exit_code == 2
    assert result.output == (
        f"Error: the catalogue module {module} does not load: "
        "ModuleNotFoundError (No module named 'no_such_module_here')\n"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_the_endpoint_and_credentials_are_refused_by_name_before_any_call(
    command: str, workspace: Path
) -> None:
    config = ["--config", "deploy.toml"]
    refused = run(command, *config, "--endpoint", "http://user:secret@127.0.0.1:1")
    assert (refused.exit_code, refused.output) == (
        2,
        "Error: endpoint must be an http(s)://host[:port] URL\n",
    )
    no_login = run(command, *config)
    assert no_login.exit_code == 2
    assert no_login.output == (
        "Error: no Google credentials found: run `gcloud auth application-default login`, "
        "or point --endpoint / $AGENT_TELEMETRY_BQ_ENDPOINT at a BigQuery API server\n"
    )


@pytest.mark.parametrize(
    ("layout", "built"), [(None, "partitioned"), ("sharded", "sharded"), ("analytics", "analytics")]
)
def test_a_plan_deploys_the_projects_own_catalogue_in_the_layout_asked(
    layout: Layout | None, built: str, workspace: Path
) -> None:
    """The views ``views plan`` compares with the deployed ones (tests/check reads them
    too): the file's catalogue (one event here, not the package's), into its target, from
    the layout ``--layout`` names or else the file's."""
    project = resolve_project(workspace / "deploy.toml")
    views = planned_views(project, layout)
    assert [(v.name, v.layout, v.project, v.dataset) for v in views] == [
        (name, built, "proj-one", "telemetry") for name in ("chat_turn", "telemetry_quality")
    ]


def _resealed(**fields: object) -> str:
    """The workspace's record with ``fields`` changed and every digest recomputed: what
    someone who edits the file and knows the format writes."""
    data = {**json.loads(record().to_json()), **fields}
    del data["field_sha256"], data["record_sha256"]
    digests = {k: _sha(v) for k, v in data.items()}
    return json.dumps({**data, "field_sha256": digests, "record_sha256": _sha(digests)})


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[" * 200 + "]" * 200, "approval.json: nested deeper than 128 levels"),
        (_resealed(valid_days=3650), "approval.json: valid_days: must be 1 to 90 days"),
        (_resealed(valid_days=0), "approval.json: valid_days: must be 1 to 90 days"),
    ],
    ids=["nested", "ten-years", "zero-days"],
)
def test_an_unusable_record_is_refused_by_name_before_any_server(
    text: str, error: str, workspace: Path
) -> None:
    """A record nested past what is parsed, or one whose validity was stretched and
    every digest recomputed: one line naming the file and the field, exit 2."""
    (workspace / "approval.json").write_text(text, encoding="utf-8")
    result = run("apply", "--config", "deploy.toml")
    assert (result.exit_code, result.output) == (2, f"Error: {error}\n")
