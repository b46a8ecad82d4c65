"""One door for loading a catalogue: whatever the module raises, every command that loads it
exits 2 with one sanitised line naming the module and the exception's class.

The table is every entry point that loads a catalogue x every way a module can fail to
load. Each module first leaves a mark, so a row also proves the command reached the
catalogue (a row that failed earlier for another reason would prove nothing).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import agent_telemetry
from agent_telemetry._text import clean
from agent_telemetry.cli import main
from agent_telemetry.deploy._approval import approve, write_approval
from agent_telemetry.schema.catalogue import CatalogueError, load_catalogue
from tests.deploy.test_approval_gate import plan
from tests.schema.copies import EVENTS_IN_REPO, repo_copy, run_cli_in
from tests.service import write_module

# Escapes as the module's source spells them (its string literals decode them).
HOSTILE = (
    "\\x1b]8;;https://evil.example\\x07x\\x1b]8;;\\x07"
    "\\n::error file=a.py::forged\\n##[error]y\\u202e"
)

# name -> (module body after the mark, the exception class the line must name)
RAISES: dict[str, tuple[str, str]] = {
    "system_exit_0": ("raise SystemExit(0)", "SystemExit"),
    "system_exit_text": (f"raise SystemExit('{HOSTILE}')", "SystemExit"),
    "keyboard_interrupt": ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    "base_exception": (
        f"class Hostile(BaseException):\n    pass\nraise Hostile('{HOSTILE}')",
        "Hostile",
    ),
    "str_raises": (
        "class Loud(Exception):\n    def __str__(self):\n        raise ValueError('no')\n"
        "raise Loud()",
        "Loud",
    ),
    "str_raises_system_exit": (
        "class Louder(Exception):\n    def __str__(self):\n        raise SystemExit(0)\n"
        "raise Louder()",
        "Louder",
    ),
    "hostile_text": (f"raise ValueError('{HOSTILE}')", "ValueError"),
    "hostile_class_name": (
        f"raise type('{HOSTILE}', (Exception,), {{}})()",
        clean(HOSTILE.encode().decode("unicode_escape")),
    ),
    "events_attribute_raises": (
        "def __getattr__(name):\n    raise SystemExit(0)",
        "SystemExit",
    ),
    # Compiled after the mark (a file that does not parse would never leave one).
    "syntax_error": ("exec(compile('EVENTS = {', 'broken.py', 'exec'))", "SyntaxError"),
    "pydantic_cannot_build": (
        """
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent


class Broken(TelemetryEvent):
    \"\"\"A model pydantic itself cannot build.\"\"\"

    event_name: ClassVar[str] = "broken"
    schema_version: ClassVar[int] = 1
    count: int = Field(ge=0, le=5.9, strict=True, description="a count")


EVENTS = {"broken": Broken}
""",
        "Broken",
    ),
}

CONFIG = """\
[catalogue]
module = "{module}"
lock = "telemetry/schema.lock.json"

[source]
project = "acme-door-test"
dataset = "service_logs"

[target]
project = "acme-door-test"
dataset = "door_telemetry"
"""

ENDPOINT = "http://127.0.0.1:9"  # nothing listens: a command must fail before it connects


def _commands(root: Path) -> dict[str, list[str]]:
    config = str(root / "telemetry.toml")
    log = str(root / "log.jsonl")
    approval = str(root / "approval.json")
    return {
        "check": ["check", "--config", config],
        "check --schema-only": ["check", "--schema-only", "--config", config],
        "check --format github": ["check", "--format", "github", "--config", config],
        "lock": ["lock", "--config", config],
        "events": ["events", "--config", config],
        "sink-schema": ["sink-schema", "--config", config],
        "views build": ["views", "build", "--config", config],
        "views build --check": ["views", "build", "--check", "--config", config],
        "views plan": ["views", "plan", "--config", config, "--endpoint", ENDPOINT],
        "views approve": [
            "views",
            "approve",
            "--config",
            config,
            "--endpoint",
            ENDPOINT,
            "-o",
            str(root / "new-approval.json"),
        ],
        "views apply": [
            "views",
            "apply",
            "--config",
            config,
            "--endpoint",
            ENDPOINT,
            "--approval",
            approval,
        ],
        "check-logs": ["check-logs", log, "--config", config],
        "preview": ["preview", log, "--config", config],
        "query": ["query", "SELECT 1", log, "--config", config],
    }


COMMANDS = list(_commands(Path("/")))


def _service(root: Path, kind: str) -> tuple[str, Path]:
    """A service folder whose catalogue module leaves a mark, then fails as ``kind`` says."""
    mark = root / "ran"
    body, _ = RAISES[kind]
    module = write_module(
        root, f"from pathlib import Path\nPath({str(mark)!r}).write_text('ran')\n" + body
    )
    (root / "telemetry.toml").write_text(CONFIG.format(module=module), encoding="utf-8")
    (root / "log.jsonl").write_text('{"event": "chat_turn"}\n', encoding="utf-8")
    write_approval(approve(plan(), "Ana Analyst"), root / "approval.json")
    return module, mark


@pytest.fixture
def isolated_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))


def _assert_one_safe_line(output: str, module: str, named: str) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    line = lines[0]
    assert "Traceback" not in output
    assert module in line, line
    assert named in line, line
    assert not line.lstrip().startswith("::"), line
    assert "##[" not in line, line
    assert all(c == "\t" or (c >= " " and c != "\x7f") for c in line), repr(line)
    assert "\u202e" not in line


@pytest.mark.usefixtures("isolated_path")
@pytest.mark.parametrize("kind", list(RAISES))
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_turns_any_load_failure_into_one_line_exit_2(
    command: str, kind: str, tmp_path: Path
) -> None:
    module, mark = _service(tmp_path, kind)
    result = CliRunner().invoke(main, _commands(tmp_path)[command], catch_exceptions=False)
    assert mark.exists(), f"{command} never loaded the catalogue: {result.output}"
    assert result.exit_code == 2, result.output
    _assert_one_safe_line(result.output, module, RAISES[kind][1])


@pytest.mark.usefixtures("isolated_path")
@pytest.mark.parametrize("kind", list(RAISES))
def test_the_emitter_and_the_api_raise_one_catalogue_error(kind: str, tmp_path: Path) -> None:
    module, mark = _service(tmp_path, kind)
    sys.path.insert(0, str(tmp_path))
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(module)
    assert mark.exists()
    _assert_one_safe_line(str(caught.value), module, RAISES[kind][1])


# --- this repository's own models ------------------------------------------------------

OWN_COMMANDS = [
    ["check", "--schema-only"],
    ["lock"],
    ["events"],
    ["sink-schema"],
    ["views", "build", "--check"],
    ["check-logs", "log.jsonl"],
]


@pytest.fixture(scope="module")
def unbuildable_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this repository whose chat_turn gains a field pydantic cannot build."""
    copy = repo_copy(tmp_path_factory.mktemp("own"))
    events = copy / EVENTS_IN_REPO
    source = events.read_text(encoding="utf-8")
    anchor = '    kind: TurnKind = Field(description="Whether the turn answered in text or took'
    assert anchor in source
    broken = '    broken: int = Field(ge=0, le=5.9, strict=True, description="a count")\n'
    events.write_text(source.replace(anchor, broken + anchor), encoding="utf-8")
    (copy / "log.jsonl").write_text('{"event": "chat_turn"}\n', encoding="utf-8")
    return copy


@pytest.mark.parametrize("args", OWN_COMMANDS, ids=" ".join)
def test_this_repositorys_unbuildable_model_is_one_line_exit_2(
    args: list[str], unbuildable_repo: Path
) -> None:
    done = run_cli_in(unbuildable_repo, *args)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    _assert_one_safe_line(output, "agent_telemetry.schema", "events.py")


# Modules that import by a name in a variable, each with a fixed name of this package:
# the lazy command table (cli.py), lazy attributes (_lazy.py), the BigQuery extra's probe.
FIXED_NAME_IMPORTERS = {"cli.py", "_lazy.py", "deploy/cli.py"}


def test_the_loader_is_the_only_importer_of_a_module_a_config_names() -> None:
    package = Path(agent_telemetry.__file__).parent
    importers = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(
            r"import_module\(|__import__\(|spec_from_file_location|exec_module",
            path.read_text(encoding="utf-8"),
        )
    }
    assert importers == FIXED_NAME_IMPORTERS | {"_loader.py"}
