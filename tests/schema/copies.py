"""Copies of the real models and their lock, to mutate in tests (never the package)."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from pydantic.fields import FieldInfo

from agent_telemetry.schema import EVENTS, RETIRED, TelemetryEvent, _base, catalogue, event_spec
from agent_telemetry.schema.compat import Change, compare
from agent_telemetry.schema.lock import SchemaLock, build_lock, lock_json, parse_lock
from agent_telemetry.schema.versions import Registry, version_registry

LockData = dict[str, Any]
Mutation = Callable[[LockData], None]


@contextmanager
def rules_off() -> Iterator[None]:
    """Event classes defined inside skip the definition rules (never in the package): to
    test what stands behind them, such as the emitter's own re-check."""
    original = _base.violations
    _base.violations = lambda model, base: iter(())
    try:
        yield
    finally:
        _base.violations = original


def real_lock_data() -> LockData:
    """The lock of the real models, as fresh JSON data."""
    return copy.deepcopy(lock_json(build_lock(catalogue())))


def fields(data: LockData, event: str, version: int = 1) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = data["events"][event][str(version)]["fields"]
    return result


def field(data: LockData, event: str, name: str, version: int = 1) -> dict[str, Any]:
    return next(f for f in fields(data, event, version) if f["name"] == name)


def compare_shape(base: SchemaLock, current: SchemaLock) -> tuple[Change, ...]:
    """``compare`` without CAPACITY_GROWTH: what the shape rules say about a change.

    Nearly every addition also grows a capacity; the tests of the shape rules pin
    those rules alone, and tests/schema/test_capacity_growth.py pins the growth.
    """
    return tuple(c for c in compare(base, current) if c.rule != "CAPACITY_GROWTH")


def mutated(mutation: Mutation) -> SchemaLock:
    data = real_lock_data()
    mutation(data)
    return parse_lock(data)


def copy_model(
    model: type[TelemetryEvent],
    *,
    version: int | None = None,
    drop: tuple[str, ...] = (),
    replace: Mapping[str, tuple[Any, Any]] | None = None,
    add: Mapping[str, tuple[Any, Any]] | None = None,
    order: tuple[str, ...] | None = None,
) -> type[TelemetryEvent]:
    """A run-time copy of ``model`` with fields dropped, replaced, added (at the end) or
    reordered; it passes through the same definition rules as the real one."""
    items: dict[str, tuple[Any, Any]] = {
        name: (info.annotation, copy.copy(info))
        for name, info in model.model_fields.items()
        if name not in drop
    }
    items.update(replace or {})
    items.update(add or {})
    if order is not None:
        items = {name: items[name] for name in order}
    namespace: dict[str, Any] = {
        "__annotations__": {"event_name": ClassVar[str], "schema_version": ClassVar[int]},
        "event_name": model.event_name,
        "schema_version": model.schema_version if version is None else version,
        "__doc__": model.__doc__,
        "__module__": __name__,
    }
    for name, (annotation, default) in items.items():
        namespace["__annotations__"][name] = annotation
        namespace[name] = default if not isinstance(default, FieldInfo) else copy.copy(default)
    return type(model.__name__, (TelemetryEvent,), namespace)


def models_with(*replacements: type[TelemetryEvent]) -> dict[str, type[TelemetryEvent]]:
    """The real catalogue with some models swapped for copies."""
    models = dict(EVENTS)
    for model in replacements:
        models[model.event_name] = model
    return models


def registry_with(
    *replacements: type[TelemetryEvent], retired: tuple[type[TelemetryEvent], ...] = ()
) -> Registry:
    """The real registry with some current models swapped for copies, plus ``retired``."""
    return version_registry(models_with(*replacements).values(), (*RETIRED, *retired))


def lock_of(models: Mapping[Any, type[TelemetryEvent]]) -> SchemaLock:
    """The lock of every model in ``models`` (current models by name, or a registry)."""
    return build_lock(event_spec(m) for m in models.values())


REPO = Path(__file__).parents[2]
EVENTS_IN_REPO = Path("agent_telemetry/schema/events.py")
ENTRY_POINT = "from agent_telemetry.cli import main; main()"


def repo_copy(target: Path) -> Path:
    """A copy of the package, telemetry.toml and the data dictionary at ``target`` (all
    ``check`` reads), to break in a test."""
    shutil.copytree(REPO / "agent_telemetry", target / "agent_telemetry")
    shutil.copy(REPO / "telemetry.toml", target / "telemetry.toml")
    (target / "docs").mkdir()
    shutil.copy(REPO / "docs" / "telemetry.md", target / "docs" / "telemetry.md")
    return target


def run_cli_in(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point (``agent-telemetry ARGS``) run on the copy's package."""
    return subprocess.run(
        [sys.executable, "-c", ENTRY_POINT, *args],
        cwd=copy,
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        check=False,
    )
