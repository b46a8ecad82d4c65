"""Reading and writing the files the package owns: generated SQL and docs, the schema
lock, approval records.

Committed files are data from a pull request. A symbolic link there would make a read
print another file (``/proc/self/environ``) into a CI log, and a write overwrite whatever
it points to (``~/.bashrc``). So a symlink is never followed, in either direction: the
path is refused by name, and nothing of its target is read or shown. Writes are atomic:
a temporary file in the same folder, then ``os.replace``, so a reader never sees half a
file and an interrupted write leaves the old one. Only the last component of a path is
checked; the folders above it are the repository's own layout.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from agent_telemetry._text import clean
from agent_telemetry.errors import FileRefusedError


def _refuse(path: Path, why: str) -> FileRefusedError:
    return FileRefusedError(f"{clean(path)}: {why}")


def _not_a_link(path: Path) -> bool:
    """True when ``path`` exists (and is not a symlink); refuses a symlink."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return False
    except OSError as error:
        raise _refuse(path, f"cannot be read ({error.strerror or type(error).__name__})") from None
    if stat.S_ISLNK(mode):
        raise _refuse(path, "is a symbolic link; refused (generated files are never followed)")
    return True


def is_file(path: Path) -> bool:
    """``path`` is a regular file; a symlink in its place is refused, not followed."""
    return _not_a_link(path) and path.is_file()


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; ``FileRefusedError`` for a symlink or another encoding.

    Opened with ``O_NOFOLLOW``: a symlink swapped in after the check is refused too.
    """
    _not_a_link(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _refuse(path, f"cannot be read ({error.strerror or type(error).__name__})") from None
    with os.fdopen(fd, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refuse(path, f"is not UTF-8 text (byte {error.start})") from None


def read_text_or_none(path: Path) -> str | None:
    """``read_text``, or None when there is no file."""
    return read_text(path) if is_file(path) else None


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically; refuses to replace a symlink."""
    _not_a_link(path)
    folder = path.parent
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode("utf-8"))
        if path.exists():  # keep the mode of the file being replaced (mkstemp: 0600)
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def unlink(path: Path) -> None:
    """Remove ``path``; a symlink there is refused, as for a write."""
    _not_a_link(path)
    path.unlink()
