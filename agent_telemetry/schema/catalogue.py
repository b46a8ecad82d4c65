"""A catalogue: the events one service emits, as a value every command is handed.

A service names its catalogue in ``telemetry.toml`` (``[catalogue] module = ...``); the
emitter takes one with ``configure(catalogue=...)``. Either way ``load_catalogue`` turns
a module, its import path or a plain ``name -> model`` mapping into a frozen
``Catalogue``, checked once: every name is its model's own ``event_name``, every model
went through the definition rules, and the version registry holds (a retired version
belongs to a current event and is older). Code below that point reads the ``Catalogue``
and never a module's ``EVENTS`` / ``EVENT_VERSIONS`` globals.

Without a setting the package's own four events are the catalogue (``default_catalogue``).
Errors name what is wrong and never the rejected value: a module name comes from a file
anyone's branch may change.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType, ModuleType

from agent_telemetry._loader import CatalogueError as CatalogueError
from agent_telemetry._loader import guarded, import_catalogue
from agent_telemetry.schema._base import TelemetryEvent
from agent_telemetry.schema.spec import EventSpec, event_spec, rules_ran
from agent_telemetry.schema.versions import version_registry

DEFAULT_MODULE = "agent_telemetry.schema"
MAPPING_ORIGIN = "<mapping>"
# A dotted Python import path: what ``[catalogue] module`` may hold.
MODULE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}(?:\.[A-Za-z_][A-Za-z0-9_]{0,99}){0,19}")

Events = Mapping[str, type[TelemetryEvent]]
Versions = Mapping[tuple[str, int], type[TelemetryEvent]]


@dataclass(frozen=True, eq=False)
class Catalogue:
    """One service's events.

    ``module``: the import path it came from (``"<mapping>"`` for a plain mapping);
    ``events``: name -> current model, in catalogue order (what services emit);
    ``versions``: ``(name, schema_version)`` -> model, retired versions included, in
    catalogue order and each event's versions ascending (what the lock and views cover).
    """

    module: str
    events: Events
    versions: Versions

    @property
    def is_default(self) -> bool:
        """The package's own catalogue (no ``[catalogue]`` setting)."""
        return self.module == DEFAULT_MODULE

    def specs(self) -> tuple[EventSpec, ...]:
        """Specs of every event's current version, in catalogue order."""
        return tuple(event_spec(model) for model in self.events.values())

    def version_specs(self) -> tuple[EventSpec, ...]:
        """Specs of every version of every event (retired ones too), in ``versions`` order."""
        return tuple(event_spec(model) for model in self.versions.values())

    def model(self, name: str, version: int) -> type[TelemetryEvent] | None:
        """The model of one event version, or None when the catalogue has none."""
        return self.versions.get((name, version))


def _checked_events(given: object) -> dict[str, type[TelemetryEvent]]:
    if not isinstance(given, Mapping):
        raise CatalogueError("EVENTS is not a mapping of event name -> event model")
    events: dict[str, type[TelemetryEvent]] = {}
    for position, (name, model) in enumerate(given.items()):
        if not (isinstance(model, type) and issubclass(model, TelemetryEvent)):
            raise CatalogueError(f"EVENTS entry {position}: not a TelemetryEvent subclass")
        if not rules_ran(model):
            raise CatalogueError(
                f"EVENTS entry {position}: the definition rules never ran on its class "
                "(it does not define its own event_name)"
            )
        if type(name) is not str or name != model.event_name:
            raise CatalogueError(f"EVENTS entry {position}: the key is not its model's event_name")
        events[name] = model
    if not events:
        raise CatalogueError("EVENTS is empty: a catalogue has at least one event")
    return events


def _checked_versions(
    given: object, events: dict[str, type[TelemetryEvent]]
) -> MappingProxyType[tuple[str, int], type[TelemetryEvent]]:
    current = set(events.values())
    if given is None:
        return version_registry(events.values())
    if not isinstance(given, Mapping):
        raise CatalogueError("EVENT_VERSIONS is not a mapping of (name, version) -> model")
    retired = []
    for position, (key, model) in enumerate(given.items()):
        if not (isinstance(model, type) and issubclass(model, TelemetryEvent)):
            raise CatalogueError(f"EVENT_VERSIONS entry {position}: not a TelemetryEvent subclass")
        if key != (model.event_name, model.schema_version):
            raise CatalogueError(
                f"EVENT_VERSIONS entry {position}: the key is not (event_name, schema_version) "
                "of its model"
            )
        if model not in current:
            retired.append(model)
    # The registry's rules (a retired version is older, one model per version) run here,
    # raising SchemaRuleError like a model's own rules: `check` reports it as a finding.
    registry = version_registry(events.values(), retired)
    missing = [model for model in events.values() if model not in given.values()]
    if missing:
        raise CatalogueError(
            f"EVENT_VERSIONS lacks the current model of {len(missing)} event(s) of EVENTS"
        )
    return registry


# Catalogues read from a module (what `lock` and `check` import and see): the emitter
# takes them again as they are.
_FROM_MODULES: weakref.WeakSet[Catalogue] = weakref.WeakSet()


def _from_module(module: ModuleType, origin: str) -> Catalogue:
    if not hasattr(module, "EVENTS"):
        raise CatalogueError("the catalogue module has no EVENTS (name -> event model)")
    events = _checked_events(module.EVENTS)
    versions = _checked_versions(getattr(module, "EVENT_VERSIONS", None), events)
    found = Catalogue(origin, MappingProxyType(events), versions)
    _FROM_MODULES.add(found)
    return found


def load_catalogue(
    source: Catalogue | ModuleType | str | Mapping[str, type[TelemetryEvent]],
) -> Catalogue:
    """A catalogue from a module, its import path, or a ``name -> model`` mapping (a
    ``Catalogue`` is returned as it is).

    A module (or path) exposes ``EVENTS`` and, optionally, ``EVENT_VERSIONS`` (retired
    versions too; without it, the current models only). Importing runs the definition
    rules: a model that breaks one raises ``SchemaRuleError`` from here, as at any import.
    Anything else wrong raises ``CatalogueError``.
    """
    if isinstance(source, Catalogue):
        return source
    if isinstance(source, str):
        if MODULE_PATH.fullmatch(source) is None:
            raise CatalogueError("the catalogue module is not a dotted Python import path")
        if source == DEFAULT_MODULE:
            return default_catalogue()
    # The one door: the module's code runs here (importing it, reading EVENTS), and
    # whatever it raises leaves as one CatalogueError line, never as an exit status.
    with guarded(_origin(source)):
        if isinstance(source, str):
            try:
                module = import_catalogue(source)
            except ImportError as exc:
                if exc.name is None or not (source + ".").startswith(exc.name + "."):
                    raise  # the module itself imports something missing: guarded says so
                raise CatalogueError(
                    f"the catalogue module cannot be imported ({type(exc).__name__}); "
                    "is its package installed, or below the folder of telemetry.toml?"
                ) from None
            return _from_module(module, source)
        if isinstance(source, ModuleType):
            return _from_module(source, source.__name__)
        if isinstance(source, Mapping):
            events = _checked_events(source)
            return Catalogue(
                MAPPING_ORIGIN, MappingProxyType(events), version_registry(events.values())
            )
    raise CatalogueError("a catalogue is a module, its import path, or a name -> model mapping")


def _origin(source: object) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, ModuleType):
        return source.__name__
    return MAPPING_ORIGIN


@cache
def default_catalogue() -> Catalogue:
    """The package's own catalogue: pipeline_run, chat_turn, pipeline_render, provider_status.

    Built from the modules ``agent_telemetry.schema`` itself reads (``EVENTS``,
    ``RETIRED``), so this module never imports its own package back."""
    from agent_telemetry.schema.events import EVENTS
    from agent_telemetry.schema.retired import RETIRED

    events = _checked_events(EVENTS)
    found = Catalogue(
        DEFAULT_MODULE, MappingProxyType(events), version_registry(events.values(), RETIRED)
    )
    _FROM_MODULES.add(found)
    return found


def _importable(module: object) -> bool:
    """A module ``import`` gives back: registered under its name, with a spec."""
    name = getattr(module, "__name__", None)
    return (
        isinstance(module, ModuleType)
        and isinstance(name, str)
        and sys.modules.get(name) is module
        and getattr(module, "__spec__", None) is not None
    )


def _reachable(model: type) -> bool:
    """``model`` is ``module.qualname`` of an importable module: a fresh process that
    imports that module (as ``lock`` and ``check`` do) gets this very class."""
    module = sys.modules.get(model.__module__)
    if not _importable(module):
        return False
    target: object = module
    try:
        for part in model.__qualname__.split("."):
            target = getattr(target, part)
    except Exception:  # a missing attribute, a module __getattr__ that raises
        return False
    return target is model


def load_provable(
    source: Catalogue | ModuleType | str | Mapping[str, type[TelemetryEvent]],
) -> Catalogue:
    """``load_catalogue`` for the emitter: only what a lock could hold.

    A module's import path, an importable module, a catalogue read from one, or models
    that are each ``module.qualname`` of an importable module. Anything else (a class
    built at run time, per user say; a module object made by hand) is refused with
    CatalogueError: ``lock`` and ``check`` could never see it, so nothing proves it.
    """
    if isinstance(source, str):
        return load_catalogue(source)
    if isinstance(source, ModuleType) and not _importable(source):
        raise CatalogueError(
            "the catalogue module is not importable (not in sys.modules under its name): "
            "name the module by its import path"
        )
    if isinstance(source, Catalogue) and source in _FROM_MODULES:
        return source
    loaded = load_catalogue(source)
    if loaded in _FROM_MODULES:
        return loaded
    for position, model in enumerate(loaded.versions.values()):
        if not _reachable(model):
            raise CatalogueError(
                f"catalogue model {position}: built at run time, or not importable as "
                "module.qualname: no lock can hold it, so the emitter refuses it (define "
                "event classes at module level and name their module)"
            )
    return loaded
