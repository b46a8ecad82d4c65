"""Paths as findings show them. No import of the models here: the definition stage
uses this when the models themselves fail to import."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies below it (annotations
    want repository paths), else absolute. Never resolves symlinks: a committed file
    that is a link is named as committed, never by what it points to."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.getcwd()).as_posix()
    except ValueError:
        return absolute.as_posix()
