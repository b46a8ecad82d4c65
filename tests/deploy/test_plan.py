"""Classification and diffs on plain deployed states, including what real BigQuery returns
and the emulator does not (``view.query``); endpoint and deadline settings; the missing
extra. No server needed."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent_telemetry.config import load_config
from agent_telemetry.deploy._client import (
    DEADLINE_ENV,
    check_endpoint,
    retry_deadline_from_env,
)
from agent_telemetry.deploy._decide import column_schema
from agent_telemetry.deploy._plan import (
    META_LABEL,
    PENDING,
    SQL_LABEL,
    DeployedView,
    deployment_labels,
    judge_view,
    render_diff,
    sql_digest,
)
from agent_telemetry.deploy._types import BigQueryError, DryRun, TableState
from agent_telemetry.views import ViewDefinition, generate_views
from tests.conftest import EXAMPLE_CONFIG

VIEWS = generate_views(load_config(EXAMPLE_CONFIG))


def as_applied(view: ViewDefinition, *, with_query: bool = True) -> DeployedView:
    """The view as BigQuery reports it after apply: SQL, labels, descriptions, schema."""
    schema = column_schema(view, (), ())
    state = TableState(
        table_id=view.table_id,
        kind="VIEW",
        labels={**deployment_labels(view), "team": "growth"},
        description=view.description,
        schema=schema,
        view_query=view.query if with_query else None,
        modified_ms=1,
    )
    return DeployedView(state, DryRun(schema))


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_the_sql_label_is_the_sql_sha256_the_approval_records(view: ViewDefinition) -> None:
    assert sql_digest(view.query) == view.sql_sha256
    assert deployment_labels(view)[SQL_LABEL] == view.sql_sha256[:32]
    assert all(len(value) <= 63 for value in deployment_labels(view).values())


@pytest.mark.parametrize("with_query", [True, False])
def test_a_view_as_applied_is_unchanged(with_query: bool) -> None:
    for view in VIEWS:
        assert judge_view(view, as_applied(view, with_query=with_query)).action == "unchanged"


def test_sql_edited_outside_the_tool_is_drift_when_the_server_returns_the_sql() -> None:
    view = VIEWS[0]
    deployed = as_applied(view)
    assert deployed.state is not None
    edited = replace(deployed.state, view_query=view.query.replace("WHERE", "WHERE TRUE AND", 1))
    verdict = judge_view(view, DeployedView(edited, deployed.output))
    assert verdict.action == "drifted"
    assert verdict.reasons == ("its SQL differs from what agent-telemetry applied",)
    diff = render_diff(view, edited).splitlines()
    changed = [line for line in diff if line.startswith(("-", "+")) and "WHERE" in line]
    assert [(line[0], line[1:].strip()) for line in changed] == [
        ("-", "WHERE TRUE AND"),
        ("+", "WHERE"),
    ]


def test_an_update_diff_shows_the_sql_lines_when_the_server_returns_them() -> None:
    old, new = VIEWS[0], VIEWS[1]
    deployed = as_applied(old)
    assert deployed.state is not None
    moved = replace(new, labels=old.labels)
    diff = render_diff(moved, deployed.state)
    assert diff.startswith("--- deployed/chat_turn\n+++ generated/chat_turn\n")
    assert "+    SAFE_CAST(sink.jsonPayload.tier AS STRING) AS tier," in diff.splitlines()
    assert "the server did not return the deployed SQL" not in diff


def test_a_half_written_view_is_an_update_that_the_same_sql_may_resume() -> None:
    view = VIEWS[2]
    deployed = as_applied(view)
    assert deployed.state is not None
    stale = replace(
        deployed.state,
        labels={**deployed.state.labels, META_LABEL: PENDING},
        description="old",
        schema=deployed.state.schema[:2],
    )
    verdict = judge_view(view, DeployedView(stale, deployed.output))
    assert (verdict.action, verdict.resumable) == ("update", True)
    other = judge_view(VIEWS[3], DeployedView(stale, deployed.output))
    assert other.resumable is False


def test_a_label_only_difference_is_an_update_that_names_the_label() -> None:
    """A generated label (e.g. the layout or schema version) that the deployed view lacks
    or carries with another value must be written: the plan may not call it unchanged."""
    view = VIEWS[0]
    deployed = as_applied(view)
    assert deployed.state is not None
    key = next(k for k in view.labels if k not in (SQL_LABEL, META_LABEL, "managed-by"))
    for stale in (
        {**deployed.state.labels, key: "other"},
        {k: v for k, v in deployed.state.labels.items() if k != key},
    ):
        verdict = judge_view(view, DeployedView(replace(deployed.state, labels=stale), None))
        assert (verdict.action, verdict.reasons) == ("update", (f"label {key} changes",))


@pytest.mark.parametrize(
    ("labels", "action"),
    [
        ({}, "unmanaged"),
        ({"managed-by": "someone-else"}, "unmanaged"),
        ({"managed-by": "agent-telemetry"}, "drifted"),
    ],
)
def test_labels_decide_whose_view_it_is(labels: dict[str, str], action: str) -> None:
    deployed = as_applied(VIEWS[0])
    assert deployed.state is not None
    state = replace(deployed.state, labels=labels)
    assert judge_view(VIEWS[0], DeployedView(state, deployed.output)).action == action


@pytest.mark.parametrize(
    "endpoint",
    ["http://127.0.0.1:9050", "https://bigquery.example.com", "http://[::1]:9050/"],
)
def test_endpoints_are_bare_http_urls(endpoint: str) -> None:
    assert check_endpoint(endpoint) == endpoint.rstrip("/")


@pytest.mark.parametrize(
    "endpoint",
    [
        "ftp://host",
        "127.0.0.1:9050",
        "http://user:secret@host",
        "http://host/path",
        "http://host?x=1",
        "http://host:port",
        "http://",
    ],
)
def test_other_endpoints_are_refused_without_echoing_them(endpoint: str) -> None:
    with pytest.raises(BigQueryError) as caught:
        check_endpoint(endpoint)
    assert "secret" not in str(caught.value)


def test_the_retry_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    assert retry_deadline_from_env() == 120.0
    monkeypatch.setenv(DEADLINE_ENV, "7.5")
    assert retry_deadline_from_env() == 7.5
    for bad in ("soon", "0", "-1", "99999"):
        monkeypatch.setenv(DEADLINE_ENV, bad)
        with pytest.raises(BigQueryError, match=DEADLINE_ENV):
            retry_deadline_from_env()


def _without_bigquery(*args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "sys.modules['google.cloud.bigquery'] = None  # as if the extra were not installed\n"
        "from agent_telemetry._entry import main\n"
        "sys.argv[0] = 'agent-telemetry'\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=EXAMPLE_CONFIG.parent,  # `views build --check` compares the repository's files
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", ["plan", "approve", "apply"])
def test_without_the_bigquery_extra_the_commands_say_how_to_install_it(
    command: str, tmp_path: Path
) -> None:
    approval = tmp_path / "approval.json"
    approval.write_text("{}")
    extra = {"approve": ["--by", "analyst"], "apply": ["--approval", str(approval)]}
    result = _without_bigquery(
        "views", command, "--config", str(EXAMPLE_CONFIG), *extra.get(command, [])
    )
    assert result.returncode == 2  # an error, not violations
    assert result.stderr.splitlines() == [
        "Error: google-cloud-bigquery is not installed; install the extra: "
        "pip install 'agent-telemetry[bigquery]'"
    ]


def test_without_the_bigquery_extra_the_other_views_commands_work() -> None:
    result = _without_bigquery("views", "build", "--check", "--config", str(EXAMPLE_CONFIG))
    assert (result.returncode, result.stdout, result.stderr) == (0, "views are up to date\n", "")
    listed = _without_bigquery("views", "--help")
    assert listed.returncode == 0
    assert all(name in listed.stdout for name in ("build", "plan", "approve", "apply"))


def test_without_an_endpoint_or_credentials_the_error_says_how_to_log_in(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("GOOGLE_APPLICATION_CREDENTIALS", "AGENT_TELEMETRY_BQ_ENDPOINT")
    }
    # No gcloud config, no home credentials, and no metadata-server probe.
    env.update(NO_GCE_CHECK="True", CLOUDSDK_CONFIG=str(tmp_path), HOME=str(tmp_path))
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from agent_telemetry._entry import main; main()",
            "views",
            "plan",
            "--config",
            str(EXAMPLE_CONFIG),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 2
    assert (
        "no Google credentials found: run `gcloud auth application-default login`" in result.stderr
    )
