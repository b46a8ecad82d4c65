"""The worked example service (examples/service) and throwaway catalogue modules, for tests.

A catalogue module is imported by name, and Python caches modules by name: every
throwaway module here gets a name of its own, and every test that imports one restores
``sys.path`` afterwards (the ``isolated_imports`` fixture).
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import textwrap
from pathlib import Path

from tests.conftest import REPO

EXAMPLE_SERVICE = REPO / "examples" / "service"
_NUMBERS = itertools.count()

# A service event: three members and one small count (well inside every rule).
SERVICE_EVENT = '''
from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count


class Outcome(StrEnum):
    HIT = "hit"
    MISS = "miss"
    STALE = "stale"


class CacheProbe(TelemetryEvent):
    """One line per probe."""

    event_name: ClassVar[str] = "cache_probe"
    schema_version: ClassVar[int] = 1

    outcome: Outcome = Field(description="What the probe found.")
    probe_ms: int | None = count(0, 1_000, "Probe wall time in milliseconds.")
'''


def write_module(root: Path, body: str) -> str:
    """Write ``body`` as a fresh package module under ``root``; return its import path."""
    package = f"svc_{next(_NUMBERS)}_{abs(hash(root)) % 10**8}"
    folder = root / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "telemetry.py").write_text(textwrap.dedent(body))
    return f"{package}.telemetry"


def copy_service(target: Path, *, git: bool = False) -> Path:
    """A copy of examples/service at ``target`` (a fresh git repository with ``git``)."""
    shutil.copytree(
        EXAMPLE_SERVICE, target, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    if git:
        for args in (
            ["init", "-q", "-b", "main"],
            ["add", "-A"],
            ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"],
        ):
            subprocess.run(["git", *args], cwd=target, check=True)
    return target
