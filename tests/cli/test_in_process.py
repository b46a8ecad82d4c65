"""The command line run in the test's own process: what ``agent-telemetry`` prints.

test_entry.py and tests/test_packaging.py run the real console script in a subprocess;
these run the same code here, where mutation testing sees it (a subprocess and import
time are invisible to it, docs/testing.md). Each test builds the command line afresh, as
a new process would: the lazy commands of the shared ``agent_telemetry.cli.main`` are
loaded by the first test that uses them, so later tests never reach the loading again.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

import agent_telemetry
from agent_telemetry import _entry
from agent_telemetry.warehouse._checking.check_logs import check_logs
from tests.conftest import REPO

VERSION_LINE = f"agent-telemetry, version {agent_telemetry.__version__}"
HINT = "from the [cli] extra: pip install 'agent-telemetry[cli]'"
# Every command `agent-telemetry --help` lists, with the first words of its help.
COMMANDS = {
    "check": "Run every check CI needs",
    "check-logs": "Check real log lines against the models",
    "demo": "Simulate a morning of a rate-limited agent service",
    "events": "Print the event catalogue",
    "init": "Set this repository up",
    "jsonschema": "Print the catalogue's JSON Schema",
    "lock": "Write the schema lock from the models",
    "preview": "Load log files into a local DuckDB warehouse",
    "query": "Run SQL over the generated views",
    "report": "Chart a log",
    "sink-schema": "Print the BigQuery JSON schema",
    "views": "Generated BigQuery views",
}
# The commands BigQuery deployment and the analyzer add to `views` when it loads.
MOUNTED = ("plan", "approve", "apply", "create-sink", "analyze")

PROBE_MODELS = '''
from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count, flag


class Outcome(StrEnum):
    HIT = "hit"
    MISS = "miss"


class CacheProbe(TelemetryEvent):
    """One line per probe."""

    event_name: ClassVar[str] = "cache_probe"
    schema_version: ClassVar[int] = 1

    outcome: Outcome = Field(description="What the probe found.")
    probe_ms: int | None = count(0, 1_000, "Wall time of probe_measured_at_the_edge.")


class CacheEvict(TelemetryEvent):
    """One line per eviction."""

    event_name: ClassVar[str] = "cache_evict"
    schema_version: ClassVar[int] = 2

    was_full: bool | None = flag("Whether the cache was full.")


EVENTS = {CacheProbe.event_name: CacheProbe, CacheEvict.event_name: CacheEvict}
'''
# A field of free text: FIELD_TYPE, raised when the class is defined.
FIELD_RULE_MODELS = '''
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent


class Chatty(TelemetryEvent):
    """Free text."""

    event_name: ClassVar[str] = "chatty"
    schema_version: ClassVar[int] = 1

    note: str = Field(description="Anything.")


EVENTS = {"chatty": Chatty}
'''
FIELD_RULE = (
    "Chatty.note: FIELD_TYPE: type is free str; allowed: a closed set of strings "
    "(Literal/StrEnum), int with ge and le, bool, or Optional of one of those"
)
# A rule about the whole model (no field).
MODEL_RULE_MODELS = '''
from typing import ClassVar

from agent_telemetry.schema import TelemetryEvent


class Shouting(TelemetryEvent):
    """A bad name."""

    event_name: ClassVar[str] = "Bad Name"
    schema_version: ClassVar[int] = 1


EVENTS = {"x": Shouting}
'''
MODEL_RULE = "Shouting: EVENT_NAME: event_name must be lowercase snake_case, at most 64 characters"
UNBUILDABLE_MODELS = '''
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent


class Broken(TelemetryEvent):
    """A model pydantic itself cannot build."""

    event_name: ClassVar[str] = "broken"
    schema_version: ClassVar[int] = 1
    count: int = Field(ge=0, le=5.9, strict=True, description="a count")


EVENTS = {"broken": Broken}
'''


def fresh(name: str) -> ModuleType:
    """Module ``name`` executed anew (not registered in sys.modules), as a new process
    would import it: its import-time work runs inside the test."""
    spec = importlib.util.find_spec(name)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cli() -> ModuleType:
    return fresh("agent_telemetry.cli")


def run(cli: ModuleType, args: list[str], **kwargs: object) -> Result:
    return CliRunner().invoke(cli.main, args, prog_name="agent-telemetry", **kwargs)  # type: ignore[arg-type]


def _identifier(text: str) -> str:
    return re.sub(r"\W", "_", text)


def service(tmp_path: Path, models: str) -> Path:
    """A service folder whose telemetry.toml names ``models`` as its catalogue; returns
    the config. The module's name is the test's own (Python caches modules by name)."""
    name = "events_" + _identifier(tmp_path.name)
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(models), encoding="utf-8")
    source = (REPO / "telemetry.toml").read_text(encoding="utf-8")
    head = source[: source.index("\n# This repository commits")]
    config = tmp_path / "telemetry.toml"
    config.write_text(
        f'{head}\n[catalogue]\nmodule = "{name}"\nlock = "schema.lock.json"\n', encoding="utf-8"
    )
    return config


def command_module(tmp_path: Path, models: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module defining ``models``, as a command's module that imports the
    models is (views.cli, warehouse.cli, ...); returns its name."""
    name = "command_" + _identifier(tmp_path.name)
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(models), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


# --- the listing and the lazy commands ------------------------------------------------


def listed(output: str) -> dict[str, str]:
    """The Commands section of a help page: name -> its short help."""
    section = output.split("Commands:\n", 1)[1]
    rows = [line.split(None, 1) for line in section.splitlines() if line.strip()]
    return {row[0]: row[1] if len(row) > 1 else "" for row in rows}


def test_help_lists_every_command_each_with_its_own_help(cli: ModuleType) -> None:
    result = run(cli, ["-h"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: agent-telemetry [OPTIONS] COMMAND [ARGS]...")
    shown = listed(result.output)
    assert sorted(shown) == sorted(COMMANDS)
    for name, start in COMMANDS.items():
        assert shown[name].startswith(start), (name, shown[name])
        assert "Unavailable" not in shown[name]
    assert run(cli, ["--version"]).output == VERSION_LINE + "\n"


def test_views_lists_the_commands_deployment_and_the_analyzer_add(cli: ModuleType) -> None:
    for _ in range(2):  # loaded on first use, then served as loaded
        result = run(cli, ["views", "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        assert result.output.startswith("Usage: agent-telemetry views [OPTIONS] COMMAND")
        assert {*MOUNTED, "build"} <= set(listed(result.output))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_loads_on_first_use(cli: ModuleType, name: str) -> None:
    result = run(cli, [name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: agent-telemetry {name} [OPTIONS]")


def test_an_unknown_command_is_a_usage_error_not_a_model_error(cli: ModuleType) -> None:
    result = run(cli, ["viewz"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == "Error: No such command 'viewz'."


# --- a command whose models do not load -----------------------------------------------


@pytest.mark.parametrize(
    ("models", "problem"),
    [
        (FIELD_RULE_MODELS, re.escape(FIELD_RULE)),
        (MODEL_RULE_MODELS, re.escape(MODEL_RULE)),
        (
            UNBUILDABLE_MODELS,
            r"the catalogue module agent_telemetry\.schema does not load at \S+/command_\w+\.py:9 "
            r"\(class Broken: pydantic cannot build it\): SchemaError \(.*",
        ),
    ],
    ids=["field-rule", "model-rule", "unbuildable"],
)
def test_a_command_whose_models_do_not_load_is_one_line_exit_2(
    cli: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models: str, problem: str
) -> None:
    """Only that command fails: the rest of the command line still lists and runs."""
    module = command_module(tmp_path, models, monkeypatch)
    cli.main.add_lazy("modelled", f"{module}:command")

    listing = run(cli, ["--help"], terminal_width=200)
    assert listing.exit_code == 0, listing.output
    assert listed(listing.output)["modelled"] == "Unavailable: the models do not load."

    # Its own options and arguments are not what is wrong: the models are.
    result = run(cli, ["modelled", "build", "--check", "--anything=1"])
    assert result.exit_code == 2, result.output
    assert re.fullmatch(
        rf"Error: the models do not load \({problem}\); `agent-telemetry check` shows where\n",
        result.output,
    ), result.output

    page = run(cli, ["modelled", "--help"])
    assert page.exit_code == 0, page.output
    assert page.output.startswith("Usage: agent-telemetry modelled [OPTIONS]")
    assert "Unavailable: the models do not load." in page.output
    assert run(cli, ["events", "--event", "chat_turn"]).exit_code == 0


def test_a_command_whose_module_is_not_installed_passes_the_import_error_up(
    cli: ModuleType,
) -> None:
    """The console script turns it into the extra's name (_entry.main), not this group."""
    cli.main.add_lazy("absent", "agent_telemetry_no_such_module.cli:command")
    result = run(cli, ["absent"])
    assert isinstance(result.exception, ModuleNotFoundError)
    assert result.exception.name == "agent_telemetry_no_such_module"


def test_the_packages_own_models_not_loading_fails_every_command_in_one_line(
    cli: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if this package's own models could not be built (the subprocess test with a
    broken copy of the repository is tests/schema/test_catalogue_door.py)."""
    module = command_module(tmp_path, UNBUILDABLE_MODELS, monkeypatch)
    monkeypatch.setattr(cli, "OWN_MODELS", module)
    result = run(cli, ["events"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(
        f"Error: the catalogue module {module} does not load at {tmp_path}/{module}.py:9 "
        "(class Broken: pydantic cannot build it): SchemaError ("
    ), result.output
    assert len(result.output.splitlines()) == 1


def test_a_rule_broken_when_a_command_loads_the_models_is_one_line_exit_2(
    cli: ModuleType, tmp_path: Path
) -> None:
    config = service(tmp_path, FIELD_RULE_MODELS)
    result = run(cli, ["views", "build", "--config", str(config)])
    assert (result.exit_code, result.output) == (2, f"Error: {FIELD_RULE}\n")


@pytest.mark.parametrize(
    ("models", "event", "field", "rule"),
    [
        (FIELD_RULE_MODELS, "Chatty", "note", "FIELD_TYPE"),
        (MODEL_RULE_MODELS, "Shouting", None, "EVENT_NAME"),
    ],
)
def test_check_reports_the_broken_rule_with_its_event_and_field(
    cli: ModuleType, tmp_path: Path, models: str, event: str, field: str | None, rule: str
) -> None:
    config = service(tmp_path, models)
    args = ["check", "--schema-only", "--config", str(config), "--format", "json"]
    result = run(cli, args)
    assert result.exit_code == 1, result.output
    [violation] = json.loads(result.output)["violations"]
    detail = (FIELD_RULE if field else MODEL_RULE).split(": ", 2)[2]
    assert (violation["rule"], violation["event"], violation["field"]) == (rule, event, field)
    assert violation["message"] == detail


# --- errors: one line, exit 2, text made safe -------------------------------------------


def test_a_config_with_several_problems_is_one_line_listing_each(
    cli: ModuleType, tmp_path: Path
) -> None:
    config = tmp_path / "telemetry.toml"
    config.write_text('[source]\nproject = "p"\n[target]\n', encoding="utf-8")
    result = run(cli, ["events", "--config", str(config)])
    assert result.exit_code == 2
    shown = str(config)
    assert result.output == (
        f"Error: {shown}: source.project: not a Google Cloud project id: 6-30 lowercase "
        "letters, digits or hyphens, starting with a letter (optionally 'domain:' first); "
        f"{shown}: source.dataset: required key is missing; "
        f"{shown}: target.project: required key is missing; "
        f"{shown}: target.dataset: required key is missing\n"
    )


def test_a_usage_error_quoting_input_is_made_safe(cli: ModuleType) -> None:
    result = run(cli, ["events", "--config", "##[error]forged"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for '--config': File '#\\x23[error]forged' does not exist."
    )


def test_a_refused_file_is_one_line_exit_2(cli: ModuleType, tmp_path: Path) -> None:
    config = service(tmp_path, PROBE_MODELS)
    (tmp_path / "schema.lock.json").symlink_to(tmp_path / "elsewhere.json")
    result = run(cli, ["lock", "--config", str(config)])
    assert (result.exit_code, result.output) == (
        2,
        f"Error: {tmp_path}/schema.lock.json: is a symbolic link; refused "
        "(generated files are never followed)\n",
    )


# --- events ---------------------------------------------------------------------------


def table_lines(output: str) -> list[str]:
    return [line.rstrip() for line in output.splitlines()]


def test_events_prints_a_services_catalogue_as_tables(
    cli: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nearest telemetry.toml's catalogue, without --config: a table per event, its
    title and description left-aligned, a long word folded, not cut off."""
    service(tmp_path, PROBE_MODELS)
    monkeypatch.chdir(tmp_path)
    result = run(cli, ["events"], env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    assert table_lines(result.output) == [
        "cache_probe (schema_version 1)",
        "┏━━━━━━━━━━┳━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┓",
        "┃          ┃      ┃          ┃ values /     ┃              ┃",
        "┃ field    ┃ type ┃ required ┃ bounds       ┃ description  ┃",
        "┡━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━┩",
        "│ outcome  │ enum │ yes      │ hit, miss    │ What the     │",
        "│          │      │          │              │ probe found. │",
        "│ probe_ms │ int  │          │ 0 .. 1,000   │ Wall time of │",
        "│          │      │          │              │ probe_measur │",
        "│          │      │          │              │ ed_at_the_ed │",
        "│          │      │          │              │ ge.          │",
        "└──────────┴──────┴──────────┴──────────────┴──────────────┘",
        "One line per probe.",
        "cache_evict (schema_version 2)",
        "┏━━━━━━━━━━┳━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┓",
        "┃          ┃      ┃          ┃ values /     ┃              ┃",
        "┃ field    ┃ type ┃ required ┃ bounds       ┃ description  ┃",
        "┡━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━┩",
        "│ was_full │ bool │          │ true, false  │ Whether the  │",
        "│          │      │          │              │ cache was    │",
        "│          │      │          │              │ full.        │",
        "└──────────┴──────┴──────────┴──────────────┴──────────────┘",
        "One line per eviction.",
    ]


def test_events_with_config_prints_that_catalogue(
    cli: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "svc"
    folder.mkdir()
    config = service(folder, PROBE_MODELS)
    monkeypatch.chdir(tmp_path)  # no telemetry.toml here or above: the package's own
    own = run(cli, ["events"], terminal_width=200)
    assert own.exit_code == 0, own.output
    assert "chat_turn" in own.output
    assert "cache_probe" not in own.output
    given = run(cli, ["events", "--config", str(config)], terminal_width=200)
    assert given.exit_code == 0, given.output
    assert "cache_probe" in given.output
    assert "chat_turn" not in given.output


def test_events_event_prints_that_event_only(cli: ModuleType, tmp_path: Path) -> None:
    config = service(tmp_path, PROBE_MODELS)
    result = run(cli, ["events", "--config", str(config), "--event", "cache_evict"])
    assert result.exit_code == 0, result.output
    assert table_lines(result.output)[0] == "cache_evict (schema_version 2)"
    assert "cache_probe" not in result.output


def test_events_unknown_event_names_the_option_and_the_known_ones(
    cli: ModuleType, tmp_path: Path
) -> None:
    config = service(tmp_path, PROBE_MODELS)
    result = run(cli, ["events", "--config", str(config), "--event", "nope"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: Invalid value for --event: unknown event; known: cache_probe, cache_evict"
    )


def test_events_with_unbuildable_models_is_the_loaders_one_line_exit_2(
    cli: ModuleType, tmp_path: Path
) -> None:
    config = service(tmp_path, UNBUILDABLE_MODELS)
    result = run(cli, ["events", "--config", str(config)])
    assert result.exit_code == 2
    module = config.parent / f"events_{_identifier(tmp_path.name)}.py"
    assert result.output.startswith(
        f"Error: the catalogue module {module.stem} does not load at {module}:9 "
        "(class Broken: pydantic cannot build it): SchemaError ("
    ), result.output
    assert len(result.output.splitlines()) == 1


def test_events_with_a_broken_rule_names_the_rule_as_views_build_does(
    cli: ModuleType, tmp_path: Path
) -> None:
    """A definition rule, not "pydantic cannot build it", and the service's module, not
    this package's."""
    config = service(tmp_path, FIELD_RULE_MODELS)
    result = run(cli, ["events", "--config", str(config)])
    assert (result.exit_code, result.output) == (2, f"Error: {FIELD_RULE}\n")


# --- names a package exports lazily ------------------------------------------------------


def test_a_lazy_name_loads_its_module_on_first_use_and_stays() -> None:
    warehouse = fresh("agent_telemetry.warehouse")
    assert "check_logs" not in vars(warehouse)
    assert warehouse.check_logs is check_logs
    assert vars(warehouse)["check_logs"] is check_logs  # loaded once
    assert warehouse.check_logs is check_logs
    with pytest.raises(AttributeError) as raised:
        _ = warehouse.no_such_name
    assert str(raised.value) == "module 'agent_telemetry.warehouse' has no attribute 'no_such_name'"


# --- the console script ----------------------------------------------------------------


def entry(args: list[str], monkeypatch: pytest.MonkeyPatch, *hidden: str) -> int:
    """``agent-telemetry ARGS`` through the console script in this process, each of
    ``hidden`` as if not installed; returns the exit status."""
    monkeypatch.setattr(sys, "argv", ["agent-telemetry", *args])
    # Imported anew, as at start; the package's attribute is put back with the module.
    monkeypatch.setattr(agent_telemetry, "cli", importlib.import_module("agent_telemetry.cli"))
    monkeypatch.delitem(sys.modules, "agent_telemetry.cli")
    for name in hidden:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(SystemExit) as exited:
        _entry.main()
    code = exited.value.code
    assert isinstance(code, int)
    return code


# A module already imported is found by its full name: hide the ones the command line imports.
@pytest.mark.parametrize("hidden", [("click",), ("rich", "rich.console", "rich.table")])
def test_without_the_extra_the_script_names_it(
    hidden: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert entry(["events"], monkeypatch, *hidden) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"agent-telemetry: this command needs {hidden[0]}, {HINT}\n")


def test_another_missing_module_is_raised_as_it_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not the extra's: installing it would not help, so the user sees the real error."""
    with pytest.raises(ModuleNotFoundError) as raised:
        entry(["events"], monkeypatch, "agent_telemetry._text")
    assert raised.value.name == "agent_telemetry._text"
    assert capsys.readouterr() == ("", "")


def test_with_the_extra_the_script_runs_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert entry(["--version"], monkeypatch) == 0
    assert capsys.readouterr() == (VERSION_LINE + "\n", "")


def module_not_found(name: str | None) -> ModuleNotFoundError:
    return ModuleNotFoundError(f"No module named {name!r}", name=name)


@pytest.mark.parametrize(
    ("error", "hidden", "named"),
    [
        (module_not_found("click"), "click", "click"),
        (module_not_found("duckdb.core"), "duckdb", "duckdb"),
        # installed but broken: installing it again would not help
        (module_not_found("click"), None, None),
        (module_not_found("duckdb.core"), None, None),
        # not a module the extra installs
        (module_not_found("agent_telemetry_not_installed"), None, None),
        # not "is not installed" at all
        (module_not_found(None), None, None),
        (ImportError("cannot import name 'x' from 'click'", name="click"), "click", None),
    ],
)
def test_only_an_extra_module_that_is_not_installed_gets_the_hint(
    error: ImportError, hidden: str | None, named: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if hidden is not None:
        monkeypatch.setitem(sys.modules, hidden, None)
    assert _entry.missing_cli_module(error) == named
