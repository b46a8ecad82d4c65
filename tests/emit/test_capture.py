"""capture() and the telemetry_capture fixture: services assert their own telemetry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.emit import capture, counters, emit
from tests.emit.conftest import emitting


def test_capture_yields_records_and_keeps_the_stream_clean() -> None:
    with emitting() as buffer:
        with capture() as records:
            returned = emit("provider_status", provider="vertex", state="live", probe="preflight")
        assert counters().emitted == {"provider_status": 1}
    assert records == [returned]
    assert records[0]["state"] == "live"
    assert buffer.getvalue() == ""


def test_capture_ends_with_its_block() -> None:
    with emitting() as buffer:
        with capture() as records:
            emit("chat_turn", tier="public", kind="text")
        emit("chat_turn", tier="admin", kind="text")
    assert [r["tier"] for r in records] == ["public"]
    assert buffer.getvalue().count("\n") == 1


def test_nested_captures_each_see_their_own_block() -> None:
    with emitting(), capture() as outer:
        emit("chat_turn", tier="public", kind="text")
        with capture() as inner:
            emit("chat_turn", tier="admin", kind="text")
        emit("chat_turn", tier="public", kind="action")
    assert [r["tier"] for r in inner] == ["admin"]
    assert [r["kind"] for r in outer] == ["text", "text", "action"]


def test_capture_sees_other_threads() -> None:
    with emitting(), capture() as records:
        fields = {"tier": "public", "kind": "text"}
        thread = threading.Thread(target=emit, args=("chat_turn",), kwargs=fields)
        thread.start()
        thread.join()
    assert len(records) == 1


def test_capture_shows_lenient_outcomes() -> None:
    with emitting(), capture() as records:
        emit("pipeline_run", lane="public", status="shiny", mystery=1)
    assert records[0]["invalid_fields"] == ["status"]
    assert records[0]["unknown_fields"] == 1


def test_the_fixture_captures(telemetry_capture: list[dict[str, Any]]) -> None:
    emit("pipeline_render", theme="dark", render_lane="run", render_ms=1200, passed=True)
    assert telemetry_capture[-1]["render_ms"] == 1200


SERVICE_TEST = textwrap.dedent(
    """
    from agent_telemetry.emit import emit


    def finish_run():
        emit("pipeline_run", lane="public", status="ok", attempts=0)


    def test_run_reports_telemetry(telemetry_capture):
        finish_run()
        assert [r["status"] for r in telemetry_capture] == ["ok"]


    def test_fixture_is_fresh_per_test(telemetry_capture):
        assert telemetry_capture == []
    """
)


def test_the_fixture_is_installed_as_a_pytest_plugin(tmp_path: Path) -> None:
    # A service's test suite in its own directory, run by a separate pytest: the fixture
    # comes from the package's pytest11 entry point, with no conftest involved.
    (tmp_path / "test_service.py").write_text(SERVICE_TEST)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout


def test_fixture_is_listed_by_pytest(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("agent_telemetry")


def _service_tests(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from tests.service import copy_service

    service = copy_service(tmp_path / "svc")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=service,
        timeout=120,
        check=False,
    )


def test_the_session_reports_the_services_telemetry_coverage(tmp_path: Path) -> None:
    # examples/service's own tests: the fixture takes its [catalogue] from telemetry.toml.
    out = _service_tests(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "telemetry coverage" in out.stdout
    assert "cache_lookup.result=stale" in out.stdout  # the member its tests never emit
    assert "cache_lookup.result=hit" not in out.stdout
    failed = _service_tests(tmp_path / "again", "--telemetry-fail-under", "100")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "2 passed" in failed.stdout
    assert "is below 100%" in failed.stdout


def _service_with_app(tmp_path: Path, app: str) -> Path:
    from tests.service import copy_service

    service = copy_service(tmp_path / "svc")
    (service / "myservice" / "app.py").write_text(textwrap.dedent(app))
    return service


def _pytest_in(service: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=service,
        timeout=120,
        check=False,
    )


APP_BODY = """
    import time

    from agent_telemetry.emit import configure, emit

    {start}
    _MEMORY: dict[str, str] = {{}}


    def lookup(key: str) -> str:
        {in_call}
        value = _MEMORY.get(key)
        result = "hit" if value is not None else "miss"
        if value is None:
            value = _MEMORY[key] = key.upper()
        emit("cache_lookup", result=result, tier="memory", lookup_ms=1)
        return value
"""


def test_a_service_that_never_names_its_catalogue_fails_its_own_tests(tmp_path: Path) -> None:
    # The example service with its configure(catalogue=...) line removed: in production
    # every cache_lookup would be telemetry_rejected / unknown_event. Its tests must not
    # pass (the fixture reading telemetry.toml alone would make them pass).
    service = _service_with_app(tmp_path, APP_BODY.format(start="", in_call="pass"))
    out = _pytest_in(service)
    assert out.returncode != 0, out.stdout + out.stderr
    assert 'configure(catalogue="myservice.telemetry")' in out.stdout, out.stdout


def test_a_service_naming_another_catalogue_fails_its_own_tests(tmp_path: Path) -> None:
    # Configured, but with the package's own events: cache_lookup is missing there.
    service = _service_with_app(
        tmp_path,
        APP_BODY.format(start='configure(catalogue="agent_telemetry.schema")', in_call="pass"),
    )
    out = _pytest_in(service)
    assert out.returncode != 0, out.stdout + out.stderr
    assert "lacks 1 event version(s)" in out.stdout, out.stdout
    assert 'configure(catalogue="myservice.telemetry")' in out.stdout


def test_a_service_that_configures_on_first_call_passes(tmp_path: Path) -> None:
    # Configuring lazily (inside the code the test runs) is as good as at import.
    service = _service_with_app(
        tmp_path,
        APP_BODY.format(start="", in_call='configure(catalogue="myservice.telemetry")'),
    )
    out = _pytest_in(service)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
