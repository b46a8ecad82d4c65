"""Committed and written files: never followed through a symlink, written atomically; a
file that is not UTF-8 and models that do not load are one-line errors, exit 2."""

from __future__ import annotations

import ast
import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_telemetry._files import read_text, write_text
from agent_telemetry.check._run import run_check
from agent_telemetry.cli import main
from agent_telemetry.deploy._approval import ApprovalError, approve, write_approval
from agent_telemetry.errors import AgentTelemetryError, FileRefusedError
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
        write_text(path, "half \ud800 written", tmp_path)  # fails: the old file stays
    assert path.read_text(encoding="utf-8") == "old\n"
    write_text(path, "new\n", tmp_path)
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


# --- one door for writing: every writing entry point, through a linked folder or file --
#
# A scenario is a working tree (``repo``, with a ``.git``) holding a link that points at
# ``outside`` (a stand-in for $HOME, holding its .bashrc). Each row names the entry
# point, the file it would write (relative to ``repo``, the working directory) and how
# to run it. Whatever links which component of that path, the entry point refuses with a
# message naming the link, and nothing outside changes.

LOG_LINE = (
    '{"event":"chat_turn","schema_version":1,"tier":"public","kind":"text",'
    '"time":"2026-01-02T03:04:05Z"}\n'
)


def _cli(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.output  # stdout and stderr, as a terminal shows them


def _refused(call: Callable[[], object]) -> tuple[int, str]:
    """A writer function's outcome as a command's: its error is exit 2 and one line."""
    try:
        call()
    except AgentTelemetryError as exc:
        return 2, str(exc)
    return 0, ""


def _config(repo: Path, views: str) -> Path:
    """A telemetry.toml of this repository's events whose [views] names ``views``."""
    config = repo / "telemetry.toml"
    text = CONFIG.read_text(encoding="utf-8").replace("[views]\n", f"[views]\n{views}\n")
    config.write_text(text, encoding="utf-8")
    return config


def _log(repo: Path) -> Path:
    log = repo / "logs.jsonl"
    log.write_text(LOG_LINE, encoding="utf-8")
    return log


def views_docs_in_config(repo: Path, target: str) -> tuple[int, str]:
    """The issue's case: [views] docs = "h/.bashrc", run from elsewhere with --config."""
    config = _config(repo, f'dir = "v"\ndocs = "{target}"')
    with _cwd(REPO):  # the trusted folder is then the config's, not the working tree
        return _cli(["views", "build", "--config", str(config)])


def views_dir_in_config(repo: Path, target: str) -> tuple[int, str]:
    config = _config(repo, f'dir = "{Path(target).parent.parent}"\ndocs = "d.md"')
    return _cli(["views", "build", "--config", str(config)])


def views_sql_dir_option(repo: Path, target: str) -> tuple[int, str]:
    sql_dir = str(Path(target).parent.parent)
    return _cli(["views", "build", "--config", str(CONFIG), "--sql-dir", sql_dir, "--docs", "d.md"])


def views_docs_option(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["views", "build", "--config", str(CONFIG), "--sql-dir", "v", "--docs", target])


def lock_option(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["lock", "--config", str(CONFIG), "--lock", target])


def lock_in_config(repo: Path, target: str) -> tuple[int, str]:
    config = repo / "telemetry.toml"
    config.write_text(
        CONFIG.read_text(encoding="utf-8")
        + f'\n[catalogue]\nmodule = "agent_telemetry.schema"\nlock = "{target}"\n',
        encoding="utf-8",
    )
    with _cwd(REPO):
        return _cli(["lock", "--config", str(config)])


def approval_record(repo: Path, target: str) -> tuple[int, str]:
    """`views approve -o FILE` writes through ``write_approval`` (BigQuery: tests/deploy)."""
    return _refused(lambda: write_approval(approve(plan(), "Ana Analyst"), Path(target)))


def review_page(repo: Path, target: str) -> tuple[int, str]:
    """`views plan --html FILE` writes through ``write_review_page``."""
    from agent_telemetry.deploy._plan_document import plan_document
    from agent_telemetry.deploy._review_page import write_review_page

    document = plan_document(plan(), "agent-telemetry views approve")
    return _refused(lambda: write_review_page(document, Path(target)))


def report_html(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["report", str(_log(repo)), "--html", target])


def preview_db(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["preview", str(_log(repo)), "--db", target])


def demo_out(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["demo", "--out", str(Path(target).parent)])


def init(repo: Path, target: str) -> tuple[int, str]:
    return _cli(["init", "--package", "svc"])


@dataclass(frozen=True)
class Writer:
    name: str
    target: str  # the file it writes, relative to the working tree
    run: Callable[[Path, str], tuple[int, str]]


WRITERS = [
    Writer("views build: [views] docs", "h/.bashrc", views_docs_in_config),
    Writer("views build: [views] dir", "h/views/partitioned/chat_turn.sql", views_dir_in_config),
    Writer("views build --sql-dir", "h/views/partitioned/chat_turn.sql", views_sql_dir_option),
    Writer("views build --docs", "h/.bashrc", views_docs_option),
    Writer("lock --lock", "h/schema.lock.json", lock_option),
    Writer("lock: [catalogue] lock", "h/schema.lock.json", lock_in_config),
    Writer("views approve -o", "h/telemetry-approval.json", approval_record),
    Writer("views plan --html", "h/review.html", review_page),
    Writer("report --html", "h/report.html", report_html),
    Writer("preview --db", "h/warehouse.duckdb", preview_db),
    Writer("demo --out: telemetry.jsonl", "h/telemetry.jsonl", demo_out),
    Writer("init: .github", ".github/workflows/telemetry.yml", init),
    Writer("init: docs", "docs/telemetry.md", init),
    Writer("init: telemetry.toml", "telemetry.toml", init),
]
# The BigQuery commands' own paths are the same functions, run from the command line
# against the emulator in tests/deploy/bigquery/test_outside_bigquery.py.


@contextlib.contextmanager
def _cwd(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _tree(folder: Path) -> dict[str, str]:
    """Every entry below ``folder`` and what it holds (links as where they point)."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            seen[key] = f"-> {os.readlink(path)}"
        elif path.is_file():
            seen[key] = path.read_text(encoding="utf-8", errors="replace")
        else:
            seen[key] = "/"
    return seen


def _plant(repo: Path, outside: Path, target: str, link: str) -> Path:
    """Make ``target``'s first folder a link to ``outside`` (``folder``), or the file a
    link to ``outside``'s .bashrc (``file``); the link made."""
    parts = Path(target).parts
    if link == "folder" and len(parts) > 1:
        made = repo / parts[0]
        made.symlink_to(outside, target_is_directory=True)
        return made
    made = repo / target
    made.parent.mkdir(parents=True, exist_ok=True)
    made.symlink_to(outside / ".bashrc")
    return made


LINKS = [
    pytest.param(writer, link, id=f"{writer.name} ({link} link)")
    for writer in WRITERS
    for link in ("folder", "file")
    if link == "file" or len(Path(writer.target).parts) > 1  # a top file has no folder
]


@pytest.mark.parametrize(("writer", "link"), LINKS)
def test_no_write_goes_through_a_link(
    writer: Writer, link: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / ".bashrc").write_text(TARGET_TEXT, encoding="utf-8")
    made = _plant(repo, outside, writer.target, link)
    before = _tree(outside)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "path", list(sys.path))  # a [catalogue] adds its folder
    code, output = writer.run(repo, writer.target)
    assert code == 2, output
    assert "is a symbolic link" in output, output
    assert made.name in output, output
    assert len(output.strip().splitlines()) == 1, output
    assert _tree(outside) == before
    assert made.is_symlink()


# Calls that write a file. Only _files makes them; the rest of the package goes through it.
# (``Path.replace`` and ``Path.rename`` read as ``str.replace``: os.replace is the spelling.)
MODULE_WRITERS = {
    "os": {"open", "replace", "rename", "link", "symlink", "unlink", "remove", "mkfifo"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "TemporaryDirectory"},
}
PATH_WRITERS = {"write_text", "write_bytes", "touch", "unlink", "symlink_to", "hardlink_to"}
# Private scratch space nobody else can name (tempfile's 0600 files in 0700 folders).
SCRATCH = {
    "agent_telemetry/warehouse/_loading/load.py": "the load's row spool, in a TemporaryDirectory",
    "agent_telemetry/warehouse/_judging/copies.py": "the duplicate check's spool, a TemporaryFile",
}


def _writing_mode(call: ast.Call) -> bool:
    given = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(isinstance(m, ast.Constant) and bool(set(str(m.value)) & set("wax+")) for m in given)


def _writes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else ""
            if func.attr in MODULE_WRITERS.get(owner, ()) or func.attr in PATH_WRITERS:
                found.append(f"{owner}.{func.attr}() at line {node.lineno}")
            elif func.attr in {"open", "fdopen"} and _writing_mode(node):
                found.append(f".{func.attr}(..., writing) at line {node.lineno}")
        elif isinstance(func, ast.Name) and func.id == "open" and _writing_mode(node):
            found.append(f"open(..., writing) at line {node.lineno}")
    return found


def test_the_file_door_is_the_only_writer_in_the_package() -> None:
    """A new writer that goes round ``_files`` fails here, naming the call."""
    package = REPO / "agent_telemetry"
    found = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        if name == "agent_telemetry/_files.py":
            continue
        writes = _writes(ast.parse(path.read_text(encoding="utf-8")))
        if writes and name not in SCRATCH:
            found[name] = writes
    assert found == {}
