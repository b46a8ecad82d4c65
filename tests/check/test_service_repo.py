"""A service repository owns its events (issue 24): examples/service, copied into a git
repository, checked in process on its own models, its own lock and its own history;
``init`` sets an empty repository up.

The installed wheel running docs/ci.md's exact commands is tests/check/test_ci_docs.py.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from tests.service import copy_service

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


@pytest.fixture(autouse=True)
def _fresh_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test imports its own copy's catalogue module (Python caches modules by name)."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def forget() -> None:
        for name in [n for n in sys.modules if n.split(".")[0] in {"myservice", "shop"}]:
            del sys.modules[name]

    forget()
    yield
    forget()


def run(repo: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(repo)
    return CliRunner().invoke(main, list(args))


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def test_the_example_service_passes_its_own_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc", git=True)
    result = run(service, "check", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert "5 events" in result.output  # its own event and the four built-ins
    assert "cache_lookup none" in result.output


def test_a_deleted_member_of_the_services_own_event_fails_against_its_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc", git=True)
    models = service / "myservice" / "telemetry.py"
    models.write_text(models.read_text().replace('    STALE = "stale"\n', ""))
    result = run(
        service, "check", "--against", "HEAD", "--format", "github", monkeypatch=monkeypatch
    )
    assert result.exit_code == 1, result.output
    assert "file=myservice/telemetry.py" in result.output
    assert "ENUM_VALUE_NO_DELETE" in result.output
    assert "cache_lookup.result" in result.output
    # The hint names this catalogue, not the package's retired.py.
    assert "EVENT_VERSIONS of myservice.telemetry" in result.output
    assert "agent_telemetry/schema/retired.py" not in result.output


def test_every_fix_hint_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service = copy_service(tmp_path / "svc", git=True)
    models = service / "myservice" / "telemetry.py"
    # A description edit: the lock, the views and the dictionary all change; no capacity does.
    models.write_text(
        models.read_text().replace("Which cache tier answered.", "The tier that answered.")
    )
    result = run(service, "check", monkeypatch=monkeypatch)
    assert result.exit_code == 1
    hints = {
        line.split("run `")[1].split("`")[0]
        for line in result.output.splitlines()
        if "run `" in line
    }
    assert hints == {"agent-telemetry lock", "agent-telemetry views build"}
    for hint in sorted(hints):  # lock first, then views build
        fixed = run(service, *hint.split()[1:], monkeypatch=monkeypatch)
        assert fixed.exit_code == 0, fixed.output
    assert run(service, "check", monkeypatch=monkeypatch).exit_code == 0
    # From a folder below, the same commands find the same telemetry.toml.
    assert run(service / "myservice", "check", monkeypatch=monkeypatch).exit_code == 0


def test_views_build_writes_only_the_configured_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc")
    views = service / "telemetry" / "views"
    schema = "events.schema.json"  # the catalogue's JSON Schema, beside the layouts
    assert sorted(p.name for p in views.iterdir()) == [schema, "partitioned"]
    result = run(service, "views", "build", "--all-layouts", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in views.iterdir()) == [
        "analytics",
        schema,
        "partitioned",
        "sharded",
    ]
    # Back to the configured layout: the others are stale and go.
    result = run(service, "views", "build", monkeypatch=monkeypatch)
    assert "removed telemetry/views/sharded/cache_lookup.sql" in result.output
    assert run(service, "views", "build", "--check", monkeypatch=monkeypatch).exit_code == 0


def test_check_logs_counts_the_services_own_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc")
    log = tmp_path / "app.jsonl"
    log.write_text(
        '{"event":"cache_lookup","schema_version":1,"severity":"INFO",'
        '"time":"2026-12-02T00:00:00.000000Z","result":"hit","tier":"memory"}\n'
    )
    result = run(service, "check-logs", str(log), "--format", "json", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert '"unknown_events": {}' in result.output
    assert '"cache_lookup": {\n      "lines": 1,\n      "valid": 1' in result.output


def test_init_sets_an_empty_repository_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q")
    first = run(repo, "init", monkeypatch=monkeypatch)
    assert first.exit_code == 0, first.output
    assert (repo / "shop" / "telemetry.py").is_file()
    assert (repo / ".github" / "workflows" / "telemetry.yml").is_file()
    checked = run(repo, "check", monkeypatch=monkeypatch)
    assert checked.exit_code == 0, checked.output

    def tree() -> dict[str, bytes]:
        return {
            p.relative_to(repo).as_posix(): p.read_bytes()
            for p in repo.rglob("*")
            if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
        }

    before = tree()
    second = run(repo, "init", monkeypatch=monkeypatch)
    assert second.exit_code == 2
    assert "init never overwrites a file" in second.output
    assert tree() == before


def test_init_refuses_before_writing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "shop"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "telemetry.md").write_text("mine")
    result = run(repo, "init", monkeypatch=monkeypatch)
    assert result.exit_code == 2
    assert "docs/telemetry.md" in result.output
    assert sorted(p.name for p in repo.iterdir()) == ["docs"]
    assert run(repo, "init", "--package", "os; rm", monkeypatch=monkeypatch).exit_code == 2


def test_the_capacity_rules_hold_a_service_catalogue_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc", git=True)
    models = service / "myservice" / "telemetry.py"
    members = "".join(f'    C{n:03d} = "c{n:03d}"\n' for n in range(65))
    models.write_text(
        models.read_text().replace(
            'class CacheTier(StrEnum):\n    MEMORY = "memory"\n    DISK = "disk"\n',
            f"class CacheTier(StrEnum):\n{members}",
        )
    )
    result = run(service, "check", "--format", "github", monkeypatch=monkeypatch)
    assert result.exit_code == 1, result.output
    assert "ENUM_SIZE" in result.output
    assert "file=myservice/telemetry.py" in result.output


CACHE_LOOKUP_LINE = (
    '{"event":"cache_lookup","schema_version":1,"severity":"INFO",'
    '"time":"2026-12-02T00:00:00.000000Z","result":"hit","tier":"memory"}\n'
)


def test_preview_shows_the_services_own_event_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc")
    log = tmp_path / "app.jsonl"
    log.write_text(CACHE_LOOKUP_LINE)
    result = run(service, "preview", str(log), monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert "unknown event" not in result.output
    # Its own view, holding the line, with the service's own fields summarised.
    assert "cache_lookup: 1 rows" in result.output
    assert "hit 1" in result.output
    assert "memory 1" in result.output


def test_query_reads_the_services_own_event_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc")
    log = tmp_path / "app.jsonl"
    log.write_text(CACHE_LOOKUP_LINE)
    sql = "SELECT result, tier FROM cache_lookup"
    result = run(service, "query", sql, str(log), "--format", "csv", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["result,tier", "hit,memory"]


def test_views_plan_plans_the_services_own_views(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Server-free, as tests/deploy/test_approval_gate.py: the views the plan command
    hands ``make_plan``, assembled into a first deployment's plan and rendered."""
    from agent_telemetry.deploy._plan import DeployedView, SinkPlan, assemble_plan, view_plan
    from agent_telemetry.deploy._report import render_plan
    from agent_telemetry.deploy._types import DryRun
    from agent_telemetry.deploy.cli import planned_views
    from agent_telemetry.project import resolve_project

    service = copy_service(tmp_path / "svc")
    monkeypatch.chdir(service)
    views = {v.name: v for v in planned_views(resolve_project(), None)}
    # The service's own committed views, each as committed: what the plan deploys.
    committed = service / "telemetry" / "views" / "partitioned"
    assert "cache_lookup" in views
    assert sorted(views) == sorted(p.stem for p in committed.glob("*.sql"))
    assert views["cache_lookup"].ddl.strip() == (committed / "cache_lookup.sql").read_text().strip()
    plan = assemble_plan(
        target="acme-myservice-prod.myservice_telemetry",
        source="acme-myservice-prod.service_logs.run_googleapis_com_stdout",
        layout="partitioned",
        views=tuple(view_plan(v, DeployedView(None), DryRun(())) for v in views.values()),
        sink=SinkPlan(table_id=None, state=None, missing=()),
    )
    assert "cache_lookup" in render_plan(plan)
