"""Committed and written files: never followed through a symlink, written atomically; a
file that is not UTF-8 and models that do not load are one-line errors, exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry._files import read_text, write_text
from agent_telemetry.check._run import run_check
from agent_telemetry.cli import main
from agent_telemetry.deploy._approval import ApprovalError, approve, write_approval
from agent_telemetry.errors import FileRefusedError
from agent_telemetry.schema.lock import LOCK_PATH
from agent_telemetry.views import GENERATED_DIR
from tests.deploy.test_approval_gate import plan

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "telemetry.toml"
SECRET = "i25-secret-value-7f3a"
TARGET_TEXT = "# a file the link points to; nothing may change it\n"


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def views(tmp_path: Path) -> Path:
    folder = tmp_path / "generated"
    shutil.copytree(GENERATED_DIR, folder)
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / ".bashrc"
    target.parent.mkdir()
    target.write_text(TARGET_TEXT, encoding="utf-8")
    return target


def test_check_refuses_a_view_symlinked_to_the_environment_and_prints_none_of_it(
    views: Path,
) -> None:
    """In a fresh process with a secret in its environment: /proc/self/environ is its own."""
    link = views / "partitioned" / "chat_turn.sql"
    link.unlink()
    link.symlink_to("/proc/self/environ")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_telemetry._entry",
            "check",
            "--config",
            str(CONFIG),
            "--sql-dir",
            str(views),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "I25_SECRET": SECRET},
        cwd=REPO,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert SECRET not in output
    assert "I25_SECRET" not in output
    assert "PATH=" not in output
    assert "environ" not in output  # not even where the link points
    assert result.stderr.count("\n") == 1, result.stderr
    assert "chat_turn.sql: is a symbolic link; refused" in result.stderr
    assert "Traceback" not in output


def test_views_build_leaves_a_symlink_target_untouched(views: Path, outside: Path) -> None:
    link = views / "partitioned" / "chat_turn.sql"
    link.unlink()
    link.symlink_to(outside)
    code, output = run(
        [
            "views",
            "build",
            "--config",
            str(CONFIG),
            "--sql-dir",
            str(views),
            "--docs",
            str(views / "telemetry.md"),
        ]
    )
    assert code == 2, output
    assert "chat_turn.sql: is a symbolic link; refused" in output
    assert outside.read_text(encoding="utf-8") == TARGET_TEXT
    assert link.is_symlink()


def test_lock_refuses_to_write_through_a_symlink(tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "schema.lock.json"
    link.symlink_to(outside)
    code, output = run(["lock", "--config", str(CONFIG), "--lock", str(link)])
    assert code == 2, output
    assert "schema.lock.json: is a symbolic link; refused" in output
    assert outside.read_text(encoding="utf-8") == TARGET_TEXT


def test_check_refuses_a_symlinked_lock(tmp_path: Path) -> None:
    link = tmp_path / "schema.lock.json"
    link.symlink_to(LOCK_PATH)  # even a link to the real lock
    code, output = run(["check", "--schema-only", "--config", str(CONFIG), "--lock", str(link)])
    assert code == 2, output
    assert output.count("\n") == 1
    assert "is a symbolic link; refused" in output


def test_an_approval_is_never_written_or_read_through_a_symlink(
    tmp_path: Path, outside: Path
) -> None:
    from agent_telemetry.deploy._approval import read_approval

    link = tmp_path / "telemetry-approval.json"
    link.symlink_to(outside)
    with pytest.raises(ApprovalError, match="is a symbolic link; refused"):
        write_approval(approve(plan(), "Ana Analyst"), link)
    assert outside.read_text(encoding="utf-8") == TARGET_TEXT
    with pytest.raises(ApprovalError, match="is a symbolic link; refused"):
        read_approval(link)


def test_writes_are_atomic_and_leave_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "view.sql"
    path.write_text("old\n", encoding="utf-8")
    os.chmod(path, 0o640)
    with pytest.raises(UnicodeEncodeError):
        write_text(path, "half \ud800 written")  # fails while writing: the old file stays
    assert path.read_text(encoding="utf-8") == "old\n"
    write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)  # the mode it had
    assert sorted(p.name for p in tmp_path.iterdir()) == ["view.sql"]


def test_a_view_file_that_is_not_utf8_is_one_line_exit_2(views: Path) -> None:
    (views / "partitioned" / "chat_turn.sql").write_bytes(b"SELECT '\xff\xfe'\n")
    code, output = run(["check", "--config", str(CONFIG), "--sql-dir", str(views)])
    assert code == 2, output
    assert output.splitlines() == [
        f"Error: {views / 'partitioned' / 'chat_turn.sql'}: is not UTF-8 text (byte 8)"
    ]
    with pytest.raises(FileRefusedError, match="not UTF-8"):
        read_text(views / "partitioned" / "chat_turn.sql")


# --- models that do not load ----------------------------------------------------------


@pytest.fixture
def models_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A models module of the test's own, which `check` loads instead of the package's
    (as a service's catalogue is loaded)."""
    name = f"i25_models_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(run_check.__kwdefaults__, "models_module", name)
    yield path
    sys.modules.pop(name, None)


UNBUILDABLE = """
from typing import Literal

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent


class Broken(TelemetryEvent):
    \"\"\"A model pydantic itself cannot build.\"\"\"

    event: Literal["broken"] = "broken"
    count: int = Field(ge=0, le=5.9, strict=True, description="a count")


EVENTS = {"broken": Broken}
"""


@pytest.mark.parametrize(
    ("source", "named"),
    [
        (UNBUILDABLE, "class Broken: pydantic cannot build it"),
        ("EVENTS = {\n", "does not load at"),
    ],
    ids=["pydantic_cannot_build", "syntax_error"],
)
def test_models_that_do_not_load_are_one_line_exit_2(
    models_module: Path, source: str, named: str
) -> None:
    models_module.write_text(textwrap.dedent(source), encoding="utf-8")
    code, output = run(["check", "--schema-only", "--config", str(CONFIG)])
    assert code == 2, output
    assert len(output.splitlines()) == 1, output
    assert named in output
    assert models_module.name in output
    assert "Traceback" not in output
