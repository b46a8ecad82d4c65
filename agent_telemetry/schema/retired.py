"""Retired event versions: older ``schema_version``s kept as models, never emitted.

A breaking change to an event (a member or field removed, a type changed, a bound
narrowed, ...) passes ``agent-telemetry check`` only with a new event version:

1. copy the current class here unchanged, renamed (``PipelineRunV1``), keeping its
   ``event_name`` and ``schema_version``; copy the enums the change touches as they were
   (``LaneV1``); unchanged enums can stay shared (the lock holds a retired class to its
   locked entry, so a later edit of a shared enum is caught as a breaking change);
2. list it in ``RETIRED``;
3. make the change in ``events.py`` and bump the current class's ``schema_version``.

Version 1 keeps its view (named after the event), version N gets ``<event>_vN``, and
the lock and compatibility rules hold every retired class to its locked entry, so a
retired version is frozen. The emitter writes only the current version: it rejects a
retired class or instance (``telemetry_rejected``, reason ``retired_version``).
"""

from __future__ import annotations

from agent_telemetry.schema._base import TelemetryEvent

RETIRED: tuple[type[TelemetryEvent], ...] = ()
