"""The file layer (``agent_telemetry._files``) called directly: what a caller reads from
each door, each refusal's message (the path, cleaned, and why; never the target's
text), and the modes a written file ends with."""

from __future__ import annotations

import os
import re
import secrets
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
    # never read as a view: ``.view.sql.<8 random hex digits>.tmp``. The rename is
    # relative to the walked folder's descriptor, so the folder is read back from it.
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
    assert re.fullmatch(r"\.view\.sql\.[0-9a-f]{8}\.tmp", source), source
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


def test_asking_whether_a_write_would_be_refused_creates_nothing(tmp_path: Path) -> None:
    # init asks for every file before it writes any: a refused plan leaves no folder.
    path = tmp_path / "telemetry" / "views" / "a.sql"
    assert _files.check_target(path, tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_a_write_replaces_unless_told_new_and_new_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "approval.json"
    _files.write_bytes(path, b"first", tmp_path)
    _files.write_bytes(path, b"second", tmp_path)  # the default replaces
    assert path.read_bytes() == b"second"
    refused = f"{path}: exists; not overwritten"
    assert _refusal(lambda: _files.write_bytes(path, b"third", tmp_path, new=True)) == refused
    assert _refusal(lambda: write_text(path, "third", tmp_path, new=True)) == refused
    assert path.read_bytes() == b"second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["approval.json"]


def test_a_private_write_is_0600_whatever_the_file_had(tmp_path: Path, umask: int) -> None:
    # The analyzer's cache: its files are loaded as code, so nobody else may write them.
    new = tmp_path / "new.wasm"
    _files.write_bytes(new, b"code", tmp_path, private=True)
    assert oct(new.stat().st_mode & 0o777) == oct(0o600)
    replaced = tmp_path / "old.wasm"
    replaced.write_bytes(b"old")
    os.chmod(replaced, 0o666)
    _files.write_bytes(replaced, b"code", tmp_path, private=True)
    assert oct(replaced.stat().st_mode & 0o777) == oct(0o600)
    assert replaced.read_bytes() == b"code"


def test_unlink_removes_the_file_in_its_own_folder_and_makes_none(tmp_path: Path) -> None:
    stale = tmp_path / "views" / "sharded" / "old_view.sql"
    stale.parent.mkdir(parents=True)
    stale.write_text("SELECT 1\n", encoding="utf-8")
    (tmp_path / "views" / "old_view.sql").write_text("kept\n", encoding="utf-8")
    unlink(stale, tmp_path)
    assert not stale.exists()
    assert (tmp_path / "views" / "old_view.sql").read_text(encoding="utf-8") == "kept\n"
    with pytest.raises(FileNotFoundError):
        unlink(tmp_path / "gone" / "old_view.sql", tmp_path)
    assert not (tmp_path / "gone").exists()


def test_the_working_tree_is_the_nearest_folder_holding_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")  # a worktree's
    monkeypatch.chdir(repo / "a" / "b")
    assert _files.working_tree() == repo
    # Its folders are checked from its root, however deep the file is named from.
    assert trusted_folder(repo / "views" / "v.sql") == repo
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    assert _files.working_tree() == plain


def test_a_write_outside_its_trusted_folder_is_refused_by_name(tmp_path: Path) -> None:
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    outside = tmp_path / "other" / "v\x1b.sql"
    assert _refusal(lambda: write_text(outside, "x", trusted)) == (
        f"{tmp_path}/other/v\\x1b.sql: is not inside {trusted}; refused"
    )
    assert _refusal(lambda: write_text(trusted, "x", trusted)) == (
        f"{trusted}: is not inside {trusted}; refused"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trusted"]
    assert list(trusted.iterdir()) == []


def test_a_named_folder_that_does_not_exist_yet_is_made_with_its_parents(
    tmp_path: Path,
) -> None:
    # `report --html out/site/page.html`: the folder named is trusted, and made.
    page = tmp_path / "out" / "site" / "page.html"
    write_text(page, "<p>", page.parent)
    assert page.read_text(encoding="utf-8") == "<p>"


def test_a_trusted_folder_that_is_a_file_is_named_in_the_error(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "out"
    not_a_folder.write_text("a file", encoding="utf-8")
    for call in (
        lambda: _files.check_target(not_a_folder / "v.sql", not_a_folder),
        lambda: unlink(not_a_folder / "v.sql", not_a_folder),
    ):
        with pytest.raises(NotADirectoryError) as caught:
            call()
        assert caught.value.filename == str(not_a_folder)
    assert not_a_folder.read_text(encoding="utf-8") == "a file"


def test_a_file_where_a_folder_should_be_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "views").write_text("a file", encoding="utf-8")
    refused = f"{tmp_path}/views: is not a folder; refused"
    for call in (
        lambda: write_text(tmp_path / "views" / "v.sql", "x", tmp_path),
        lambda: write_text(tmp_path / "views" / "deeper" / "v.sql", "x", tmp_path),
        lambda: _files.check_target(tmp_path / "views" / "v.sql", tmp_path),
        lambda: unlink(tmp_path / "views" / "v.sql", tmp_path),
    ):
        assert _refusal(call) == refused
    assert (tmp_path / "views").read_text(encoding="utf-8") == "a file"


def test_folders_made_on_the_way_get_the_umask_mode(tmp_path: Path, umask: int) -> None:
    write_text(tmp_path / "a" / "b" / "v.sql", "x", tmp_path)
    for folder in (tmp_path / "a", tmp_path / "a" / "b"):
        assert oct(folder.stat().st_mode & 0o7777) == oct(0o777 & ~umask)


def test_a_folder_made_meanwhile_by_another_process_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two builds at once: the folder was missing when opened, and there when made.
    real_mkdir = os.mkdir

    def made_meanwhile(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real_mkdir(path, mode, dir_fd=dir_fd)
        raise FileExistsError(17, "File exists")

    monkeypatch.setattr(os, "mkdir", made_meanwhile)
    write_text(tmp_path / "views" / "v.sql", "x", tmp_path)
    assert (tmp_path / "views" / "v.sql").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize(
    ("swapped_in", "why"),
    [
        ("link", "is a symbolic link to a folder; refused (nothing is written through one)"),
        ("file", "is not a folder; refused"),
    ],
)
def test_a_folder_swapped_for_a_link_or_a_file_as_it_is_made_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped_in: str, why: str
) -> None:
    # The race: the folder was missing when first opened; between making it and opening
    # it, something else is put there. It is refused as the first open refuses it.
    outside = tmp_path / "outside"
    outside.mkdir()
    trusted = tmp_path / "repo"
    trusted.mkdir()

    def swapped(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        if swapped_in == "link":
            os.symlink(outside, path, dir_fd=dir_fd)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, dir_fd=dir_fd))

    monkeypatch.setattr(os, "mkdir", swapped)
    message = _refusal(lambda: write_text(trusted / "views" / "v.sql", "x", trusted))
    assert message == f"{trusted}/views: {why}"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "name",
    [f"{'v' * 251}.sql", f"{'é' * 125}.sql"],  # 255 bytes; 254, cut inside an é
    ids=["ascii", "two-byte"],
)
def test_the_longest_name_the_file_system_takes_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # The staged copy's name is cut to fit (with room for a `.wal` a library puts beside
    # it), so a name the file system takes is never refused as "File name too long".
    staged: list[str] = []
    real_replace = os.replace

    def replace(source: str, target: str, **kwargs: int) -> None:
        staged.append(source)
        real_replace(source, target, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    path = tmp_path / name
    assert len(os.fsencode(name)) in (254, 255)
    write_text(path, "old", tmp_path)
    write_text(path, "new", tmp_path)
    assert path.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    source = os.fsencode(staged[-1])
    assert len(source) == 255 - len(".wal")  # all the room there is, less the .wal's
    assert source.startswith(os.fsencode(f".{name}")[:200])
    assert re.fullmatch(rb"\.[^/]+\.[0-9a-f]{8}\.tmp", source), source


def test_writing_replaces_by_default_and_keeps_the_mode(tmp_path: Path, umask: int) -> None:
    # The demo streams its log through ``writing`` itself, with no keyword given.
    path = tmp_path / "telemetry.jsonl"
    path.write_bytes(b"old")
    os.chmod(path, 0o644)
    with _files.writing(path, tmp_path) as file:
        file.write(b"new")
    assert path.read_bytes() == b"new"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    fresh = tmp_path / "fresh.jsonl"
    with _files.writing(fresh, tmp_path) as file:
        file.write(b"x")
    assert oct(fresh.stat().st_mode & 0o777) == oct(0o666 & ~umask)


def test_a_file_made_by_another_process_during_a_new_write_is_kept(tmp_path: Path) -> None:
    # The race ``new`` closes: nothing was there when checked, another process (a second
    # `init`) made the file while this one was writing. Its file stays; ours is dropped.
    path = tmp_path / "telemetry.toml"

    def race() -> None:
        with _files.writing(path, tmp_path, new=True) as file:
            file.write(b"ours")
            path.write_bytes(b"theirs")

    assert _refusal(race) == f"{path}: exists; not overwritten"
    assert path.read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["telemetry.toml"]


def test_a_link_planted_at_the_staged_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Someone who can write the folder and guesses the staged name puts a link there:
    # the staged copy is made only as a new file (O_EXCL), so the link is never followed
    # and never renamed into place.
    monkeypatch.setattr(secrets, "token_hex", lambda nbytes: "0" * 2 * nbytes)
    outside = tmp_path / "outside.txt"
    outside.write_text(TARGET, encoding="utf-8")
    folder = tmp_path / "views"
    folder.mkdir()
    path = folder / "v.sql"
    path.write_text("old", encoding="utf-8")
    (folder / ".v.sql.00000000.tmp").symlink_to(outside)
    with pytest.raises(FileExistsError):
        write_text(path, "written", tmp_path)
    assert outside.read_text(encoding="utf-8") == TARGET
    assert not path.is_symlink()
    assert path.read_text(encoding="utf-8") == "old"
