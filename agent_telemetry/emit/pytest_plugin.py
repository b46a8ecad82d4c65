"""pytest plugin (entry point ``pytest11``): the ``telemetry_capture`` fixture and the
end-of-session telemetry coverage report.

Installed with the package, so a service's tests can write::

    def test_run_reports_telemetry(telemetry_capture):
        run_pipeline()
        assert telemetry_capture[-1]["status"] == "ok"

The catalogue is the service's own, named by the ``[catalogue]`` of the nearest
telemetry.toml (the setting every command reads). The emitter never reads that file: the
service's code names it with ``configure(catalogue=...)``. So the fixture checks that the
two agree: a test that ends with the emitter on another catalogue (or none, which in
production writes every service event as ``telemetry_rejected`` / ``unknown_event``)
fails, saying which line to add. Until the code under test configures, the test's emits
resolve in telemetry.toml's catalogue, so the failure names the cause, not a side effect.
A session in which the fixture was used ends
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
from agent_telemetry.schema.catalogue import Catalogue
from agent_telemetry.schema.coverage import Coverage, Observed, coverage

_SEEN = pytest.StashKey[Observed]()
# telemetry.toml's catalogue (None: the package's own, or no telemetry.toml), read once.
_EXPECTED = pytest.StashKey[Catalogue | None]()
# The catalogue the fixture installed because the code under test had not configured one.
_STAND_IN = pytest.StashKey[Catalogue]()


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


def _expected(config: pytest.Config) -> Catalogue | None:
    """The [catalogue] of the nearest telemetry.toml, once a session (None: none named)."""
    if _EXPECTED not in config.stash:
        # The resolver lives above the emitter (it reads telemetry.toml); only this
        # plugin, which runs in a test session, never the emitter itself, imports it.
        from agent_telemetry.project import find_config, resolve_project

        found = find_config(Path(str(config.rootpath)))
        project = None if found is None else resolve_project(found)
        named = project is not None and not project.is_default
        config.stash[_EXPECTED] = project.catalogue if named and project else None
    return config.stash[_EXPECTED]


def _versions(catalogue: Catalogue) -> dict[str, int]:
    return {name: model.schema_version for name, model in catalogue.events.items()}


def _disagreement(config: pytest.Config, expected: Catalogue) -> str | None:
    """Why the emitter would not write telemetry.toml's events, or None when it would."""
    line = f'configure(catalogue="{expected.module}")'
    active = settings().catalogue
    if active is None or active is config.stash.get(_STAND_IN, None):
        return (
            f"telemetry.toml names the catalogue {expected.module}, but the code under "
            "test never passed it to the emitter: in production every event of it would "
            "be written as telemetry_rejected / unknown_event. Add "
            f"`{line}` where the service starts (beside its other start-up code)."
        )
    wanted, emitted = _versions(expected), _versions(active)
    missing = sorted(name for name, version in wanted.items() if emitted.get(name) != version)
    if not missing:
        return None
    return (
        f"the emitter is configured with the catalogue {active.module}, which lacks "
        f"{len(missing)} event version(s) of telemetry.toml's catalogue {expected.module} "
        f"({', '.join(missing)}): configure the service with `{line}`."
    )


@pytest.fixture
def telemetry_capture(request: pytest.FixtureRequest) -> Iterator[list[dict[str, Any]]]:
    """The records emitted during the test (nothing reaches stdout); the mode is unchanged.

    Fails the test when it ends with the emitter on a catalogue other than telemetry.toml's.
    """
    config = request.config
    expected = _expected(config)
    if expected is not None and settings().catalogue is None:
        configure(catalogue=expected)
        config.stash[_STAND_IN] = expected
    with capture() as records:
        yield records
    seen = config.stash.setdefault(_SEEN, Observed())
    specs = {spec.name: spec for spec in _covered(config).specs()}
    for record in records:
        seen.see_record(record, specs)
    problem = None if expected is None else _disagreement(config, expected)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


def _covered(config: pytest.Config) -> Catalogue:
    """The catalogue coverage is counted against: telemetry.toml's, else the emitter's."""
    return config.stash.get(_EXPECTED, None) or STATE.active.catalogue


def _coverage(config: pytest.Config) -> Coverage | None:
    seen = config.stash.get(_SEEN, None)
    if seen is None:
        return None
    return coverage(_covered(config).specs(), seen)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    covered = _coverage(config)
    if covered is None:
        return
    terminalreporter.section("telemetry coverage")
    for line in covered.lines():
        terminalreporter.write_line(line)
    threshold = _threshold(config)
    if threshold is not None and covered.below(threshold):
        figure, shown = covered.figures_below(threshold)
        terminalreporter.write_line(f"FAIL: telemetry coverage {figure}% is below {shown}%")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    covered = _coverage(session.config)
    threshold = _threshold(session.config)
    below = covered is not None and threshold is not None and covered.below(threshold)
    if below and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
