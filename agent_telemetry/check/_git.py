"""Reading files as they were at a git ref (``--against``), with plain ``git``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_telemetry.errors import AgentTelemetryError


class GitRefError(AgentTelemetryError):
    """The ref cannot be read (no git, not a repository, no such commit)."""


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
        )
    except FileNotFoundError:
        raise GitRefError("git is not installed") from None


def lock_at_ref(ref: str, lock_path: Path) -> str | None:
    """The text of ``lock_path`` at ``ref`` (``--lock`` names it: the same file at the
    ref), or None when the file did not exist there."""
    lock = lock_path.resolve()
    root = repository_root(lock.parent)
    return file_at(commit_of(ref, root), lock.relative_to(root).as_posix(), root)


def repository_root(folder: Path) -> Path:
    """The top folder of the git repository holding ``folder``."""
    while not folder.is_dir():
        folder = folder.parent
    found = _git(folder, "rev-parse", "--show-toplevel")
    if found.returncode != 0:
        raise GitRefError(f"{folder} is not in a git repository")
    return Path(found.stdout.strip()).resolve()


def commit_of(ref: str, root: Path) -> str:
    """The commit ``ref`` names in the repository at ``root``."""
    if ref.startswith("-"):
        raise GitRefError(f"{ref!r} is not a git ref")
    found = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if found.returncode != 0:
        why = found.stderr.strip().splitlines()
        raise GitRefError(f"cannot read {ref!r} in {root}: {why[-1] if why else 'no such commit'}")
    return found.stdout.strip()


def file_at(commit: str, path: str, root: Path) -> str | None:
    """The text of ``path`` (relative to ``root``, '/'-separated) at ``commit``, or None
    when it did not exist there."""
    spec = f"{commit}:{path}"
    if _git(root, "cat-file", "-e", spec).returncode != 0:
        return None
    shown = _git(root, "show", spec)
    if shown.returncode != 0:
        raise GitRefError(f"cannot read {path} at {commit[:12]}: {shown.stderr.strip()}")
    return shown.stdout
