"""The emitter writes only the current version of an event; a retired model is rejected.

A retired class (``agent_telemetry/schema/retired.py``) exists for the views and the lock.
A line written from it after a bump would keep a frozen version alive and split the
dashboards, so lenient mode writes a ``telemetry_rejected`` line (reason
``retired_version``, counted) and strict mode raises: the service's tests fail loudly.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from agent_telemetry.emit import RejectReason, TelemetryValidationError, counters, emit
from agent_telemetry.schema import EVENTS, PipelineRun
from tests.emit.conftest import lines
from tests.schema.copies import copy_model

OTHER_VERSION = copy_model(PipelineRun, version=2)  # not the catalogue's current version
SAME_VERSION = copy_model(PipelineRun)


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(lambda: OTHER_VERSION, id="class"),
        pytest.param(lambda: OTHER_VERSION(lane="public", status="ok"), id="instance"),
    ],
)
def test_a_model_of_another_version_is_rejected(
    lenient: io.StringIO, event: Callable[[], object]
) -> None:
    assert EVENTS["pipeline_run"].schema_version != OTHER_VERSION.schema_version
    emit(event(), lane="public", status="ok")
    (line,) = lines(lenient)
    assert line["event"] == "telemetry_rejected"
    assert line["reason"] == RejectReason.RETIRED_VERSION == "retired_version"
    assert counters().rejected == {"retired_version": 1}


def test_strict_mode_names_the_retired_version(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as info:
        emit(OTHER_VERSION, lane="public", status="ok")
    (problem,) = info.value.problems
    assert problem.rule == "retired_version"
    assert "current model" in str(info.value)
    assert strict.getvalue() == ""


def test_the_current_version_is_written_by_name_class_or_copy(lenient: io.StringIO) -> None:
    emit("pipeline_run", lane="public", status="ok")
    emit(PipelineRun, lane="public", status="ok")
    emit(SAME_VERSION(lane="public", status="ok"))
    assert [(line["event"], line["schema_version"]) for line in lines(lenient)] == [
        ("pipeline_run", PipelineRun.schema_version)
    ] * 3
