"""docs/cli.md has one ``--help`` transcript per command, under a heading naming it: a
new command fails here until the page has its section, a removed one until the section
goes (the examples test checks each output; AGENT_TELEMETRY_DOCS_UPDATE=1 writes it)."""

from __future__ import annotations

from collections.abc import Iterator

import click

from agent_telemetry.cli import main
from tests.docs.blocks import REPO, commands, load_page

PAGE = "docs/cli.md"


def command_paths(command: click.Command, path: list[str], ctx: click.Context) -> Iterator[str]:
    yield " ".join(path)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from command_paths(sub, [*path, name], click.Context(sub, ctx, name))


def documented() -> list[str]:
    return [
        cmd.command.removesuffix(" --help")
        for step in load_page(PAGE).steps
        if step.kind == "console"
        for cmd in commands(step.block)
    ]


def test_every_command_has_its_help_on_the_page_and_nothing_else() -> None:
    root = click.Context(main, None, "agent-telemetry")
    assert sorted(documented()) == sorted(command_paths(main, ["agent-telemetry"], root))


def test_each_help_transcript_sits_under_the_heading_naming_its_command() -> None:
    text = (REPO / PAGE).read_text(encoding="utf-8")
    headings = [line[4:-1] for line in text.splitlines() if line.startswith("## `")]
    assert headings == documented()
