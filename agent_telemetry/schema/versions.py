"""The registry of every event version: the current models plus the retired ones.

``EVENTS`` maps each event name to its current model, the one services emit. When a
breaking change bumps a model's ``schema_version``, the previous class is kept, renamed,
as a *retired* version (``agent_telemetry/schema/retired.py``): the views, the lock and
the compatibility rules are generated from every version, so version 1's view keeps
reading version 1's lines, and the models stay the single source of truth.

The registry is checked when it is built, like a model when its class is defined: a
broken registry fails at import with a ``SchemaRuleError`` naming the class and the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema._base import TelemetryEvent
from agent_telemetry.schema.spec import EventSpec, event_spec, rules_ran

Registry = Mapping[tuple[str, int], type[TelemetryEvent]]


class VersionRuleError(SchemaRuleError):
    """A retired version does not fit the registry; ``model_class`` is the class to fix."""

    def __init__(self, model: type[TelemetryEvent], rule: str, detail: str) -> None:
        super().__init__(model.__name__, None, rule, detail)
        self.model_class = model


@dataclass(frozen=True, slots=True)
class VersionRule:
    id: str
    purpose: str
    # (retired model, current models by name, models already registered) -> detail or None
    check: Callable[
        [type[TelemetryEvent], Mapping[str, type[TelemetryEvent]], Registry], str | None
    ]


def _known_event(
    model: type[TelemetryEvent], current: Mapping[str, type[TelemetryEvent]], _seen: Registry
) -> str | None:
    if model.event_name not in current:
        return (
            f"event {model.event_name!r} has no current model in EVENTS; a retired version "
            "belongs to an event services still emit"
        )
    return None


def _older(
    model: type[TelemetryEvent], current: Mapping[str, type[TelemetryEvent]], _seen: Registry
) -> str | None:
    now = current.get(model.event_name)
    if now is not None and model.schema_version >= now.schema_version:
        return (
            f"schema_version {model.schema_version} is not older than the current "
            f"{now.__name__} (version {now.schema_version})"
        )
    return None


def _unique(
    model: type[TelemetryEvent], _current: Mapping[str, type[TelemetryEvent]], seen: Registry
) -> str | None:
    other = seen.get((model.event_name, model.schema_version))
    if other is not None and other is not model:
        return (
            f"{model.event_name} version {model.schema_version} is already {other.__name__}; "
            "one model per event version"
        )
    return None


VERSION_RULES: tuple[VersionRule, ...] = (
    VersionRule(
        "VERSION_RETIRED_EVENT", "a retired version belongs to a current event", _known_event
    ),
    VersionRule("VERSION_RETIRED_OLDER", "a retired version is older than the current one", _older),
    VersionRule("VERSION_UNIQUE", "one model per (event, schema_version)", _unique),
)


def version_registry(
    current: Iterable[type[TelemetryEvent]], retired: Iterable[type[TelemetryEvent]] = ()
) -> MappingProxyType[tuple[str, int], type[TelemetryEvent]]:
    """Every version of every event: ``(event_name, schema_version) -> model``.

    Ordered like ``current`` (the catalogue order), each event's versions ascending.
    Raises ``VersionRuleError`` when a retired model breaks a ``VERSION_RULES`` rule, or
    when the definition rules never ran on a model (MODEL_OVERRIDE: a base replaced
    the hook that runs them).
    """
    current = tuple(current)
    retired = tuple(retired)
    for model in (*current, *retired):
        if not rules_ran(model):
            raise VersionRuleError(
                model, "MODEL_OVERRIDE", "the definition rules never ran on this class"
            )
    by_name = {model.event_name: model for model in current}
    found: dict[tuple[str, int], type[TelemetryEvent]] = {
        (m.event_name, m.schema_version): m for m in by_name.values()
    }
    for model in retired:
        for rule in VERSION_RULES:
            detail = rule.check(model, by_name, found)
            if detail:
                raise VersionRuleError(model, rule.id, detail)
        found[(model.event_name, model.schema_version)] = model
    order = {name: i for i, name in enumerate(by_name)}
    return MappingProxyType(dict(sorted(found.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))))


def registry_specs(registry: Registry) -> tuple[EventSpec, ...]:
    """The spec of every registered version, in registry order."""
    return tuple(event_spec(model) for model in registry.values())


def current_models(registry: Registry) -> dict[str, type[TelemetryEvent]]:
    """Event name -> its newest registered model (what ``EVENTS`` holds)."""
    newest: dict[str, type[TelemetryEvent]] = {}
    for (name, version), model in registry.items():
        if name not in newest or version > newest[name].schema_version:
            newest[name] = model
    return newest
