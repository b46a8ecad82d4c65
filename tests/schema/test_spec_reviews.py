"""A model's data reviews reach its spec, and from there the lock: the reviewed capacity
CAPACITY_GROWTH holds a growth against. (Built here, not read from the import-time cache,
so the description of the model now is the one tested.)"""

from __future__ import annotations

from agent_telemetry.schema.events import PipelineRun
from agent_telemetry.schema.lock import lock_event
from agent_telemetry.schema.spec import build_event_spec


def test_a_models_data_reviews_are_in_its_spec_and_its_lock_entry() -> None:
    spec = build_event_spec(PipelineRun)
    assert spec.reviews == tuple(PipelineRun.data_reviews)
    locked = lock_event(spec).data_reviews
    assert [(r.reference, r.event, r.schema_version) for r in locked] == [
        ("issue 30", "pipeline_run", 1),
        ("issue 36", "pipeline_run", 1),
    ]
