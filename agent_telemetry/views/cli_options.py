"""Options shared by commands, declared once so their help and bounds stay the same."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from agent_telemetry.config import K_ANONYMITY_LEAST, K_ANONYMITY_MOST

F = TypeVar("F", bound=Callable[..., Any])

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Deployment file: source sink, target dataset, [catalogue] and [views] "
    "(default: the nearest telemetry.toml in this folder or above it, up to the "
    "repository root).",
)


def k_anonymity_option(help: str) -> Callable[[F], F]:
    """``--k-anonymity K`` (check-logs, report), within ``[check_logs] k_anonymity``'s
    own bounds; None when not given (the config's value, else its default)."""
    return click.option(
        "--k-anonymity",
        "k",
        type=click.IntRange(K_ANONYMITY_LEAST, K_ANONYMITY_MOST),
        metavar="K",
        default=None,
        help=help,
    )
