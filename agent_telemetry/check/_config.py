"""Reading ``[[exceptions]]`` from the deployment config (telemetry.toml)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """The config is missing or unreadable; the message names the file and the key."""


def read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config {path} not found (pass --config)")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def exceptions_from(raw: dict[str, Any], path: Path) -> tuple[Any, ...]:
    """The reviewed compatibility exceptions, validated (``CompatException``)."""
    from pydantic import ValidationError

    from agent_telemetry.schema import CompatException

    entries = raw.get("exceptions", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: exceptions must be a list of [[exceptions]] tables")
    out = []
    for i, entry in enumerate(entries):
        try:
            out.append(CompatException.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            raise ConfigError(f"{path}: exceptions[{i}]: {where}: {first['msg']}") from None
    return tuple(out)
