"""Options shared by the ``views`` commands, declared once so their help stays the same."""

from __future__ import annotations

from pathlib import Path

import click

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Deployment file: source sink, target dataset, [catalogue] and [views] "
    "(default: the nearest telemetry.toml in this folder or above it, up to the "
    "repository root).",
)
