"""docs/ci.md, run for real in a service repository (issue 24's Must show).

Once per session: a copy of this working tree (tracked and untracked, not ignored, files)
as the one commit of a new repository, the wheel built there and installed with ``[cli]``
into a fresh virtual environment by the page's own wheel commands (``pip`` is this
interpreter's pip, installing into that environment). Then examples/service is copied
into a temporary git repository and the page's commands run there: the Actions job's
``agent-telemetry`` steps, and the pre-commit hook with ``pre-commit try-repo`` pointed at
the copy of this working tree (what a pinned ``rev`` resolves to). pip and pre-commit
reach the package index (the machine's pip cache is warm).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.docs.blocks import load_page
from tests.service import copy_service

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
TIMEOUT_S = 900
# Nothing of this checkout may leak into the fresh environment.
CLEAN_ENV = {
    k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"
}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _snapshot(target: Path) -> Path:
    """This working tree as the one commit of a new repository."""
    target.mkdir()
    listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "snapshot of the working tree")
    return target


def _run(
    command: str | list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


class Install:
    """The fresh environment with the wheel and its [cli] extra, and the hook repository."""

    def __init__(self, root: Path) -> None:
        self.hook_repo = _snapshot(root / "agent-telemetry")
        self.venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", self.venv], check=True)
        self.env = {**CLEAN_ENV, "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        page = load_page("docs/ci.md")
        (step,) = [
            s
            for s in page.steps
            if s.arg.endswith("test_the_documented_ci_runs_in_a_copy_of_the_example_service")
        ]
        pip = f"{shlex.quote(sys.executable)} -m pip --python {self.venv / 'bin' / 'python'}"
        for command in step.block.text.splitlines():
            assert command.startswith("pip "), command
            line = command.replace("pip ", f"{pip} ", 1)
            done = _run(line, self.hook_repo, {**CLEAN_ENV})
            assert done.returncode == 0, done.stdout + done.stderr

    def run(self, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return _run(command, cwd, self.env)


@pytest.fixture(scope="session")
def install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    return Install(tmp_path_factory.mktemp("ci-docs"))


def _workflow_commands(service: Path) -> list[str]:
    workflow = yaml.safe_load((service / ".github" / "workflows" / "telemetry.yml").read_text())
    steps = workflow["jobs"]["telemetry"]["steps"]
    found = [s["run"] for s in steps if s.get("run", "").startswith("agent-telemetry ")]
    assert found, "the job has no agent-telemetry step"
    return found


def _try_repo(install: Install, service: Path, home: Path) -> subprocess.CompletedProcess[str]:
    config = yaml.safe_load((service / ".pre-commit-config.yaml").read_text())
    (hook,) = [h["id"] for repo in config["repos"] for h in repo["hooks"]]
    env = {**CLEAN_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(install.hook_repo), hook]
    return _run([*command, "--all-files"], service, env)


def test_the_documented_ci_runs_in_a_copy_of_the_example_service(
    install: Install, tmp_path: Path
) -> None:
    service = copy_service(tmp_path / "shop", git=True)
    _git(service, "remote", "add", "origin", str(service))
    _git(service, "fetch", "-q", "origin")  # origin/main, as actions/checkout leaves it

    for command in _workflow_commands(service):
        done = install.run(command, service)
        assert done.returncode == 0, command + "\n" + done.stdout + done.stderr
    assert install.run("agent-telemetry check", service).returncode == 0

    # The service's own event, emitted by name after configure(catalogue=...), and counted
    # by check-logs as that event.
    emitted = install.run(
        'python -c "from agent_telemetry.emit import configure, emit; '
        "configure(catalogue='myservice.telemetry'); "
        "emit('cache_lookup', result='hit', tier='memory', lookup_ms=2)\" > app.jsonl",
        service,
    )
    assert emitted.returncode == 0, emitted.stderr
    (line,) = [json.loads(text) for text in (service / "app.jsonl").read_text().splitlines()]
    assert (line["event"], line["result"]) == ("cache_lookup", "hit")
    logs = install.run("agent-telemetry check-logs app.jsonl --format json", service)
    assert logs.returncode == 0, logs.stdout + logs.stderr
    report = json.loads(logs.stdout)
    assert report["unknown_events"] == {}
    assert report["events"]["cache_lookup"]["valid"] == 1
    (service / "app.jsonl").unlink()

    # A removed member of the service's own enum fails against its own history.
    models = service / "myservice" / "telemetry.py"
    models.write_text(models.read_text().replace('    STALE = "stale"\n', ""))
    broken = install.run("agent-telemetry check --against HEAD", service)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "ENUM_VALUE_NO_DELETE" in broken.stdout
    assert "myservice/telemetry.py:" in broken.stdout
    _git(service, "checkout", "-q", "--", ".")

    # The hook passes the repository, then fails once a committed view is edited.
    home = tmp_path / "pre-commit-home"
    fresh = _try_repo(install, service, home)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "Passed" in fresh.stdout
    view = service / "telemetry" / "views" / "partitioned" / "cache_lookup.sql"
    view.write_text(view.read_text().replace("BETWEEN 0 AND 10000", "BETWEEN 0 AND 10001"))
    _git(service, "commit", "-qam", "hand-edit a generated view")
    stale = _try_repo(install, service, home)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "telemetry/views/partitioned/cache_lookup.sql:" in stale.stdout
    assert "GENERATED_DRIFT" in stale.stdout
