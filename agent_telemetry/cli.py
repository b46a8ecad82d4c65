"""The ``agent-telemetry`` command line: it only mounts each package's own commands.

Each package keeps its commands in its ``cli`` module (``views.cli``, ``warehouse.cli``,
``deploy.cli``, ``check.cli``, ``demo.cli``). They are mounted lazily, so
``agent-telemetry events`` never pays for sqlglot, duckdb or google-cloud-bigquery.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from agent_telemetry import __version__
from agent_telemetry._text import clean, rich_text
from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError

# Every command: exit 0 when all is well, 1 when it found violations (drift, breaking
# changes, bad lines), 2 when it could not do what was asked (an error).
ERROR_EXIT = 2
OWN_MODELS = "agent_telemetry.schema"


class Failure(click.ClickException):
    """An error: exit 2, one line on stderr, its text made safe to print."""

    exit_code = ERROR_EXIT

    def __init__(self, message: str) -> None:
        # One line: a message that lists several problems keeps them apart with "; ".
        super().__init__("; ".join(clean(line) for line in message.splitlines() if line))


class LazyGroup(click.Group):
    """A group whose subcommands can be named by import path and loaded when used.

    Modules that import the models (views, warehouse, deploy, demo) are
    registered this way: a model that breaks a definition rule then fails only the
    commands that need the models, and ``agent-telemetry check`` can report it cleanly
    instead of the whole CLI dying at import.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy: dict[str, str] = {}

        self.extra: dict[str, tuple[str, ...]] = {}

    def add_lazy(self, name: str, target: str, *, mount: tuple[str, ...] = ()) -> None:
        """Register ``module:attribute`` as the subcommand ``name``; each ``mount`` target
        (a ``module:attribute`` command) is added to that group when it loads."""
        self.lazy[name] = target
        self.extra[name] = mount

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        try:
            command = _load(self.lazy[cmd_name])
            for target in self.extra[cmd_name]:
                assert isinstance(command, click.Group)
                command.add_command(_load(target))
        except SchemaRuleError as exc:
            return _broken_models(cmd_name, str(exc))
        except ModuleNotFoundError:
            raise  # a missing extra: the console script names it (_entry.py)
        except Exception as exc:  # a model pydantic cannot build, a syntax error
            return _broken_models(cmd_name, _model_problem(exc))
        self.add_command(command, cmd_name)
        return command

    def invoke(self, ctx: click.Context) -> object:
        """Every command's errors leave the same way: one line on stderr, text from
        outside made safe (``_text.clean``), exit 2."""
        try:
            _own_models()
            return super().invoke(ctx)
        except click.UsageError as exc:  # exit 2 already; its message may quote input
            vars(exc)["message"] = clean(exc.message)  # keeps the subclass's own hints
            raise
        except click.ClickException as exc:
            raise Failure(exc.message) from None
        except AgentTelemetryError as exc:  # refused files, models that do not load
            raise Failure(str(exc)) from None


def _own_models() -> None:
    """Import this package's own models (the catalogue without a setting) through the
    catalogue loader's door: a model pydantic cannot build is one line and exit 2 in every
    command. A definition rule is left to each command (``check`` reports it as a finding)."""
    from agent_telemetry._loader import guarded, import_catalogue

    try:
        with guarded(OWN_MODELS):
            import_catalogue(OWN_MODELS)
    except SchemaRuleError:
        return


def _model_problem(exc: BaseException) -> str:
    from agent_telemetry.check import model_load_error

    return str(model_load_error(exc))


def _load(target: str) -> click.Command:
    module, _, attribute = target.partition(":")
    command: click.Command = getattr(importlib.import_module(module), attribute)
    return command


def _broken_models(name: str, problem: str) -> click.Command:
    def fail() -> None:
        raise Failure(f"the models do not load ({problem}); `agent-telemetry check` shows where")

    return click.Command(
        name,
        callback=fail,
        help="Unavailable: the models do not load.",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agent-telemetry")
def main() -> None:
    """Anonymous, closed-set telemetry for rate-limited AI-agent pipelines."""


@main.command()
@click.option("--event", "only", metavar="NAME", help="Show one event only.")
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Deployment file whose [catalogue] to print (default: the nearest "
    "telemetry.toml, if any; else the package's own events).",
)
def events(only: str | None, config: Path | None) -> None:
    """Print the event catalogue: fields, types, allowed values or bounds."""
    from agent_telemetry.config import ConfigError
    from agent_telemetry.project import find_config, resolve_project
    from agent_telemetry.schema import event_spec
    from agent_telemetry.schema.catalogue import CatalogueError, default_catalogue

    found = config or find_config(Path.cwd())
    try:
        catalogue = default_catalogue() if found is None else resolve_project(found).catalogue
    except (ConfigError, CatalogueError) as exc:  # the loader's one line for a broken module
        raise click.ClickException(str(exc)) from None
    # A definition rule (SchemaRuleError) leaves as every command's does (invoke).
    names = catalogue.events
    if only is not None and only not in names:
        raise click.BadParameter(f"unknown event; known: {', '.join(names)}", param_hint="--event")
    console = Console()
    for name, model in names.items():
        if only is not None and name != only:
            continue
        spec = event_spec(model)
        # A service's catalogue is its own code: its names and descriptions are outside text.
        table = Table(
            title=rich_text(f"{spec.name} (schema_version {spec.schema_version})"),
            caption=rich_text(spec.description),
            title_justify="left",
            caption_justify="left",
        )
        for column in ("field", "type", "required", "values / bounds", "description"):
            table.add_column(column, overflow="fold")
        for field in spec.fields:
            table.add_row(
                rich_text(field.name),
                field.kind,
                "yes" if field.required else "",
                rich_text(field.domain),
                rich_text(field.description),
            )
        console.print(table)


from agent_telemetry.check.cli import check, init, lock  # noqa: E402

assert isinstance(main, LazyGroup)
# `views` is SQL generation; BigQuery deployment and GoogleSQL's analyzer (layers above
# it) add their commands.
main.add_lazy(
    "views",
    "agent_telemetry.views.cli:views",
    mount=(
        "agent_telemetry.deploy.cli:plan_command",
        "agent_telemetry.deploy.cli:approve_command",
        "agent_telemetry.deploy.cli:apply_command",
        "agent_telemetry.deploy.cli:create_sink_command",
        "agent_telemetry.analyze.cli:analyze_command",
    ),
)
main.add_lazy("sink-schema", "agent_telemetry.views.cli:sink_schema_command")
main.add_lazy("jsonschema", "agent_telemetry.views.cli:jsonschema_command")
main.add_lazy("preview", "agent_telemetry.warehouse.cli:preview")
main.add_lazy("query", "agent_telemetry.warehouse.cli:query_command")
main.add_lazy("report", "agent_telemetry.report.cli:report_command")
main.add_lazy("check-logs", "agent_telemetry.warehouse.cli:check_logs_command")
main.add_lazy("demo", "agent_telemetry.demo.cli:demo")
main.add_command(init)
main.add_command(lock)
main.add_command(check)
