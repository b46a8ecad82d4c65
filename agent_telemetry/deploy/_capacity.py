"""The capacity change per event a plan would deploy, for the owner's review.

After: the capacity of each event view's own version in the catalogue. Before: the
capacity of the version the deployed view serves (its ``schema-version`` label), as the
committed schema lock records that version, the reviewed state. Both come from the one
capacity function (``schema.capacity.event_capacity``), so the page and ``check`` can
never disagree on a figure.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_telemetry.deploy._plan import DeploymentPlan
from agent_telemetry.deploy._plan_document import CapacityChange, FieldBits
from agent_telemetry.schema import EventSpec
from agent_telemetry.schema.capacity import EventCapacity, event_capacity
from agent_telemetry.schema.lock import SchemaLock

SCHEMA_VERSION_LABEL = "schema-version"


def _locked(lock: SchemaLock | None, event: str, version: int) -> EventCapacity | None:
    if lock is None:
        return None
    entry = lock.events.get(event, {}).get(version)
    return None if entry is None else event_capacity(entry.spec(event, version))


def capacity_changes(
    plan: DeploymentPlan, specs: Iterable[EventSpec], lock: SchemaLock | None
) -> list[CapacityChange]:
    by_version = {(s.name, s.schema_version): s for s in specs}
    changes = []
    for view in plan.views:
        event = view.view.event
        if event is None:  # telemetry_quality: no event of its own
            continue
        spec = by_version.get((event, view.view.schema_version))
        if spec is None:
            continue
        after = event_capacity(spec)
        state = view.deployed.state
        label = None if state is None else state.labels.get(SCHEMA_VERSION_LABEL)
        before = _locked(lock, event, int(label)) if label and label.isdigit() else None
        names = [f.name for f in after.fields] + [
            f.name for f in (before.fields if before else ()) if after.field(f.name) is None
        ]
        fields = []
        for name in names:
            old = None if before is None else before.field(name)
            new = after.field(name)
            if old is None or new is None or old.values != new.values:
                fields.append(
                    FieldBits(
                        name=name,
                        bits_before=None if old is None else old.bits,
                        bits_after=None if new is None else new.bits,
                    )
                )
        changes.append(
            CapacityChange(
                view=view.name,
                event=event,
                schema_version=spec.schema_version,
                deployed_version=None if before is None else before.schema_version,
                bits_before=None if before is None else before.bits,
                bits_after=after.bits,
                fields=fields if before is not None else [],
            )
        )
    return changes
