"""Options shared by the ``views`` commands, declared once so their help stays the same."""

from __future__ import annotations

from pathlib import Path

import click

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("telemetry.toml"),
    show_default=True,
    help="Deployment file (source sink, target dataset).",
)
