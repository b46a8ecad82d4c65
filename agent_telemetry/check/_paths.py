"""Paths as findings show them. No import of the models here: the definition stage
uses this when the models themselves fail to import."""

from __future__ import annotations

from pathlib import Path


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies below it (annotations
    want repository paths), else absolute."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()
