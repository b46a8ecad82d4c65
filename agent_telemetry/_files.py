"""The one door for the package's files: every file it reads as committed data and every
file it writes (generated SQL and docs, the lock, approval records, ``init``'s files, the
demo's log and database, ``preview --db``, the pages, the analyzer's cache).

Committed files are data from a pull request, and so are folders. A symbolic link there
would make a read print another file (``/proc/self/environ``) into a CI log, and a write
overwrite whatever it points to (``h/.bashrc`` with a committed ``h -> ~``). So:

- Reads: the file itself is never a symlink (``O_NOFOLLOW``); nothing of a refused
  file's target is read or shown.
- Writes: every component from a trusted folder (``below``) down to the file is a real
  folder, and the file itself is never followed. The walk opens each folder by file
  descriptor with ``O_NOFOLLOW`` and writes relative to the last one, so a link swapped in
  during the write is refused too, never followed. Which folder is trusted is decided in
  one place, ``trusted_folder``: the working tree (the repository holding the working
  directory, else the working directory) for any path inside it; otherwise the folder a
  user or a config named (``--out DIR``, the folder of ``--html FILE``, of telemetry.toml).
- Writes are atomic: a temporary file in the same folder, then ``rename``, so a reader
  never sees half a file and a failed write leaves the old one. ``new=True`` never
  replaces a file (``init``): the temporary file is hard-linked into place, which fails
  when anything is there.

The only other writes in the package are private temporary files (``tempfile``'s own
0600 files in 0700 folders), which nobody else can name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from agent_telemetry._text import clean
from agent_telemetry.errors import FileRefusedError

_LINK = "is a symbolic link; refused (generated files are never followed)"
_FOLDER_LINK = "is a symbolic link to a folder; refused (nothing is written through one)"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PROC_FD = Path("/proc/self/fd")


def _refuse(path: Path, why: str) -> FileRefusedError:
    return FileRefusedError(f"{clean(path)}: {why}")


def _reason(error: OSError) -> str:
    return error.strerror or type(error).__name__


# --- reading ---------------------------------------------------------------------------


def _not_a_link(path: Path) -> bool:
    """True when ``path`` exists (and is not a symlink); refuses a symlink."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return False
    except OSError as error:
        raise _refuse(path, f"cannot be read ({_reason(error)})") from None
    if stat.S_ISLNK(mode):
        raise _refuse(path, _LINK)
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
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _refuse(path, f"cannot be read ({_reason(error)})") from None
    with os.fdopen(fd, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refuse(path, f"is not UTF-8 text (byte {error.start})") from None


def read_text_or_none(path: Path) -> str | None:
    """``read_text``, or None when there is no file."""
    return read_text(path) if is_file(path) else None


# --- which folder is trusted -----------------------------------------------------------


def _absolute(path: Path) -> Path:
    """``path`` made absolute and ``..``-free by text alone (no link is resolved)."""
    return Path(os.path.abspath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def working_tree() -> Path:
    """The repository holding the working directory (its nearest folder with ``.git``),
    else the working directory itself."""
    here = Path.cwd()
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return here


def trusted_folder(path: Path, *named: Path) -> Path:
    """The folder below which no component of ``path`` may be a symlink.

    The working tree when ``path`` lies in it: the repository's own folders are checked
    from its root, however the path was named. Else the first of ``named`` that holds
    it: a folder a user or a config chose (``--out DIR``: DIR; telemetry.toml's folder
    for what it names), taken as given, links and all. Else the file's own folder: the
    file itself is still never followed.
    """
    target = _absolute(path)
    for folder in (working_tree(), *(_absolute(n) for n in named)):
        if _inside(target.parent, folder):
            return folder
    return target.parent


# --- writing ---------------------------------------------------------------------------


def _parts(path: Path, below: Path) -> tuple[Path, tuple[str, ...]]:
    target, root = _absolute(path), _absolute(below)
    if not _inside(target.parent, root) or target == root:
        raise _refuse(path, f"is not inside {clean(root)}; refused")
    return root, target.relative_to(root).parts


def _open_folder(root: Path, parts: tuple[str, ...], *, create: bool) -> int:
    """A descriptor of ``root/parts...``, every part opened without following a link
    (created when missing and ``create``); ``root`` itself is trusted as it stands."""
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    walked = root
    try:
        for part in parts:
            walked = walked / part
            try:
                child = _open_child(fd, part, walked)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened below
                    os.mkdir(part, 0o777, dir_fd=fd)
                # Anything swapped in since it was made is refused as above.
                child = _open_child(fd, part, walked)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child(fd: int, part: str, walked: Path) -> int:
    """The folder ``part`` of the folder ``fd``, opened without following a link."""
    try:
        return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ENOTDIR, errno.ELOOP):
            mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            why = _FOLDER_LINK if stat.S_ISLNK(mode) else "is not a folder; refused"
            raise _refuse(walked, why) from None
        raise


def _existing_mode(folder: int, name: str, path: Path) -> int | None:
    """The mode of the file ``name`` in ``folder`` (None: none there); refuses a link."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        raise _refuse(path, _LINK)
    if not stat.S_ISREG(mode):
        raise _refuse(path, "is not a regular file; refused")
    return stat.S_IMODE(mode)


def check_target(path: Path, below: Path) -> None:
    """Raise ``FileRefusedError`` now if a write of ``path`` below ``below`` would be
    refused (a linked folder or file): a command that writes several files (``init``)
    asks for each before it writes any. Nothing is created."""
    root, parts = _parts(path, below)
    try:
        fd = _open_folder(root, parts[:-1], create=False)
    except FileNotFoundError:
        return  # a missing folder is made by the write, as a real folder
    try:
        _existing_mode(fd, parts[-1], path)
    finally:
        os.close(fd)


# Room a staged name leaves for a file a library puts beside it (DuckDB's ``.wal``).
_BESIDE = 4


def _staged_name(folder: int, name: str) -> str:
    """A fresh hidden name for the staged copy of ``name`` in ``folder``: named after it
    (a leftover is known by its name), cut to fit the file system with ``_BESIDE`` to
    spare, so every name it takes can be written."""
    suffix = f".{secrets.token_hex(4)}.tmp"
    room = os.fpathconf(folder, "PC_NAME_MAX") - _BESIDE - len(suffix)
    return os.fsdecode(os.fsencode(f".{name}")[:room]) + suffix


@contextlib.contextmanager
def _replacing(path: Path, below: Path, *, new: bool) -> Iterator[tuple[int, str, int | None]]:
    """The checked folder's descriptor and a fresh temporary name in it; on success the
    temporary file is renamed (``new``: linked) over ``path``, on failure removed."""
    root, parts = _parts(path, below)
    folder = _open_folder(root, parts[:-1], create=True)
    name = parts[-1]
    temporary = _staged_name(folder, name)
    try:
        mode = _existing_mode(folder, name, path)
        if new and mode is not None:
            raise _refuse(path, "exists; not overwritten")
        try:
            yield folder, temporary, mode
            if new:
                try:
                    os.link(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
                except FileExistsError:
                    raise _refuse(path, "exists; not overwritten") from None
                os.unlink(temporary, dir_fd=folder)
            else:  # rename replaces a link swapped in meanwhile; it never follows one
                os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


@contextlib.contextmanager
def writing(
    path: Path, below: Path, *, new: bool = False, private: bool = False
) -> Iterator[IO[bytes]]:
    """A binary file that becomes ``path`` when the block ends without an error.

    ``below``: the trusted folder (``trusted_folder``). ``new``: refuse to replace a
    file. ``private``: mode 0600 (a cache whose files are loaded as code), else the mode
    the replaced file had, or what the umask gives a new file.
    """
    with _replacing(path, below, new=new) as (folder, temporary, mode):
        created = 0o600 if private else 0o666
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        fd = os.open(temporary, flags, created, dir_fd=folder)
        if mode is not None and not private:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as file:
            yield file


def write_bytes(
    path: Path, data: bytes | bytearray, below: Path, *, new: bool = False, private: bool = False
) -> None:
    """Write ``data`` to ``path`` atomically (see ``writing``)."""
    with writing(path, below, new=new, private=private) as file:
        file.write(data)


def write_text(path: Path, text: str, below: Path, *, new: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see ``writing``)."""
    write_bytes(path, text.encode("utf-8"), below, new=new)


@contextlib.contextmanager
def building(path: Path, below: Path) -> Iterator[Path]:
    """A path for a library that makes a file by name (DuckDB): the file it makes there
    becomes ``path`` when the block ends without an error, and so does nothing else.

    The name goes through the checked folder's descriptor (``/proc/self/fd/N/...``), so
    the library writes into the folder that was checked, whatever is swapped in later.
    DuckDB's write-ahead log beside ``path`` belongs to the file replaced: it is removed.
    """
    with _replacing(path, below, new=False) as (folder, temporary, _mode):
        by_descriptor = _PROC_FD / str(folder)
        base = by_descriptor if by_descriptor.is_dir() else _absolute(path).parent
        try:
            yield base / temporary
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{temporary}.wal", dir_fd=folder)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path.name}.wal", dir_fd=folder)


def unlink(path: Path, below: Path) -> None:
    """Remove ``path``; a linked folder on the way, or a link in its place, is refused."""
    root, parts = _parts(path, below)
    folder = _open_folder(root, parts[:-1], create=False)
    try:
        _existing_mode(folder, parts[-1], path)
        os.unlink(parts[-1], dir_fd=folder)
    finally:
        os.close(folder)
