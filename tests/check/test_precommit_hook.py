"""The pre-commit hook service repositories use (.pre-commit-hooks.yaml), run for real:
`pre-commit try-repo <this repository> agent-telemetry-check --all-files` in a temporary
service repository with its own telemetry.toml, committed view SQL and data dictionary.

pre-commit builds the hook's environment from the package index, as `make test` does.
try-repo installs the repository's HEAD commit, so the test commits a copy of this working
tree (tracked and untracked, not ignored, files) in a temporary repository and points
pre-commit there: the hook under test is the one in the working tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from agent_telemetry.cli import main
from tests.conftest import EXAMPLE_CONFIG, REPO

HOOK = "agent-telemetry-check"
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]


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


def _service(target: Path) -> Path:
    """A service repository: its own deployment file, then `views build` into its tree."""
    target.mkdir()
    _git(target, "init", "-q")
    config = EXAMPLE_CONFIG.read_text(encoding="utf-8").replace("acme-agents-prod", "shop-prod")
    (target / "telemetry.toml").write_text(config, encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "views",
            "build",
            "--config",
            str(target / "telemetry.toml"),
            "--sql-dir",
            str(target / "telemetry" / "views"),
            "--docs",
            str(target / "docs" / "telemetry.md"),
        ],
    )
    assert result.exit_code == 0, result.output
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "telemetry views")
    return target


def _try_repo(service: Path, hook_repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["PRE_COMMIT_HOME"] = str(home)  # never the user's ~/.cache/pre-commit
    env["PRE_COMMIT_COLOR"] = "never"
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), HOOK, "--all-files"],
        cwd=service,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def test_the_hook_passes_a_fresh_service_repository_and_fails_a_stale_one(
    tmp_path: Path,
) -> None:
    hook_repo = _snapshot(tmp_path / "agent-telemetry")
    service = _service(tmp_path / "service")
    home = tmp_path / "pre-commit-home"

    fresh = _try_repo(service, hook_repo, home)
    output = fresh.stdout + fresh.stderr
    assert fresh.returncode == 0, output
    assert "agent-telemetry check" in output
    assert "Passed" in output

    stale = service / "telemetry" / "views" / "partitioned" / "chat_turn.sql"
    stale.write_text(
        stale.read_text(encoding="utf-8").replace("BETWEEN 0 AND 60", "BETWEEN 0 AND 61"),
        encoding="utf-8",
    )
    _git(service, "add", "-A")
    _git(service, "commit", "-q", "-m", "hand-edit a generated view")
    failed = _try_repo(service, hook_repo, home)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "Failed" in output
    # The line of the edit, and the rule.
    line = 1 + stale.read_text(encoding="utf-8").splitlines().index(
        "    WHEN lines.pipeline_runs BETWEEN 0 AND 61"
    )
    assert f"telemetry/views/partitioned/chat_turn.sql:{line}: error: GENERATED_DRIFT" in output
