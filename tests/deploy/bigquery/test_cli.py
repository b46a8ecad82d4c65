"""``agent-telemetry views plan | approve | apply`` end to end against bqemulator."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.config import DeploymentConfig
from agent_telemetry.views import generate_views, sink_schema
from tests.deploy.bigquery.emulator import PROJECT, Emulator
from tests.deploy.bigquery.helpers import create_sink, emitted_lines, log_entry, sink_id


def write_config(path: Path, source: str, target: str, project: str = PROJECT) -> Path:
    path.write_text(
        f'[source]\nproject = "{project}"\ndataset = "{source}"\nlayout = "partitioned"\n\n'
        f'[target]\nproject = "{project}"\ndataset = "{target}"\n',
        encoding="utf-8",
    )
    return path


def run(args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        main, args, env={"AGENT_TELEMETRY_BQ_DEADLINE": "20", **(env or {})}, catch_exceptions=False
    )


@pytest.fixture
def config_file(
    tmp_path: Path, bq_client: Any, bq_retry: Any, deployment: DeploymentConfig
) -> Path:
    lines = emitted_lines([("chat_turn", {"tier": "public", "kind": "text"})])
    create_sink(bq_client, bq_retry, deployment, [log_entry(x) for x in lines])
    return write_config(
        tmp_path / "telemetry.toml", deployment.source.dataset, deployment.target.dataset
    )


ONE_EVENT = """from agent_telemetry.schema.events import ChatTurn

EVENTS = {ChatTurn.event_name: ChatTurn}
"""


@pytest.fixture
def one_event_config(
    tmp_path: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """``config_file`` with a catalogue of the package's own chat_turn alone: two views
    (chat_turn, telemetry_quality) instead of six, for the tests whose promise holds for
    any catalogue (an error's exit, text read back, a file written): every plan dry-runs
    each view twice, and the quality view of four events is the emulator's slowest query
    (the package's own six views go through the command line in the workflow and formats
    tests)."""
    name = f"one_event_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(ONE_EVENT, encoding="utf-8")
    with config_file.open("a", encoding="utf-8") as config:
        config.write(f'\n[catalogue]\nmodule = "{name}"\nlock = "schema.lock.json"\n')
    monkeypatch.setattr(sys, "path", list(sys.path))  # the catalogue's folder joins it
    yield config_file
    sys.modules.pop(name, None)


def test_plan_approve_apply_then_plan_again_through_the_cli(
    tmp_path: Path, emulator: Emulator, config_file: Path, deployment: DeploymentConfig
) -> None:
    names = [v.name for v in generate_views(deployment)]
    endpoint = ["--endpoint", emulator.endpoint]

    plan = run(["views", "plan", "--config", str(config_file), *endpoint, "--exit-code"])
    assert plan.exit_code == 1, plan.output  # changes pending
    assert [line.split() for line in plan.output.splitlines() if line.startswith("  ")] == [
        ["create", name] for name in names
    ]
    plan_hash = plan.output.splitlines()[-1].removeprefix("plan hash: ")

    record = tmp_path / "approval.json"
    approved = run(
        [
            "views",
            "approve",
            "--config",
            str(config_file),
            "--by",
            "Ana Analyst",
            "-o",
            str(record),
        ],
        env={"AGENT_TELEMETRY_BQ_ENDPOINT": emulator.endpoint},
    )
    assert approved.exit_code == 0, approved.output
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["plan_hash"] == plan_hash
    assert data["target"] == f"{PROJECT}.{deployment.target.dataset}"
    assert data["approved_by"] == "Ana Analyst"
    assert data["approver_identity"]["by_flag"] == "Ana Analyst"
    assert set(data["field_sha256"]) == set(data) - {"field_sha256", "record_sha256"}
    assert data["approved_at"].endswith("Z")
    assert [(v["name"], v["action"], v["sql_sha256"]) for v in data["views"]] == [
        (v.name, "create", v.sql_sha256) for v in generate_views(deployment)
    ]

    apply = run(
        ["views", "apply", "--config", str(config_file), *endpoint, "--approval", str(record)]
    )
    assert apply.exit_code == 0, apply.output
    assert [line.split() for line in apply.output.splitlines() if line.startswith("  ")] == [
        ["created", name] for name in names
    ]

    again = run(["views", "plan", "--config", str(config_file), *endpoint, "--exit-code"])
    assert again.exit_code == 0, again.output
    assert {line.split()[0] for line in again.output.splitlines() if line.startswith("  ")} == {
        "unchanged"
    }
    noop = run(
        ["views", "apply", "--config", str(config_file), *endpoint, "--approval", str(record)]
    )
    assert noop.exit_code == 0, noop.output
    assert noop.output.splitlines()[-1] == "applied: 6 unchanged (nothing to do)"


def test_errors_exit_2_so_that_1_always_means_something_to_act_on(
    tmp_path: Path, emulator: Emulator, one_event_config: Path, deployment: DeploymentConfig
) -> None:
    config_file = one_event_config
    endpoint = ["--endpoint", emulator.endpoint]
    missing = write_config(tmp_path / "missing.toml", deployment.source.dataset, "no_such_dataset")
    result = run(["views", "plan", "--config", str(missing), *endpoint, "--exit-code"])
    assert result.exit_code == 2
    assert "target dataset at-emulator.no_such_dataset does not exist" in result.output

    assert run(["views", "plan", "--config", str(config_file), "--no-such-flag"]).exit_code == 2
    # no --by and no git identity to default to
    (tmp_path / "empty-gitconfig").write_text("")
    no_identity = {
        "GIT_CONFIG_GLOBAL": str(tmp_path / "empty-gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        refused = run(["views", "approve", "--config", str(config_file), *endpoint], no_identity)
    assert refused.exit_code == 2
    assert "no name given and no git identity" in refused.output

    record = tmp_path / "approval.json"
    run(
        [
            "views",
            "approve",
            "--config",
            str(config_file),
            *endpoint,
            "--by",
            "A",
            "-o",
            str(record),
        ]
    )
    edited = json.loads(record.read_text(encoding="utf-8"))
    edited["views"][0]["deployed_sha256"] = "0" * 64
    record.write_text(json.dumps(edited), encoding="utf-8")
    result = run(
        ["views", "apply", "--config", str(config_file), *endpoint, "--approval", str(record)]
    )
    assert result.exit_code == 2
    assert "edited after approval: views" in result.output

    edited = json.loads(record.read_text(encoding="utf-8"))
    edited["views"][0]["deployed_sha256"] = json.loads(record.read_text())["views"][0][
        "deployed_sha256"
    ]
    run(
        [
            "views",
            "approve",
            "--config",
            str(config_file),
            *endpoint,
            "--by",
            "A",
            "-o",
            str(record),
        ]
    )
    edited = json.loads(record.read_text(encoding="utf-8"))
    edited["approved_by"] = "Mallory"
    record.write_text(json.dumps(edited), encoding="utf-8")
    result = run(
        ["views", "apply", "--config", str(config_file), *endpoint, "--approval", str(record)]
    )
    assert result.exit_code == 2
    assert "edited after approval: approved_by" in result.output
    assert "Mallory" not in result.output

    result = run(
        ["views", "plan", "--config", str(config_file), "--endpoint", "http://u:p@127.0.0.1:1"]
    )
    assert result.exit_code == 2
    assert "endpoint must be an http(s)://host[:port] URL" in result.output
    assert "u:p" not in result.output


HOSTILE = [
    ("target", "dataset", "telemetry`; DROP TABLE x; --"),
    ("target", "dataset", "a.b"),
    ("source", "dataset", "logs` UNION ALL SELECT 1 --"),
    ("source", "table", "t` WHERE 1=1 --"),
    ("target", "project", "at-emulator`.x"),
    ("source", "project", "evil\nproject"),
]


@pytest.mark.parametrize(("section", "key", "value"), HOSTILE)
@pytest.mark.parametrize("command", ["plan", "approve", "apply"])
def test_hostile_identifiers_in_the_config_are_refused_before_bigquery_is_called(
    tmp_path: Path,
    emulator: Emulator,
    bq_client: Any,
    section: str,
    key: str,
    value: str,
    command: str,
) -> None:
    document = {
        "source": {"project": PROJECT, "dataset": "logs", "layout": "partitioned"},
        "target": {"project": PROJECT, "dataset": "telemetry"},
    }
    document[section][key] = value
    config = tmp_path / "telemetry.toml"
    config.write_text(
        "\n".join(
            f"[{name}]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
            for name, table in document.items()
        ),
        encoding="utf-8",
    )
    record = tmp_path / "approval.json"
    extra = {
        "plan": [],
        "approve": ["--by", "A", "-o", str(record)],
        "apply": ["--approval", str(tmp_path / "unused.json")],
    }[command]
    (tmp_path / "unused.json").write_text("{}", encoding="utf-8")
    datasets_before = sorted(d.dataset_id for d in bq_client.list_datasets())

    result = run(
        ["views", command, "--config", str(config), "--endpoint", emulator.endpoint, *extra]
    )

    assert result.exit_code == 2
    assert f"{section}.{key}:" in result.output
    assert value not in result.output
    assert not record.exists()
    assert sorted(d.dataset_id for d in bq_client.list_datasets()) == datasets_before


def test_plan_formats_and_the_review_page_against_the_server(
    tmp_path: Path, emulator: Emulator, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """json validates against docs/plan.schema.json, markdown and the review page carry the
    same hash, and approve without --by records the git identity."""
    import jsonschema

    from tests.conftest import REPO

    endpoint = ["--endpoint", emulator.endpoint]
    page = tmp_path / "review.html"
    as_json = run(
        [
            "views",
            "plan",
            "--config",
            str(config_file),
            *endpoint,
            "--format",
            "json",
            "--html",
            str(page),
        ]
    )
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.output)
    schema = json.loads((REPO / "docs" / "plan.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)
    assert {v["action"] for v in document["views"]} == {"create"}
    # The emulator reports totalBytesProcessed 0 for every dry run, so each view's day is
    # 0 without a second dry run (test_deploy.py counts the calls and has the server
    # accept each day's query); that the one-day query prunes is proved on its SQL
    # (tests/views/test_pruning.py), the figure is the server's.
    for view in document["views"]:
        dry_run = view["dry_run"]
        assert dry_run["ok"], view["name"]
        assert dry_run["one_day_bytes_processed"] == dry_run["bytes_processed"] == 0, view["name"]
    markdown = run(
        ["views", "plan", "--config", str(config_file), *endpoint, "--format", "markdown"]
    )
    assert f"Plan hash: `{document['plan_hash']}`" in markdown.output
    assert "ok, 0 bytes (0 for one day)" in markdown.output
    html = page.read_text(encoding="utf-8")
    assert document["plan_hash"] in html
    assert 'one of a day <strong class="bytes">0 bytes</strong>' in html
    assert "agent-telemetry views approve --config" in html

    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Ana Analyst\n\temail = ana@example.com\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    record = tmp_path / "approval.json"
    approved = run(["views", "approve", "--config", str(config_file), *endpoint, "-o", str(record)])
    assert approved.exit_code == 0, approved.output
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["approved_by"] == "Ana Analyst <ana@example.com>"
    assert data["plan_hash"] == document["plan_hash"]


def test_the_plan_is_the_projects_catalogue_lock_and_layout_not_the_packages(
    tmp_path: Path,
    emulator: Emulator,
    bq_client: Any,
    bq_retry: Any,
    deployment: DeploymentConfig,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A service's own deployment file names its catalogue, its lock and a layout; the
    plan reads all three, and ``--layout`` overrides the file's. The sink lacks a field
    only an event outside the catalogue has (pipeline_run's attempts): nothing to add. The
    capacity before an apply is unknown, after it the lock's, and with the lock broken the
    generated figures (``check`` reports the lock)."""
    schema = [dict(f) for f in sink_schema()]
    payload = next(f for f in schema if f["name"] == "jsonPayload")
    payload["fields"] = [f for f in payload["fields"] if f["name"] != "attempts"]
    create_sink(bq_client, bq_retry, deployment, schema=schema)
    name = f"own_events_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(ONE_EVENT, encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    config = write_config(
        tmp_path / "deploy.toml", deployment.source.dataset, deployment.target.dataset
    )
    text = config.read_text(encoding="utf-8").replace('"partitioned"', '"sharded"')
    config.write_text(f'{text}\n[catalogue]\nmodule = "{name}"\nlock = "schema.lock.json"\n')
    locked = run(["lock", "--config", str(config)])
    assert locked.exit_code == 0, locked.output
    command = ["--config", str(config), "--endpoint", emulator.endpoint, "--layout", "partitioned"]

    def plan() -> dict[str, Any]:
        result = run(["views", "plan", *command, "--format", "json"])
        assert result.exit_code == 0, result.output
        document: dict[str, Any] = json.loads(result.output)
        assert document["layout"] == "partitioned"
        assert document["sink"] == {"table": sink_id(deployment), "found": True, "missing": []}
        assert [v["name"] for v in document["views"]] == ["chat_turn", "telemetry_quality"]
        assert all(v["dry_run"]["ok"] for v in document["views"]), result.output
        [capacity] = document["capacity"]
        assert (capacity["view"], capacity["schema_version"]) == ("chat_turn", 1)
        return dict(capacity)

    first = plan()
    assert (first["deployed_version"], first["bits_before"], first["fields"]) == (None, None, [])
    record = tmp_path / "approval.json"
    approved = run(["views", "approve", *command, "--by", "A", "-o", str(record)])
    assert approved.exit_code == 0, approved.output
    applied = run(["views", "apply", *command, "--approval", str(record)])
    assert applied.exit_code == 0, applied.output
    assert plan() == {**first, "deployed_version": 1, "bits_before": first["bits_after"]}
    (tmp_path / "schema.lock.json").write_text("{", encoding="utf-8")
    assert plan() == first
    sys.modules.pop(name, None)
