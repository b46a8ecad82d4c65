"""The files a run reads, each once: the same file named twice is one input.

A shell glob that overlaps another (``logs/*.json logs/2026-*.json``), a path given
twice, or a symlink to a file also given directly would otherwise load the same lines
twice: every entry without an insert id (the emitter's own lines) would be counted
twice in every view. A file is known by its device and inode, the identity the
operating system gives it whatever the path; the first name given is the one read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_telemetry.warehouse._reading.source import LoadError


@dataclass(frozen=True, slots=True)
class Repeat:
    """An input left out because it names a file already read under ``first``."""

    path: str
    first: str


def size_on_disk(path: Path) -> int:
    """Bytes on disk (0 for a pipe or device, whose size is not known ahead)."""
    return path.stat().st_size if path.is_file() else 0


def distinct_inputs(paths: Iterable[Path]) -> tuple[list[Path], tuple[Repeat, ...]]:
    """The paths to read (each file once, in the order given) and the repeats left out.
    Raises ``LoadError`` for a path that does not exist or is a directory."""
    kept: list[Path] = []
    repeats: list[Repeat] = []
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        try:
            status = os.stat(path)  # follows links: a link and its target are one file
        except FileNotFoundError:
            raise LoadError(f"{path}: no such file") from None
        except OSError as error:
            raise LoadError(f"{path}: {error.strerror or error}") from None
        if path.is_dir():
            raise LoadError(f"{path}: is a directory")
        identity = (status.st_dev, status.st_ino)
        first = seen.get(identity)
        if first is not None:
            repeats.append(Repeat(str(path), str(first)))
            continue
        seen[identity] = path
        kept.append(path)
    return kept, tuple(repeats)


def repeat_warning(repeat: Repeat) -> str:
    """One line for a repeated input (paths as given; the caller escapes them)."""
    return f"{repeat.path} is the same file as {repeat.first}: read once"
