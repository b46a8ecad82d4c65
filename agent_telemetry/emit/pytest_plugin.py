"""pytest plugin (entry point ``pytest11``): the ``telemetry_capture`` fixture and the
end-of-session telemetry coverage report.

Installed with the package, so a service's tests can write::

    def test_run_reports_telemetry(telemetry_capture):
        run_pipeline()
        assert telemetry_capture[-1]["status"] == "ok"

The catalogue is the service's own: the fixture takes it from the ``[catalogue]`` of
the nearest telemetry.toml (the setting every command reads), unless the code under test
already called ``configure(catalogue=...)``. A session in which the fixture was used ends
with the coverage of that catalogue by what the tests emitted: which events, fields and
enum members no test ever emitted (counts and the catalogue's own names only).
``--telemetry-fail-under PCT`` (or the ini key ``telemetry_fail_under``) fails the
session below PCT percent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.emit import capture, configure, settings
from agent_telemetry.emit._validate import STATE
from agent_telemetry.schema.coverage import Coverage, Observed, coverage

_SEEN = pytest.StashKey[Observed]()
_SETTING_READ = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agent-telemetry")
    group.addoption(
        "--telemetry-fail-under",
        type=float,
        default=None,
        metavar="PCT",
        help="Fail the session when the telemetry coverage of the tests that used "
        "telemetry_capture is below PCT percent.",
    )
    parser.addini(
        "telemetry_fail_under",
        "Fail the session below this telemetry coverage (percent).",
        default=None,
    )


def _threshold(config: pytest.Config) -> float | None:
    given = config.getoption("telemetry_fail_under")
    if given is None:
        ini = config.getini("telemetry_fail_under")
        given = float(ini) if ini else None
    return None if given is None else float(given)


def _use_the_setting(config: pytest.Config) -> None:
    """Once a session: the [catalogue] of the nearest telemetry.toml, unless the code
    under test configured one itself."""
    if config.stash.get(_SETTING_READ, False):
        return
    config.stash[_SETTING_READ] = True
    if settings().catalogue is not None:
        return
    # The resolver lives above the emitter (it reads telemetry.toml); only this plugin,
    # which runs in a test session, never the emitter itself, imports it.
    from agent_telemetry.project import find_config, resolve_project

    found = find_config(Path(str(config.rootpath)))
    if found is None:
        return
    project = resolve_project(found)
    if not project.is_default:
        configure(catalogue=project.catalogue)


@pytest.fixture
def telemetry_capture(request: pytest.FixtureRequest) -> Iterator[list[dict[str, Any]]]:
    """The records emitted during the test (nothing reaches stdout); the mode is unchanged."""
    config = request.config
    _use_the_setting(config)
    with capture() as records:
        yield records
    seen = config.stash.setdefault(_SEEN, Observed())
    specs = {spec.name: spec for spec in STATE.active.catalogue.specs()}
    for record in records:
        seen.see_record(record, specs)


def _coverage(config: pytest.Config) -> Coverage | None:
    seen = config.stash.get(_SEEN, None)
    if seen is None:
        return None
    return coverage(STATE.active.catalogue.specs(), seen)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    covered = _coverage(config)
    if covered is None:
        return
    terminalreporter.section("telemetry coverage")
    for line in covered.lines():
        terminalreporter.write_line(line)
    threshold = _threshold(config)
    if threshold is not None and covered.below(threshold):
        terminalreporter.write_line(
            f"FAIL: telemetry coverage {covered.percent:.1f}% is below {threshold:g}%"
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    covered = _coverage(session.config)
    threshold = _threshold(session.config)
    below = covered is not None and threshold is not None and covered.below(threshold)
    if below and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
