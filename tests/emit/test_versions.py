"""The emitter writes only the current version of an event; a retired model is rejected.

Only the configured catalogue's own classes are written: a retired version registered in
it (``EVENT_VERSIONS``) is ``retired_version``, any other class (a copy, another version
no catalogue registers) ``unknown_event``.

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
from tests.emit.conftest import admit, lines
from tests.schema.copies import copy_model

OTHER_VERSION = copy_model(PipelineRun, version=2)  # not the catalogue's current version
SAME_VERSION = copy_model(PipelineRun)


@pytest.fixture
def bumped(lenient: io.StringIO) -> io.StringIO:
    """A catalogue where pipeline_run is at version 2 and version 1 is retired."""
    admit(OTHER_VERSION, retired=(PipelineRun,))
    return lenient


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(lambda: PipelineRun, id="class"),
        pytest.param(lambda: PipelineRun(lane="public", status="ok"), id="instance"),
    ],
)
def test_a_retired_version_is_rejected(bumped: io.StringIO, event: Callable[[], object]) -> None:
    emit(event(), lane="public", status="ok")
    (line,) = lines(bumped)
    assert line["event"] == "telemetry_rejected"
    assert line["reason"] == RejectReason.RETIRED_VERSION == "retired_version"
    assert counters().rejected == {"retired_version": 1}


def test_a_version_no_catalogue_registers_is_unknown(lenient: io.StringIO) -> None:
    assert EVENTS["pipeline_run"].schema_version != OTHER_VERSION.schema_version
    emit(OTHER_VERSION, lane="public", status="ok")
    (line,) = lines(lenient)
    assert line["reason"] == "unknown_event"


def test_strict_mode_names_the_retired_version(strict: io.StringIO) -> None:
    admit(OTHER_VERSION, retired=(PipelineRun,))
    with pytest.raises(TelemetryValidationError) as info:
        emit(PipelineRun, lane="public", status="ok")
    (problem,) = info.value.problems
    assert problem.rule == "retired_version"
    assert "current model" in str(info.value)
    assert strict.getvalue() == ""


def test_the_current_version_is_written_by_name_or_class_never_a_copy(
    lenient: io.StringIO,
) -> None:
    emit("pipeline_run", lane="public", status="ok")
    emit(PipelineRun, lane="public", status="ok")
    emit(SAME_VERSION(lane="public", status="ok"))
    assert [(line["event"], line.get("reason")) for line in lines(lenient)] == [
        ("pipeline_run", None),
        ("pipeline_run", None),
        ("telemetry_rejected", "unknown_event"),
    ]
