from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from agent_telemetry.config import DeploymentConfig, load_config
from agent_telemetry.schema import EventSpec, catalogue
from agent_telemetry.warehouse import Warehouse

# pytester runs a service's test session in this process: mutmut sees only what runs in
# its own process, and the pytest plugin's hooks run nowhere else (tests/emit).
pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIG = REPO / "telemetry.toml"

# Property tests judge behaviour, never speed: on a shared or loaded machine one example
# can take a second, and hypothesis's 200 ms deadline would fail a correct test.
settings.register_profile(
    "agent-telemetry", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("agent-telemetry")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Debian chromium, one per test session (tests/browser.py)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), args=list(CHROMIUM_ARGS)
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(autouse=True)
def _the_emitters_catalogue_is_put_back() -> Iterator[None]:
    """A test that imports a service's package (``init``'s starter ``__init__.py`` calls
    ``configure(catalogue=...)`` when imported, as a service should) would leave the
    emitter on that catalogue for every later test on the worker."""
    from agent_telemetry.emit import _config

    before = _config.settings()
    yield
    if _config.settings().catalogue is not before.catalogue:
        with _config.SHARED.configure_lock:
            _config._install(replace(_config.settings(), catalogue=before.catalogue))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (``make test``): tests that share an expensive set-up run on
    one worker, and the longest groups start first (tests/scheduling.py)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.scheduling import make_scheduler

    return make_scheduler(config, log)


def _empty_package_caches() -> None:
    for name, module in list(sys.modules.items()):
        if name.startswith("agent_telemetry") and module is not None:
            for value in list(vars(module).values()):
                if callable(clear := getattr(value, "cache_clear", None)):
                    clear()
    from agent_telemetry.emit import _validate
    from agent_telemetry.schema.catalogue import default_catalogue

    _validate.use_catalogue(default_catalogue())


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under ``make mutation``, start each mutant's tests from fresh test modules and empty
    the package's caches.

    mutmut runs each mutant's tests in a process forked from one that already ran them
    before the mutant was switched on: the test modules' own values (``@cache`` helpers
    such as ``_views()``, module-level views and plans) and the package's caches (event
    plans, ``functools.cache`` results) were built by the original code, so a mutant in
    code that builds them would never run: it survives unseen. Dropping the test modules
    (not the conftests pytest holds) makes collection import them again.
    """
    if not os.environ.get("MUTANT_UNDER_TEST"):
        return
    for name in [n for n in sys.modules if n.startswith("tests.")]:
        if not name.endswith("conftest"):
            del sys.modules[name]
    _empty_package_caches()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """mutmut's stats run (``MUTANT_UNDER_TEST=stats``) notes which tests call each
    function, and runs a mutant against those tests only. A cached function is called by
    the first test that needs it; the others read the cache and would never be run
    against its mutants. So the stats run empties the package's caches before every test."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _empty_package_caches()


@pytest.fixture(scope="session")
def config() -> DeploymentConfig:
    return load_config(EXAMPLE_CONFIG)


@pytest.fixture(scope="session")
def specs() -> dict[str, EventSpec]:
    return {spec.name: spec for spec in catalogue()}


@pytest.fixture
def wh() -> Iterator[Warehouse]:
    with Warehouse() as warehouse:
        yield warehouse
