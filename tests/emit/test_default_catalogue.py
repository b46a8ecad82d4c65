"""A service that never passes a catalogue resolves events in the package's default one.

The process-wide state is built once, at import, where mutation testing cannot see it;
here a fresh ``_State`` stands in for it, as a process that never configured one has.
"""

from __future__ import annotations

import io

import pytest

from agent_telemetry.emit import emit
from agent_telemetry.emit._validate import STATE, _State
from agent_telemetry.schema import EVENTS
from tests.emit.conftest import lines


def test_a_process_that_never_configures_a_catalogue_writes_the_default_ones_events(
    lenient: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(STATE, "active", _State().active)
    assert "pipeline_run" in EVENTS
    assert emit("pipeline_run", lane="public", status="ok") is not None
    (line,) = lines(lenient)
    assert line["event"] == "pipeline_run"
    assert line["lane"] == "public"
