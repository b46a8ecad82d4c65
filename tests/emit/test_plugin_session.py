"""The pytest plugin in a service's own test session, run in this process (pytester).

What a service's developer sees: ``pytest --help``, the failure of a test whose code never
hands telemetry.toml's catalogue to the emitter, the telemetry coverage section at the
end and the exit status ``--telemetry-fail-under`` gives. In this process, not in a
subprocess as tests/emit/test_capture.py's are: mutmut runs a mutant only against the
tests it saw calling the function, and it sees nothing a subprocess runs.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Callable

import pytest

from agent_telemetry.emit import configure, reset_defaults, settings
from tests.service import EXAMPLE_SERVICE, SERVICE_EVENT

Run = Callable[..., pytest.RunResult]


@pytest.fixture
def run(pytester: pytest.Pytester) -> Run:
    """``pytest ARGS`` in pytester's folder, in this process, from a fresh emitter (as a
    new process starts); this session's emitter settings come back afterwards."""
    before = settings()

    def session(*args: str) -> pytest.RunResult:
        reset_defaults()
        try:
            return pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", *args)
        finally:
            reset_defaults()
            configure(
                stream=before.stream,
                strict=before.strict,
                clock=before.clock,
                write_timeout=before.write_timeout,
                catalogue=before.catalogue,
            )

    return session


def _service(pytester: pytest.Pytester, folder: str = ".", app: str | None = None) -> None:
    """examples/service in ``folder`` of pytester's, with its app.py replaced by ``app``."""
    target = pytester.path / folder
    shutil.copytree(
        EXAMPLE_SERVICE,
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    if app is not None:
        (target / "myservice" / "app.py").write_text(textwrap.dedent(app))


APP = """
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


def _text(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines + result.errlines)


def _section(result: pytest.RunResult) -> list[str]:
    """The lines of the "telemetry coverage" section, up to the next section's title."""
    lines = result.outlines
    starts = [i for i, line in enumerate(lines) if re.fullmatch(r"=+ telemetry coverage =+", line)]
    assert len(starts) == 1, _text(result)
    body = lines[starts[0] + 1 :]
    end = next((i for i, line in enumerate(body) if re.fullmatch(r"=+ .* =+", line)), len(body))
    return [line for line in body[:end] if line]


def _percent(section: list[str]) -> str:
    found = re.fullmatch(r"telemetry coverage: (\d+\.\d)% \((\d+) of (\d+) declared\)", section[0])
    assert found is not None, section
    return found.group(1)


def test_help_names_the_threshold_option_and_its_ini_key(run: Run) -> None:
    result = run("--help")
    assert result.ret == 0
    lines = result.outlines
    group = lines.index("agent-telemetry:")
    words = " ".join(" ".join(lines[group + 1 : group + 4]).split())
    assert words == (
        "--telemetry-fail-under=PCT Fail the session when the telemetry coverage of the "
        "tests that used telemetry_capture is below PCT percent."
    )
    help_text = " ".join(" ".join(lines).split())
    assert (
        "telemetry_fail_under (string): Fail the session below this telemetry coverage (percent)."
    ) in help_text


def test_a_threshold_that_is_not_a_number_is_a_usage_error(run: Run) -> None:
    result = run("--telemetry-fail-under", "most")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "argument --telemetry-fail-under: invalid float value: 'most'" in _text(result)


def test_a_service_whose_code_configures_passes_and_reads_its_coverage(
    pytester: pytest.Pytester, run: Run
) -> None:
    _service(pytester)
    result = run()
    assert result.ret == pytest.ExitCode.OK, _text(result)
    result.assert_outcomes(passed=2)
    section = _section(result)
    _percent(section)
    # Counted against telemetry.toml's catalogue: the service's event is in it, and the
    # member its tests never emit is named; the ones they emit are not.
    assert "cache_lookup.result=stale" in section[-1]
    assert "cache_lookup.result=hit" not in "\n".join(section)
    assert not any(line.startswith("FAIL") for line in result.outlines)


def _fail_line(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("FAIL")]


@pytest.mark.parametrize(
    ("ini", "args"),
    [
        (None, ("--telemetry-fail-under", "100")),
        ("100", ()),
        ("0", ("--telemetry-fail-under", "100")),  # the option wins over the ini key
    ],
)
def test_coverage_below_the_threshold_fails_a_session_whose_tests_passed(
    pytester: pytest.Pytester, run: Run, ini: str | None, args: tuple[str, ...]
) -> None:
    _service(pytester)
    if ini is not None:
        with (pytester.path / "pyproject.toml").open("a") as pyproject:
            pyproject.write(f'telemetry_fail_under = "{ini}"\n')
    result = run(*args)
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    percent = _percent(_section(result))
    assert _fail_line(result) == [f"FAIL: telemetry coverage {percent}% is below 100%"]


@pytest.mark.parametrize(
    ("ini", "args"),
    [
        (None, ("--telemetry-fail-under", "5")),
        ("5", ()),
        ("100", ("--telemetry-fail-under", "0")),  # the option wins over the ini key
        ("", ()),  # an empty ini key sets no threshold
    ],
)
def test_coverage_at_or_above_the_threshold_passes(
    pytester: pytest.Pytester, run: Run, ini: str | None, args: tuple[str, ...]
) -> None:
    _service(pytester)
    if ini is not None:
        with (pytester.path / "pyproject.toml").open("a") as pyproject:
            pyproject.write(f'telemetry_fail_under = "{ini}"\n')
    result = run(*args)
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK, _text(result)
    assert float(_percent(_section(result))) >= 5
    assert _fail_line(result) == []


def test_an_interrupted_session_keeps_its_exit_status_below_the_threshold(
    pytester: pytest.Pytester, run: Run
) -> None:
    # The coverage is below 100% after the service's own tests; then the session is
    # interrupted (pytest.exit, as a plugin or a test may): it ends interrupted (2),
    # not "tests failed" (1). (pytester would raise a real Ctrl-C into this session.)
    _service(pytester)
    (pytester.path / "tests" / "test_zz_interrupted.py").write_text(
        "import pytest\n\n\ndef test_interrupted():\n"
        "    pytest.exit('stopped', returncode=pytest.ExitCode.INTERRUPTED)\n"
    )
    result = run("--telemetry-fail-under", "100")
    assert result.ret == pytest.ExitCode.INTERRUPTED, _text(result)
    percent = _percent(_section(result))
    assert _fail_line(result) == [f"FAIL: telemetry coverage {percent}% is below 100%"]


def test_a_session_that_never_used_the_fixture_reports_nothing_and_passes(
    pytester: pytest.Pytester, run: Run
) -> None:
    # A threshold, but no test captured telemetry: nothing to count, nothing to fail on.
    _service(pytester)
    (pytester.path / "tests" / "test_app.py").write_text("def test_plain():\n    pass\n")
    result = run("--telemetry-fail-under", "100")
    assert result.ret == pytest.ExitCode.OK, _text(result)
    assert "telemetry coverage" not in _text(result)


def test_without_a_telemetry_toml_coverage_counts_the_emitters_catalogue(
    pytester: pytest.Pytester, run: Run
) -> None:
    # No telemetry.toml (no catalogue named): nothing to disagree with, and the coverage
    # is of the catalogue the emitter writes, the package's own until configured.
    pytester.makepyfile(
        test_plain="""
        from agent_telemetry.emit import emit

        def test_run(telemetry_capture):
            emit("pipeline_run", lane="public", status="ok", attempts=0)
            assert [r["status"] for r in telemetry_capture] == ["ok"]
        """
    )
    result = run()
    assert result.ret == pytest.ExitCode.OK, _text(result)
    result.assert_outcomes(passed=1)
    section = _section(result)
    _percent(section)
    assert section[1] == ("  events never seen (3): chat_turn, pipeline_render, provider_status"), (
        section
    )


NEVER_PASSED = (
    "telemetry.toml names the catalogue myservice.telemetry, but the code under test "
    "never passed it to the emitter: in production every event of it would be written "
    'as telemetry_rejected / unknown_event. Add `configure(catalogue="myservice.telemetry")` '
    "where the service starts (beside its other start-up code)."
)


def _errors(result: pytest.RunResult) -> list[str]:
    """The text under each "ERROR at teardown" title: what the developer reads."""
    lines = result.outlines
    return [
        lines[i + 1] for i, line in enumerate(lines) if re.search(r"_ ERROR at teardown of ", line)
    ]


def test_a_service_that_never_names_its_catalogue_fails_naming_the_line_to_add(
    pytester: pytest.Pytester, run: Run
) -> None:
    # The service's configure(catalogue=...) line removed, run from the folder above it
    # (the telemetry.toml read is the one beside the tests' rootdir, not the current
    # folder's). The tests' own assertions pass: their emits resolved in telemetry.toml's
    # catalogue, so the one failure is the cause, at teardown, without a traceback.
    _service(pytester, "svc", APP.format(start="", in_call="pass"))
    result = run("svc")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, errors=2)
    assert _errors(result) == [NEVER_PASSED, NEVER_PASSED]
    assert "pytest_plugin.py" not in _text(result)


def test_a_service_that_configures_on_first_call_passes(
    pytester: pytest.Pytester, run: Run
) -> None:
    _service(
        pytester, app=APP.format(start="", in_call='configure(catalogue="myservice.telemetry")')
    )
    result = run()
    assert result.ret == pytest.ExitCode.OK, _text(result)
    result.assert_outcomes(passed=2)


def test_a_service_naming_another_catalogue_fails_naming_what_it_lacks(
    pytester: pytest.Pytester, run: Run
) -> None:
    # telemetry.toml's catalogue has two events of the service's own; the code configures
    # the package's catalogue, which has neither.
    _service(
        pytester,
        app=APP.format(start='configure(catalogue="agent_telemetry.schema")', in_call="pass"),
    )
    catalogue = pytester.path / "myservice" / "telemetry.py"
    catalogue.write_text(
        catalogue.read_text()
        + textwrap.dedent(SERVICE_EVENT)
        + "\nEVENTS[CacheProbe.event_name] = CacheProbe\n"
    )
    result = run()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lacks = (
        "the emitter is configured with the catalogue agent_telemetry.schema, which lacks 2 "
        "event version(s) of telemetry.toml's catalogue myservice.telemetry (cache_lookup, "
        'cache_probe): configure the service with `configure(catalogue="myservice.telemetry")`.'
    )
    assert _errors(result) == [lacks, lacks]
    # The coverage is still counted against telemetry.toml's catalogue: the service's
    # events, which nothing the emitter wrote matched.
    section = _section(result)
    assert section[1].startswith("  events never seen (6): ")
    assert section[1].endswith(", cache_lookup, cache_probe"), section[1]
