"""The baseline belongs to the base: what ``check --against REF`` compares with.

A pull request controls its own telemetry.toml, so the base is never found through it. As
``buf breaking --against`` reads the against input's own configuration, this reads REF's
own telemetry.toml (the one discovery would find at REF from the same folder) and the lock
*that* file names, wherever it is. A pull request that moves, renames or drops the lock or
its ``[catalogue]`` setting is still judged by the base's lock. Only a base with no
catalogue at all (no telemetry.toml naming one) makes every event new.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_telemetry._parse import toml_document
from agent_telemetry._text import clean
from agent_telemetry.check._git import GitRefError, commit_of, file_at, repository_root
from agent_telemetry.config import ConfigError, parse_config
from agent_telemetry.project import CONFIG_NAME, Project
from agent_telemetry.schema.lock import LOCK_PATH, SchemaLock, load_lock, read_lock


class BaselineError(GitRefError):
    """The base cannot be read as it defines itself (its config or its lock is broken or
    missing): the check cannot run, exit 2."""


@dataclass(frozen=True)
class Baseline:
    """The base's lock and the note ``check`` prints beside the compat stage."""

    lock: SchemaLock
    note: str


def _relative(path: Path, root: Path) -> PurePosixPath | None:
    try:
        return PurePosixPath(path.resolve().relative_to(root).as_posix())
    except ValueError:
        return None


def _base_config(project: Project, commit: str, root: Path) -> tuple[PurePosixPath, str] | None:
    """REF's telemetry.toml: at the head's config folder or above it, up to the root."""
    folder = _relative(project.config_path.parent, root)
    if folder is None:
        return None
    for candidate in (folder, *folder.parents):
        path = candidate / CONFIG_NAME
        text = file_at(commit, path.as_posix(), root)
        if text is not None:
            return path, text
    return None


def read_baseline(ref: str, project: Project) -> Baseline:
    """The lock REF's own config names, at REF. Raises GitRefError (a bad ref, no
    repository) and BaselineError (REF's config or lock is broken or missing)."""
    root = repository_root(project.config_path.resolve().parent)
    commit = commit_of(ref, root)
    found = _base_config(project, commit, root)
    if found is None:
        return Baseline(SchemaLock(), f"no catalogue at {ref}: every event is new")
    config_path, text = found
    origin = f"{ref}:{config_path}"
    try:
        # Through the parsing door: the base is as untrusted as the head (nesting limit).
        data = toml_document(text, clean(origin), ConfigError)
        setting = parse_config(data, origin=clean(origin)).catalogue
    except tomllib.TOMLDecodeError as exc:
        # Named as load_config names the head's: the file, then line and column.
        problem = f"{clean(origin)}: not valid TOML ({exc})"
        raise BaselineError(f"the base's {CONFIG_NAME} does not read ({problem})") from None
    except ConfigError as exc:
        raise BaselineError(f"the base's {CONFIG_NAME} does not read ({exc})") from None
    if setting is None:
        return _package_lock(ref, commit, root)
    lock_path = config_path.parent / setting.lock
    lock_text = file_at(commit, lock_path.as_posix(), root)
    if lock_text is None:
        raise BaselineError(
            f"{origin} names the lock {lock_path}, which {ref} does not have "
            f"(commit a lock on the base first)"
        )
    moved = _relative(project.lock_path, root) != lock_path
    return Baseline(
        load_lock(lock_text, f"{ref}:{lock_path}"),
        f"against the lock at {ref}"
        + (f" ({lock_path}, where the base keeps it)" if moved else ""),
    )


def _package_lock(ref: str, commit: str, root: Path) -> Baseline:
    """A base without ``[catalogue]``: this package's own events and lock. In this
    repository that lock is read at REF; anywhere else it is the installed package's,
    which no pull request can change."""
    inside = _relative(LOCK_PATH, root)
    if inside is None:
        lock = read_lock(LOCK_PATH)
        return Baseline(lock or SchemaLock(), "against the package's own lock")
    text = file_at(commit, inside.as_posix(), root)
    if text is None:
        raise BaselineError(f"{ref} has no lock at {inside}, where this package keeps it")
    return Baseline(load_lock(text, f"{ref}:{inside}"), f"against the lock at {ref}")
