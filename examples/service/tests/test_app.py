"""myservice's own telemetry, asserted with the plugin's ``telemetry_capture`` fixture."""

from __future__ import annotations

from typing import Any

from myservice.app import lookup


def test_a_miss_then_a_hit(telemetry_capture: list[dict[str, Any]]) -> None:
    lookup("first key")
    lookup("first key")
    results = [record["result"] for record in telemetry_capture]
    assert results == ["miss", "hit"]
    assert all(record["event"] == "cache_lookup" for record in telemetry_capture)


def test_the_key_never_reaches_telemetry(telemetry_capture: list[dict[str, Any]]) -> None:
    lookup("jane.doe@example.com")
    assert "jane" not in str(telemetry_capture)
