"""Writing a generated page (the review page, the report): atomically, never through a
symlink, with the permissions any new file gets (not mkstemp's 0600)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_page(text: str, path: Path) -> None:
    """Write ``text`` to ``path`` so a reader never sees half a page; a symlink at
    ``path`` is replaced by the file, never followed."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
