"""The file layer (``agent_telemetry._files``) called directly: what a caller reads from
each door, each refusal's message (the path, cleaned, and why; never the target's
text), and the modes a written file ends with."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_telemetry import _files
from agent_telemetry._files import (
    is_file,
    read_text,
    read_text_or_none,
    trusted_folder,
    unlink,
    write_text,
)
from agent_telemetry.errors import FileRefusedError

TARGET = "target text, never shown\n"


@pytest.fixture
def link(tmp_path: Path) -> Path:
    target = tmp_path / "target.txt"
    target.write_text(TARGET, encoding="utf-8")
    path = tmp_path / "li\x1bnk.sql"
    path.symlink_to(target)
    return path


LINK_REFUSED = "li\\x1bnk.sql: is a symbolic link; refused (generated files are never followed)"


def _refusal(call: object) -> str:
    assert callable(call)
    with pytest.raises(FileRefusedError) as caught:
        call()
    return str(caught.value)


def test_every_door_refuses_a_symlink_by_its_cleaned_name(link: Path) -> None:
    for call in (
        lambda: is_file(link),
        lambda: read_text(link),
        lambda: read_text_or_none(link),
        lambda: write_text(link, "x", trusted_folder(link)),
        lambda: write_text(link, "x", trusted_folder(link), new=True),
        lambda: unlink(link, trusted_folder(link)),
    ):
        message = _refusal(call)
        assert message.endswith(LINK_REFUSED), message
        assert "\x1b" not in message
        assert "target text" not in message
    assert (link.parent / "target.txt").read_text(encoding="utf-8") == TARGET
    assert link.is_symlink()


def test_what_each_door_returns(tmp_path: Path) -> None:
    path = tmp_path / "a.sql"
    assert is_file(path) is False
    assert read_text_or_none(path) is None
    with pytest.raises(FileNotFoundError):
        read_text(path)
    assert write_text(path, "SELECT 'é'\n", trusted_folder(path)) is None
    assert is_file(path) is True
    assert is_file(tmp_path) is False  # a folder is not a file
    assert read_text(path) == read_text_or_none(path) == "SELECT 'é'\n"
    assert path.read_bytes() == "SELECT 'é'\n".encode()
    assert unlink(path, trusted_folder(path)) is None
    assert not path.exists()


def test_text_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "v.sql"
    path.write_bytes(b"ab\xffc")
    assert _refusal(lambda: read_text(path)) == f"{path}: is not UTF-8 text (byte 2)"


def test_a_path_that_cannot_be_opened_says_why(tmp_path: Path) -> None:
    # A name longer than the file system allows: lstat and open both fail, not with
    # FileNotFoundError; the message gives the system's reason, never a traceback.
    path = tmp_path / ("x" * 300)
    message = _refusal(lambda: read_text(path))
    assert message == f"{path}: cannot be read (File name too long)"


@pytest.fixture
def umask() -> Iterator[int]:
    old = os.umask(0o002)
    try:
        yield 0o002
    finally:
        os.umask(old)


def test_a_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_own(
    tmp_path: Path, umask: int
) -> None:
    new = tmp_path / "new.sql"
    write_text(new, "a", tmp_path, new=True)
    assert oct(new.stat().st_mode & 0o777) == oct(0o666 & ~umask)
    assert os.umask(umask) == umask  # the umask is left as it was
    kept = tmp_path / "kept.sql"
    kept.write_text("old", encoding="utf-8")
    os.chmod(kept, 0o604)
    write_text(kept, "b", tmp_path)
    assert oct(kept.stat().st_mode & 0o777) == oct(0o604)


def test_a_write_that_cannot_replace_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder where the file goes is refused before anything is staged.
    (tmp_path / "taken" / "inside").mkdir(parents=True)
    message = _refusal(lambda: write_text(tmp_path / "taken", "x", tmp_path))
    assert message == f"{tmp_path / 'taken'}: is not a regular file; refused"
    # The rename itself failing (a full disk, a read-only mount): the staged copy goes
    # and the old file is left as it was.
    old = tmp_path / "view.sql"
    old.write_text("old", encoding="utf-8")

    def cannot_replace(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "replace", cannot_replace)
    with pytest.raises(OSError, match="Read-only file system"):
        write_text(old, "new", tmp_path)
    assert old.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken", "view.sql"]


def test_a_write_needs_no_temporary_folder_and_stages_beside_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The staged copy is written in the file's own folder (one file system: the rename
    # is atomic), hidden and named after the file, so one left by a killed process is
    # never read as a view: ``.view.sql.<random>.tmp``. The rename is relative to the
    # walked folder's descriptor, so the folder is read back from it.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmp"))
    staged: list[tuple[str, Path]] = []
    real_replace = os.replace

    def replace(source: str, target: str, **kwargs: int) -> None:
        folder = Path(os.readlink(f"/proc/self/fd/{kwargs['src_dir_fd']}"))
        staged.append((source, folder))
        real_replace(source, target, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    path = tmp_path / "view.sql"
    path.write_text("old", encoding="utf-8")
    write_text(path, "x", trusted_folder(path))
    assert path.read_text(encoding="utf-8") == "x"
    ((source, folder),) = staged
    assert folder == tmp_path
    assert re.fullmatch(r"\.view\.sql\.[^./]+\.tmp", source), source
    assert sorted(p.name for p in tmp_path.iterdir()) == ["view.sql"]


def test_a_symlink_swapped_in_after_the_check_is_refused_at_open(
    link: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race: the path was a file when checked, a link when opened. O_NOFOLLOW makes
    # the open fail; the target is never read.
    monkeypatch.setattr(_files, "_not_a_link", lambda path: True)
    message = _refusal(lambda: read_text(link))
    assert message.endswith("li\\x1bnk.sql: cannot be read (Too many levels of symbolic links)")
    assert "target text" not in message


def test_an_error_without_a_reason_is_named_by_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v.sql"
    path.write_text("x", encoding="utf-8")

    def no_reason(*args: object, **kwargs: object) -> int:
        raise PermissionError  # an OSError with no strerror

    monkeypatch.setattr(os, "open", no_reason)
    assert _refusal(lambda: read_text(path)) == f"{path}: cannot be read (PermissionError)"
    monkeypatch.setattr(Path, "lstat", no_reason)
    assert _refusal(lambda: is_file(path)) == f"{path}: cannot be read (PermissionError)"
