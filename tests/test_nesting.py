"""Every document a command reads has a nesting limit (``agent_telemetry._parse``).

One table of documents nested 100,000 levels deep (telemetry.toml in each of TOML's
three ways to nest, the schema lock, an approval record), each run through every command
that reads it: each must exit 2 with one line naming the file, never a
``RecursionError`` traceback. Log lines are judged one by one instead: a deep one is
counted ``too deep`` and the command goes on, in every command that reads logs.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agent_telemetry._parse import MAX_NESTING, depth_exceeds, json_document, toml_document
from agent_telemetry.cli import main
from tests.service import copy_service

DEEP = 100_000
CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens: a command that got this far fails
GOOD_LINE = (
    '{"event":"cache_lookup","schema_version":1,"severity":"INFO",'
    '"time":"2026-12-01T10:00:00.000000Z","outcome":"hit"}'
)


def _arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


@dataclass(frozen=True)
class Document:
    """A file in the service copy, and how to make it nest ``DEEP`` levels."""

    path: str
    deep: Callable[[str], str]  # the file's good text -> a deep one


DOCUMENTS = {
    "toml_arrays": Document("telemetry.toml", lambda t: t + f"\n[deep]\na = {_arrays(DEEP)}\n"),
    "toml_inline_tables": Document(
        "telemetry.toml", lambda t: t + "\n[deep]\na = " + "{a = " * DEEP + "1" + "}" * DEEP
    ),
    # Dotted keys nest without recursing in the parser: caught after it.
    "toml_dotted_keys": Document(
        "telemetry.toml", lambda t: t + "\n[" + ".".join(["a"] * DEEP) + "]\n"
    ),
    "lock": Document("telemetry/schema.lock.json", lambda t: '{"a": ' + _arrays(DEEP) + "}"),
    "approval": Document("approval.json", lambda t: '{"format": ' + _arrays(DEEP) + "}"),
}

LOG = "telemetry.jsonl"
# Every command that reads each kind of document, with its arguments.
TOML_COMMANDS = [
    ("check",),
    ("lock",),
    ("events",),
    ("sink-schema",),
    ("views", "build"),
    ("views", "build", "--check"),
    ("views", "plan", "--endpoint", CLOSED_PORT),
    ("views", "approve", "--by", "Ana", "--endpoint", CLOSED_PORT),
    ("views", "apply", "--approval", "approval.json", "--endpoint", CLOSED_PORT),
    ("views", "analyze", "query.sql"),
    ("check-logs", LOG),
    ("preview", LOG),
    ("query", "SELECT 1", LOG),
    ("report", LOG),
]
CASES = [
    *[
        (kind, args)
        for kind in ("toml_arrays", "toml_inline_tables", "toml_dotted_keys")
        for args in TOML_COMMANDS
    ],
    ("lock", ("check",)),
    ("lock", ("lock",)),
    ("approval", ("views", "apply", "--approval", "approval.json", "--endpoint", CLOSED_PORT)),
]


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the example service, its own catalogue imported afresh."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def forget() -> None:
        for name in [n for n in sys.modules if n.split(".")[0] == "myservice"]:
            del sys.modules[name]

    forget()
    root = copy_service(tmp_path / "svc")
    (root / LOG).write_text(GOOD_LINE + "\n")
    (root / "query.sql").write_text("SELECT 1\n")
    (root / "approval.json").write_text("{}\n")
    monkeypatch.chdir(root)
    yield root
    forget()


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(("kind", "args"), CASES, ids=[f"{k}-{'_'.join(a[:2])}" for k, a in CASES])
def test_a_deeply_nested_document_is_one_line_and_exit_2(
    service: Path, kind: str, args: tuple[str, ...]
) -> None:
    document = DOCUMENTS[kind]
    path = service / document.path
    path.write_text(document.deep(path.read_text()))

    result = run(*args)

    assert result.exit_code == 2, (result.exit_code, result.output[-500:], result.exception)
    assert "Traceback" not in result.output
    assert "RecursionError" not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1, result.output[-500:]
    assert f"nested deeper than {MAX_NESTING} levels" in error[0]
    assert path.name in error[0]


LOG_COMMANDS = [("check-logs", LOG), ("preview", LOG), ("query", "SELECT 1", LOG), ("report", LOG)]
# orjson parses up to 1,024 levels: a record nested 1,000 deep inside a LogEntry's payload
# parses, and then reached the copies' spool (pickle recurses) before the limit was ours.
DEEP_LINES = {
    "line": _arrays(DEEP),
    "emitter_field": GOOD_LINE[:-1] + ',"x":' + _arrays(DEEP) + "}",
    "entry_field_1000": '{"jsonPayload":'
    + GOOD_LINE[:-1]
    + ',"x":'
    + _arrays(1000)
    + '},"timestamp":"2026-12-01T10:00:00Z","insertId":"a"}',
    "analytics_string": json.dumps(
        {
            "json_payload": GOOD_LINE[:-1] + ',"x":' + _arrays(DEEP) + "}",
            "timestamp": "2026-12-01T10:00:00Z",
            "insert_id": "b",
        }
    ),
    "array_element": "[" + GOOD_LINE + "," + _arrays(DEEP) + "]",
}


@pytest.mark.parametrize("args", LOG_COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("line", DEEP_LINES)
def test_a_deeply_nested_log_record_is_judged_and_the_command_goes_on(
    service: Path, line: str, args: tuple[str, ...]
) -> None:
    deep = DEEP_LINES[line]
    text = deep + "\n" if line == "array_element" else GOOD_LINE + "\n" + deep + "\n"
    (service / LOG).write_text(text)

    result = run(*args)

    assert result.exit_code in (0, 1), (result.exit_code, result.output[-500:], result.exception)
    assert "Traceback" not in result.output
    assert "RecursionError" not in result.output


@pytest.mark.parametrize(("args"), [("check-logs", "--format", "json", LOG)])
def test_check_logs_counts_the_deep_record_as_too_deep(
    service: Path, args: tuple[str, ...]
) -> None:
    (service / LOG).write_text(GOOD_LINE + "\n" + DEEP_LINES["entry_field_1000"] + "\n")
    result = run(*args)
    report = json.loads(result.output)
    assert [f["too_deep"] for f in report["files"]] == [1], result.output[-500:]


def test_the_depth_walk_counts_levels_and_stops_past_the_limit() -> None:
    assert not depth_exceeds({}, 1)
    assert depth_exceeds({}, 0)
    assert not depth_exceeds({"a": [1, {"b": 2}]}, 3)
    assert depth_exceeds({"a": [1, {"b": 2}]}, 2)
    assert not depth_exceeds("[[[[", 0)  # a string is no container
    value: list[object] = []
    for _ in range(DEEP):
        value = [value]
    assert depth_exceeds(value)
    assert not depth_exceeds(value, DEEP + 1)


# Whole-file parsers outside the door, and why each is allowed: none but the log reader,
# which judges one record at a time against the same limit.
PARSE_CALL = re.compile(r"\b(?:json\.loads?|tomllib\.loads?|orjson\.loads)\(")
ALLOWED = {"_parse.py", "warehouse/_reading/records.py"}


def test_no_document_is_parsed_outside_the_door() -> None:
    package = Path(__file__).resolve().parents[1] / "agent_telemetry"
    callers = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if PARSE_CALL.search(path.read_text(encoding="utf-8"))
    }
    assert callers == ALLOWED


# --- the door itself, in-process: what it returns, and the refusal word for word ---------


class Refused(Exception):
    """The caller's own error class: the door raises whatever the caller names."""


def _nested(depth: int) -> str:
    """JSON (and TOML value) text nesting ``depth`` levels: ``[[...]]``."""
    return _arrays(depth)


def test_the_door_returns_what_the_parser_read() -> None:
    assert json_document('{"a": [1, {"b": null}]}', "a.json", Refused) == {"a": [1, {"b": None}]}
    assert json_document("7", "a.json", Refused) == 7
    assert toml_document('a = [1, {b = "c"}]\n[t.u]\nv = 2\n', "a.toml", Refused) == {
        "a": [1, {"b": "c"}],
        "t": {"u": {"v": 2}},
    }


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (json_document, _nested(MAX_NESTING)),
        (toml_document, f"a = {_nested(MAX_NESTING - 1)}\n"),  # the table is one level
        (toml_document, "[" + ".".join(["a"] * (MAX_NESTING - 1)) + "]\n"),
    ],
    ids=["json", "toml_arrays", "toml_dotted_key"],
)
def test_a_document_exactly_at_the_limit_is_read(
    parse: Callable[[str, str, Callable[[str], Exception]], object], text: str
) -> None:
    value = parse(text, "doc", Refused)
    assert not depth_exceeds(value)
    assert depth_exceeds(value, MAX_NESTING - 1)


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (json_document, _nested(MAX_NESTING + 1)),  # parsed, then refused
        (json_document, _nested(DEEP)),  # the parser itself gives up
        (toml_document, f"a = {_nested(MAX_NESTING)}\n"),
        (toml_document, f"a = {_nested(DEEP)}\n"),
        (toml_document, "[" + ".".join(["a"] * MAX_NESTING) + "]\n"),  # parsed, then refused
        (toml_document, "[" + ".".join(["a"] * (MAX_NESTING + 1)) + "]\n"),  # never parsed
        (toml_document, "x.y = 1\n" + " . ".join(['"q"'] * DEEP) + " = 1\n"),  # quoted parts
    ],
    ids=[
        "json_past",
        "json_recursion",
        "toml_past",
        "toml_recursion",
        "dotted_past",
        "dotted_key_refused_unparsed",
        "dotted_quoted",
    ],
)
def test_a_document_past_the_limit_is_refused_in_the_callers_words(
    parse: Callable[[str, str, Callable[[str], Exception]], object], text: str
) -> None:
    with pytest.raises(Refused) as caught:
        parse(text, "base:telemetry.toml", Refused)
    assert str(caught.value) == f"base:telemetry.toml: nested deeper than {MAX_NESTING} levels"
    # No RecursionError traceback chained under the line.
    assert caught.value.__context__ is None or caught.value.__suppress_context__


def test_a_syntax_error_is_left_to_the_caller_to_word() -> None:
    with pytest.raises(json.JSONDecodeError):
        json_document("{", "a.json", Refused)
    with pytest.raises(tomllib.TOMLDecodeError):
        toml_document("a = [", "a.toml", Refused)
