"""telemetry.toml's ``[catalogue]`` and ``[views]``, resolved once into a ``Project``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_telemetry.config import LAYOUTS, ConfigError, parse_config
from agent_telemetry.project import PACKAGE_SQL_DIR, find_config, resolve_project
from agent_telemetry.schema.lock import LOCK_PATH
from tests.conftest import EXAMPLE_CONFIG, REPO
from tests.service import SERVICE_EVENT, copy_service, write_module

BASE = (
    '[source]\nproject = "acme-agents-prod"\ndataset = "agent_logs"\n'
    '[target]\nproject = "acme-agents-prod"\ndataset = "agent_telemetry"\n'
)
GOOD = {
    "source": {"project": "acme-agents-prod", "dataset": "agent_logs"},
    "target": {"project": "acme-agents-prod", "dataset": "agent_telemetry"},
}


def _with(**tables: object) -> dict[str, object]:
    return {**GOOD, **tables}


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))


def test_without_a_catalogue_the_project_is_the_packages_own() -> None:
    project = resolve_project(EXAMPLE_CONFIG)
    assert project.is_default
    assert project.catalogue.is_default
    assert project.lock_path == LOCK_PATH
    assert project.sql_dir == PACKAGE_SQL_DIR
    assert project.docs_path == REPO / "docs" / "telemetry.md"
    assert project.layouts == LAYOUTS  # this repository commits all three


def test_the_service_example_resolves_beside_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = copy_service(tmp_path / "svc")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # paths are the config folder's, not the working directory's
    project = resolve_project(service / "telemetry.toml")
    assert project.lock_path == service / "telemetry" / "schema.lock.json"
    assert project.sql_dir == service / "telemetry" / "views"
    assert project.docs_path == service / "docs" / "telemetry.md"
    assert project.layouts == ("partitioned",)  # the source's own layout only
    # Importable from the config's folder, with no install.
    assert "cache_lookup" in project.catalogue.events
    assert "pipeline_run" in project.catalogue.events  # built-ins re-exported


def test_views_default_to_beside_the_lock(tmp_path: Path) -> None:
    (tmp_path / "telemetry.toml").write_text(
        BASE + '[catalogue]\nmodule = "x.telemetry"\nlock = "ops/lock.json"\n'
    )
    project = resolve_project(tmp_path / "telemetry.toml")
    assert project.sql_dir == tmp_path / "ops" / "views"
    assert project.module == "x.telemetry"


def test_the_config_is_found_upwards_but_not_above_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "telemetry.toml").write_text(BASE)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) is None  # the file above the repository root is not its
    (repo / "telemetry.toml").write_text(BASE)
    assert find_config(deep) == repo / "telemetry.toml"
    monkeypatch.chdir(deep)
    assert resolve_project().config_path == repo / "telemetry.toml"
    monkeypatch.chdir(tmp_path.parent)
    (tmp_path / "telemetry.toml").unlink()


def test_no_config_anywhere_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="pass --config, or run `agent-telemetry init`"):
        resolve_project()


HOSTILE_MODULES = ["os; rm -rf /", "jane.doe@example.com", "../x", "a b", "x" * 200, ""]
HOSTILE_PATHS = [
    "/etc/passwd",
    "../../etc/passwd",
    "lock/../../x",
    "C:\\lock.json",
    "lock\\x.json",
    "lock\n.json",
    "",
    "x" * 2000,
]


@pytest.mark.parametrize("value", HOSTILE_MODULES)
def test_a_hostile_module_is_refused_by_key_without_echo(value: str) -> None:
    data = _with(catalogue={"module": value, "lock": "lock.json"})
    with pytest.raises(ConfigError, match=r"catalogue\.module: not a dotted Python") as caught:
        parse_config(data, "telemetry.toml")
    assert not value or value not in str(caught.value)


@pytest.mark.parametrize("value", HOSTILE_PATHS)
@pytest.mark.parametrize(
    ("table", "key"), [("catalogue", "lock"), ("views", "dir"), ("views", "docs")]
)
def test_a_path_leaving_the_repository_is_refused_without_echo(
    table: str, key: str, value: str
) -> None:
    entry: dict[str, object] = {"module": "x.y", "lock": "l.json"} if table == "catalogue" else {}
    entry[key] = value
    with pytest.raises(ConfigError, match=rf"{table}\.{key}: not a relative path") as caught:
        parse_config(_with(**{table: entry}), "telemetry.toml")
    assert not value or value not in str(caught.value)


@pytest.mark.parametrize(
    ("tables", "message"),
    [
        (
            {"catalogue": {"module": "x.y", "lock": "l.json", "locks": "x"}},
            "catalogue.locks: unknown key",
        ),
        ({"catalogue": {"module": "x.y"}}, "catalogue.lock: required key is missing"),
        ({"catalogue": "x.y"}, "catalogue: wrong type"),
        ({"views": {"layouts": []}}, "views.layouts: wrong type"),
        ({"views": {"layouts": ["sharded"]}}, "views.layouts: must include source.layout"),
        ({"views": {"layouts": ["jane_doe"]}}, r"views.layouts\[0\]: must be one of"),
        ({"views": {"folder": "x"}}, "views.folder: unknown key"),
    ],
)
def test_wrong_settings_name_the_key(tables: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config(_with(**tables), "telemetry.toml")
    assert "jane_doe" not in str(caught.value)


def test_layouts_keep_their_canonical_order() -> None:
    config = parse_config(_with(views={"layouts": ["analytics", "partitioned"]}))
    assert config.layouts == ("partitioned", "analytics")
    assert parse_config(GOOD).layouts == ("partitioned",)


def test_a_service_catalogue_is_imported_once(tmp_path: Path) -> None:
    name = write_module(tmp_path, SERVICE_EVENT + "\nEVENTS = {'cache_probe': CacheProbe}\n")
    (tmp_path / "telemetry.toml").write_text(
        BASE + f'[catalogue]\nmodule = "{name}"\nlock = "schema.lock.json"\n'
    )
    project = resolve_project(tmp_path / "telemetry.toml")
    assert project.catalogue is project.catalogue
    assert list(project.catalogue.events) == ["cache_probe"]
