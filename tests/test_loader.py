"""The catalogue door's one line, word for word (``agent_telemetry._loader``).

``tests/schema/test_catalogue_door.py`` runs every command against every way a module
can fail, and checks the line is one safe line naming the module and the exception's
class. Here each piece of that line is compared whole, in-process: where it points (a
syntax error's file and line, the class pydantic could not build), what it keeps of the
exception's text, and which errors pass through the door untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_telemetry._loader import CatalogueLoadError, describe, guarded, import_catalogue
from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError
from agent_telemetry.schema.catalogue import CatalogueError

PREFIX = "the catalogue module svc.events does not load"

# A model pydantic itself cannot build: a float bound on a strict int.
UNBUILDABLE = """\
from pydantic import BaseModel, Field


class Broken(BaseModel):
    count: int = Field(ge=0, le=5.9, strict=True)
"""
UNBUILDABLE_LINE = 4  # the class statement
# pydantic's own text for it, as describe keeps it: the first 200 characters, then "...".
PYDANTIC_TEXT = (
    'Error building "model" validator: SchemaError: Error building "model-fields" '
    'validator: SchemaError: Field "count": SchemaError: Error building "int" validator: '
    "ValueError: 'le' must be coercible to an integer"
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The working folder, importable, and its modules forgotten afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _raised(code: str, filename: str) -> BaseException:
    """What running ``code`` compiled as ``filename`` raises."""
    try:
        exec(compile(code, filename, "exec"), {})
    except BaseException as exc:  # the test wants whatever it is
        return exc
    raise AssertionError("the code did not raise")


# --- the exception's class and text ------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (ValueError("bad value"), f"{PREFIX}: ValueError (bad value)"),
        # Every line of the text, stripped, on one line; blank lines dropped.
        (
            ValueError("  first  \n\n   second \r\n third"),
            f"{PREFIX}: ValueError (first second third)",
        ),
        (ValueError(), f"{PREFIX}: ValueError"),
        (ValueError("   \n  "), f"{PREFIX}: ValueError"),
        # SystemExit's and KeyboardInterrupt's "text" is an exit code or nothing.
        (SystemExit("leaving now"), f"{PREFIX}: SystemExit"),
        (SystemExit(3), f"{PREFIX}: SystemExit"),
        (KeyboardInterrupt("stop"), f"{PREFIX}: KeyboardInterrupt"),
        # Only those two: another BaseException's text is shown.
        (GeneratorExit("closed"), f"{PREFIX}: GeneratorExit (closed)"),
        # The text through clean: no escape character reaches the terminal.
        (ValueError("\x1b[31mred"), f"{PREFIX}: ValueError (\\x1b[31mred)"),
    ],
    ids=[
        "text",
        "lines",
        "no_text",
        "blank_text",
        "exit_text",
        "exit_code",
        "interrupt",
        "other_base",
        "escape",
    ],
)
def test_the_line_names_the_class_and_a_cleaned_excerpt(exc: BaseException, line: str) -> None:
    assert describe("svc.events", exc) == line


def test_an_exception_whose_str_raises_shows_its_class_alone() -> None:
    class Loud(Exception):
        def __str__(self) -> str:
            raise SystemExit(0)

    assert describe("svc.events", Loud()) == f"{PREFIX}: Loud"


def test_the_module_and_the_class_name_are_cleaned() -> None:
    hostile = type("Bad\x1b]8;;x\x07", (Exception,), {})
    assert describe("svc\nevents", hostile("t")) == (
        "the catalogue module svc\\nevents does not load: Bad\\x1b]8;;x\\x07 (t)"
    )


@pytest.mark.parametrize(
    ("length", "shown"),
    [(199, "a" * 199), (200, "a" * 200), (201, "a" * 200 + "..."), (5000, "a" * 200 + "...")],
)
def test_the_excerpt_stops_at_200_characters(length: int, shown: str) -> None:
    assert describe("svc.events", ValueError("a" * length)) == f"{PREFIX}: ValueError ({shown})"


# --- a syntax error: its file (relative to the working folder) and line -----------------


def test_a_syntax_error_names_its_file_and_line(folder: Path) -> None:
    exc = _raised("EVENTS = {\n", str(folder / "svc" / "events.py"))
    assert describe("svc.events", exc) == (
        f"{PREFIX} at svc/events.py:1: SyntaxError ('{{' was never closed)"
    )


def test_a_syntax_error_on_a_later_line_names_that_line(folder: Path) -> None:
    exc = _raised("A = 1\nB = 2\nC = )\n", "events.py")
    assert describe("svc.events", exc) == f"{PREFIX} at events.py:3: SyntaxError (unmatched ')')"


def test_a_syntax_error_outside_the_working_folder_is_named_by_its_absolute_path(
    folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "events.py"
    exc = _raised("C = )\n", str(elsewhere))
    assert describe("svc.events", exc) == (
        f"{PREFIX} at {elsewhere.as_posix()}:1: SyntaxError (unmatched ')')"
    )


def test_a_syntax_error_without_a_line_reads_line_1_and_one_without_a_file_no_place() -> None:
    no_line = SyntaxError("bad token")
    no_line.filename, no_line.lineno = "/srv/events.py", None
    assert (
        describe("svc.events", no_line) == f"{PREFIX} at /srv/events.py:1: SyntaxError (bad token)"
    )
    assert describe("svc.events", SyntaxError("bad token")) == f"{PREFIX}: SyntaxError (bad token)"
    no_text = SyntaxError()
    no_text.filename, no_text.lineno = "/srv/events.py", 7
    assert describe("svc.events", no_text) == f"{PREFIX} at /srv/events.py:7: SyntaxError"


def test_a_syntax_errors_file_name_is_cleaned() -> None:
    exc = SyntaxError("bad")
    exc.filename, exc.lineno = "/srv/\x1b[2Jevents.py", 2
    assert describe("svc.events", exc) == (
        f"{PREFIX} at /srv/\\x1b[2Jevents.py:2: SyntaxError (bad)"
    )


# --- a model pydantic cannot build: the file, line and class ----------------------------


def _unbuildable(folder: Path, name: str = "brokenmod", source: str = UNBUILDABLE) -> str:
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    with pytest.raises(CatalogueLoadError) as caught, guarded(name):
        import_catalogue(name)
    return str(caught.value)


def test_a_model_pydantic_cannot_build_is_named_with_its_file_line_and_class(
    folder: Path,
) -> None:
    assert _unbuildable(folder) == (
        f"the catalogue module brokenmod does not load at brokenmod.py:{UNBUILDABLE_LINE} "
        f"(class Broken: pydantic cannot build it): SchemaError ({PYDANTIC_TEXT[:200]}...)"
    )


def test_the_class_is_found_on_its_line_whatever_its_indentation(folder: Path) -> None:
    source = UNBUILDABLE.replace(
        "class Broken(BaseModel):\n    count",
        "if True:\n    class   Inner(BaseModel):\n        count",
    )
    line = _unbuildable(folder, "indented", source)
    assert line.startswith(
        "the catalogue module indented does not load at indented.py:5 "
        "(class Inner: pydantic cannot build it): SchemaError ("
    ), line


def test_a_model_built_without_a_class_statement_gets_no_class_name(folder: Path) -> None:
    source = (
        "from pydantic import Field, create_model\n"
        "\n"
        "Broken = create_model('Broken', count=(int, Field(ge=0, le=5.9, strict=True)))\n"
    )
    line = _unbuildable(folder, "created", source)
    assert line.startswith(
        "the catalogue module created does not load at created.py:3: SchemaError ("
    ), line


@pytest.mark.parametrize(
    "where",
    [
        "missing",  # no such file (code compiled under a name that is not a file)
        "short",  # a file with fewer lines than the line named
        "not_utf8",  # a file that is not UTF-8
    ],
)
def test_a_class_line_that_cannot_be_read_still_names_the_file_and_line(
    folder: Path, where: str
) -> None:
    path = folder / f"{where}.py"
    if where == "short":
        path.write_text("# one line\n", encoding="utf-8")
    elif where == "not_utf8":
        path.write_bytes(b"# caf\xe9\n" * 10)
    exc = _raised(UNBUILDABLE, str(path))
    assert describe("svc.events", exc).startswith(
        f"{PREFIX} at {where}.py:{UNBUILDABLE_LINE}: SchemaError ("
    )


def test_an_exception_raised_outside_pydantic_names_no_place(folder: Path) -> None:
    (folder / "plain.py").write_text("import json\n\njson.loads('{')\n", encoding="utf-8")
    with pytest.raises(CatalogueLoadError) as caught, guarded("plain"):
        import_catalogue("plain")
    assert str(caught.value) == (
        "the catalogue module plain does not load: JSONDecodeError "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    )


# --- which errors pass through the door --------------------------------------------------


def test_this_packages_own_errors_pass_through_unchanged() -> None:
    rule = SchemaRuleError("Turn", "tokens", "FIELD_UNBOUNDED", "give it a bound")
    with pytest.raises(SchemaRuleError) as caught, guarded("svc.events"):
        raise rule
    assert caught.value is rule
    own = CatalogueError("svc.events: EVENTS is not a mapping")
    with pytest.raises(CatalogueError) as mapped, guarded("svc.events"):
        raise own
    assert mapped.value is own


def test_an_error_the_module_made_up_in_the_packages_names_is_wrapped() -> None:
    # A catalogue can subclass the package's errors, or name its module like the
    # package's: neither carries text the package wrote.
    forged = type("SchemaRuleError", (SchemaRuleError,), {"__module__": "svc.events"})
    claimed = type("Forged", (AgentTelemetryError,), {"__module__": "agent_telemetry_x"})
    for exc, line in (
        (
            forged("X", None, "RULE", "::error::forged"),
            "SchemaRuleError (X: RULE: ::error::forged)",
        ),
        (claimed("::error::forged"), "Forged (\\x3a:error::forged)"),
    ):
        with pytest.raises(CatalogueLoadError) as caught, guarded("svc.events"):
            raise exc
        assert str(caught.value) == f"{PREFIX}: {line}"
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__


def test_the_load_error_is_a_catalogue_error() -> None:
    with pytest.raises(CatalogueError), guarded("svc.events"):
        raise RuntimeError("x")
