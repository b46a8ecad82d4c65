"""``load_catalogue``: a module, an import path or a mapping -> one checked ``Catalogue``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import agent_telemetry.schema as package
from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema import EVENT_VERSIONS, EVENTS, ChatTurn, PipelineRun
from agent_telemetry.schema.catalogue import (
    DEFAULT_MODULE,
    CatalogueError,
    default_catalogue,
    load_catalogue,
)
from tests.service import SERVICE_EVENT, write_module


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    return tmp_path


def test_the_default_catalogue_is_the_packages_four_events() -> None:
    found = default_catalogue()
    assert found.module == DEFAULT_MODULE
    assert found.is_default
    assert list(found.events) == ["pipeline_run", "chat_turn", "pipeline_render", "provider_status"]
    assert dict(found.versions) == dict(EVENT_VERSIONS)
    assert found.specs() == package.catalogue()
    assert found.version_specs() == package.version_catalogue()
    assert load_catalogue(DEFAULT_MODULE) is found
    assert load_catalogue(package).events == found.events


def test_a_service_module_by_path_and_by_module(modules: Path) -> None:
    name = write_module(modules, SERVICE_EVENT + "\nEVENTS = {CacheProbe.event_name: CacheProbe}\n")
    found = load_catalogue(name)
    assert found.module == name
    assert not found.is_default
    assert list(found.events) == ["cache_probe"]
    assert list(found.versions) == [("cache_probe", 1)]
    assert load_catalogue(sys.modules[name]).events == found.events


def test_a_mapping_re_exporting_built_ins() -> None:
    found = load_catalogue({"chat_turn": ChatTurn})
    assert found.module == "<mapping>"
    assert list(found.versions) == [("chat_turn", 1)]
    assert [spec.name for spec in found.specs()] == ["chat_turn"]


def test_the_catalogue_is_frozen() -> None:
    found = load_catalogue({"chat_turn": ChatTurn})
    with pytest.raises(AttributeError):
        found.module = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        found.events["pipeline_run"] = PipelineRun  # type: ignore[index]


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"pipeline_run": ChatTurn}, "entry 0: the key is not its model's event_name"),
        ({"chat_turn": ChatTurn, "user_8c87b489": ChatTurn}, "entry 1: the key is not"),
        ({"chat_turn": dict}, "entry 0: not a TelemetryEvent subclass"),
        (
            {"chat_turn": ChatTurn(tier="public", kind="text")},
            "entry 0: not a TelemetryEvent subclass",
        ),
        ({}, "EVENTS is empty"),
    ],
)
def test_a_wrong_mapping_is_refused_by_position(mapping: object, message: str) -> None:
    with pytest.raises(CatalogueError, match=message) as caught:
        load_catalogue(mapping)  # type: ignore[arg-type]
    assert "user_8c87b489" not in str(caught.value)


def test_a_subclass_that_skipped_the_rules_is_refused() -> None:
    class Wider(ChatTurn):  # inherits event_name: the rules never ran on it
        pass

    with pytest.raises(CatalogueError, match="definition rules never ran"):
        load_catalogue({"chat_turn": Wider})


@pytest.mark.parametrize(
    "path", ["os; rm -rf /", "../etc/passwd", "a..b", "", "jane.doe@example.com", "1abc"]
)
def test_an_import_path_that_is_not_one_is_refused_without_echo(path: str) -> None:
    with pytest.raises(CatalogueError, match="not a dotted Python import path") as caught:
        load_catalogue(path)
    assert path not in str(caught.value) or not path


def test_a_module_that_does_not_import_is_refused_without_echo() -> None:
    with pytest.raises(CatalogueError, match="cannot be imported") as caught:
        load_catalogue("no_such_service_jane_doe.telemetry")
    assert "jane_doe" not in str(caught.value)


def test_a_module_without_events(modules: Path) -> None:
    with pytest.raises(CatalogueError, match="no EVENTS"):
        load_catalogue(write_module(modules, "X = 1\n"))


def test_a_model_breaking_a_rule_raises_the_rule(modules: Path) -> None:
    body = SERVICE_EVENT.replace("probe_ms: int | None", "user_id: int | None")
    with pytest.raises(SchemaRuleError) as caught:
        load_catalogue(write_module(modules, body + "\nEVENTS = {}\n"))
    assert caught.value.rule == "FIELD_NAME_NO_IDENTIFIER"


def test_event_versions_are_checked(modules: Path) -> None:
    body = SERVICE_EVENT + (
        "\nclass CacheProbeV2(CacheProbe):\n"
        '    """Version two."""\n'
        "    event_name: ClassVar[str] = 'cache_probe'\n"
        "    schema_version: ClassVar[int] = 2\n"
        "EVENTS = {'cache_probe': CacheProbe}\n"
        "EVENT_VERSIONS = {('cache_probe', 1): CacheProbe, ('cache_probe', 2): CacheProbeV2}\n"
    )
    # A "retired" version newer than the current one breaks the registry's own rule.
    with pytest.raises(SchemaRuleError) as caught:
        load_catalogue(write_module(modules, body))
    assert caught.value.rule == "VERSION_RETIRED_OLDER"


def test_event_versions_must_hold_the_current_models(modules: Path) -> None:
    body = SERVICE_EVENT + (
        "\nEVENTS = {'cache_probe': CacheProbe}\n"
        "EVENT_VERSIONS = {('cache_probe', 7): CacheProbe}\n"
    )
    with pytest.raises(CatalogueError, match=r"entry 0: the key is not \(event_name"):
        load_catalogue(write_module(modules, body))
    body = SERVICE_EVENT + (
        "\nfrom agent_telemetry.schema import ChatTurn\n"
        "EVENTS = {'cache_probe': CacheProbe, 'chat_turn': ChatTurn}\n"
        "EVENT_VERSIONS = {('cache_probe', 1): CacheProbe}\n"
    )
    with pytest.raises(CatalogueError, match="lacks the current model of 1 event"):
        load_catalogue(write_module(modules, body))


def test_nothing_else_is_a_catalogue() -> None:
    with pytest.raises(CatalogueError, match="a module, its import path"):
        load_catalogue(42)  # type: ignore[arg-type]
    assert EVENTS  # the package's own globals are untouched by any of this
