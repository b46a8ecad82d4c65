"""Only the configured catalogue's own events are written (issue 23 item 6, issue 24).

An attacker with code in the service can make a class per user with ``type()`` that
passes every definition rule; emitting it must write nothing of it, and its name must
reach neither the line nor ``counters()``. The caches the emitter keeps stay bounded by
the catalogue, whatever is thrown at it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field

from agent_telemetry.emit import (
    TelemetryValidationError,
    _validate,
    configure,
    counters,
    emit,
    reset_defaults,
    settings,
)
from agent_telemetry.schema import ChatTurn, Lane, PipelineRun, TelemetryEvent
from agent_telemetry.schema.catalogue import CatalogueError
from tests.emit.conftest import emitting, lines
from tests.service import SERVICE_EVENT, write_module


def made_at_run_time(number: int, name: str | None = None) -> type[TelemetryEvent]:
    """A well-formed event class built with ``type()``, as hostile code in a service would."""
    namespace: dict[str, Any] = {
        "__doc__": "Made at run time.",
        "__module__": __name__,
        "__annotations__": {
            "event_name": ClassVar[str],
            "schema_version": ClassVar[int],
            "cohort": Lane,
        },
        "event_name": name or f"visit_{'abcdefghij'[number % 10]}",
        "schema_version": 1,
        "cohort": Field(description="A closed set."),
    }
    return type(f"Visit{number}", (TelemetryEvent,), namespace)


@pytest.fixture
def service_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    name = write_module(
        tmp_path,
        SERVICE_EVENT
        + "\nfrom agent_telemetry.schema import EVENTS as BUILT_IN\n"
        + "EVENTS = {**BUILT_IN, 'cache_probe': CacheProbe}\n",
    )
    yield name
    reset_defaults()


def test_a_class_made_at_run_time_is_never_written() -> None:
    visit = made_at_run_time(1)
    with emitting() as buffer:
        record = emit(visit, cohort="public")
        emit(visit(cohort="admin"))
        written = lines(buffer)
        seen = counters()
    assert record is not None
    assert record["event"] == "telemetry_rejected"
    assert [line["reason"] for line in written] == ["unknown_event", "unknown_event"]
    assert "visit" not in str(written)
    assert "visit" not in str(seen.as_dict())
    assert seen.emitted == {"telemetry_rejected": 2}
    assert seen.rejected == {"unknown_event": 2}


def test_strict_mode_raises_for_a_class_outside_the_catalogue() -> None:
    with emitting(strict=True), pytest.raises(TelemetryValidationError) as caught:
        emit(made_at_run_time(2), cohort="public")
    assert "unknown_event" in str(caught.value)
    assert "visit" not in str(caught.value)


def test_a_copy_of_a_catalogued_model_is_not_the_model() -> None:
    # Same event name, same fields: still not the catalogue's class, so not written.
    copy = type("PipelineRun", (PipelineRun,), {"event_name": "pipeline_run", "__doc__": "A copy."})
    with emitting() as buffer:
        emit(copy, lane="public", status="ok")
        emit(PipelineRun, lane="public", status="ok")
    assert [line["event"] for line in lines(buffer)] == ["telemetry_rejected", "pipeline_run"]


def test_the_caches_stay_bounded_by_the_catalogue() -> None:
    with emitting():
        for number in range(300):
            emit(made_at_run_time(number, f"visit_{number}"), cohort="public")
            emit(f"visit_{number}", cohort="public")
        emit("chat_turn", tier="public", kind="text")
        emit(ChatTurn, tier="public", kind="text")
        active = _validate.STATE.active
        assert len(active.by_model) <= len(active.catalogue.events)
        assert set(active.by_name) <= set(active.catalogue.events)
        assert set(counters().emitted) == {"telemetry_rejected", "chat_turn"}


def test_a_service_catalogue_by_import_path(service_catalogue: str) -> None:
    with emitting() as buffer:
        emit("cache_probe", outcome="hit")  # not in the package's catalogue
        configure(catalogue=service_catalogue)
        emit("cache_probe", outcome="hit", probe_ms=3)
        emit("chat_turn", tier="public", kind="text")  # a re-exported built-in
        written = lines(buffer)
    assert [(line["event"], line.get("reason")) for line in written] == [
        ("telemetry_rejected", "unknown_event"),
        ("cache_probe", None),
        ("chat_turn", None),
    ]
    assert written[1]["outcome"] == "hit"
    assert written[1]["probe_ms"] == 3


def test_a_mapping_catalogue_drops_what_it_does_not_hold() -> None:
    with emitting() as buffer:
        configure(catalogue={"chat_turn": ChatTurn})
        emit("pipeline_run", lane="public", status="ok")
        emit(PipelineRun, lane="public", status="ok")
        emit("chat_turn", tier="public", kind="text")
        seen = counters()
    reasons = [line.get("reason") for line in lines(buffer)]
    assert reasons == ["unknown_event", "unknown_event", None]
    assert dict(seen.emitted) == {"telemetry_rejected": 2, "chat_turn": 1}


def test_counters_of_an_earlier_catalogue_fold_under_unknown() -> None:
    with emitting():
        emit("pipeline_run", lane="public", status="ok")
        configure(catalogue={"chat_turn": ChatTurn})
        emit("chat_turn", tier="public", kind="text")
        assert dict(counters().emitted) == {"unknown": 1, "chat_turn": 1}


def test_a_catalogue_that_does_not_load_changes_nothing() -> None:
    with emitting() as buffer:
        before = settings()
        with pytest.raises(CatalogueError) as caught:
            configure(catalogue="no_such_module_jane_doe.telemetry", strict=True)
        assert "jane_doe" not in str(caught.value)
        assert settings() == before
        emit("pipeline_run", lane="public", status="ok")
    assert lines(buffer)[0]["event"] == "pipeline_run"


def test_reset_defaults_goes_back_to_the_packages_catalogue() -> None:
    with emitting() as buffer:
        configure(catalogue={"chat_turn": ChatTurn})
        reset_defaults()
        configure(stream=buffer)
        emit("pipeline_run", lane="public", status="ok")
    assert lines(buffer)[0]["event"] == "pipeline_run"
