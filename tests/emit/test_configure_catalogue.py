"""The emitter writes only what a lock could hold (issue 36 item 3).

``configure(catalogue=...)`` takes a module's import path, an imported module, or classes
that are module-level attributes of an importable module (reachable as
``module.qualname``): what ``agent-telemetry lock`` and ``check`` can import and see. A
class built at run time (per user, say a one-member ``Literal`` that spells a number) is in
no lock; it is refused at ``configure``, and nothing is written.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field

from agent_telemetry.emit import configure, emit, settings
from agent_telemetry.schema import ChatTurn, Lane, TelemetryEvent
from agent_telemetry.schema.catalogue import CatalogueError, load_catalogue
from agent_telemetry.schema.versions import version_registry
from tests.emit.conftest import emitting, lines


class ModuleLevelProbe(TelemetryEvent):
    """Defined at module level: reachable as this module's ``ModuleLevelProbe``."""

    event_name: ClassVar[str] = "module_level_probe"
    schema_version: ClassVar[int] = 1

    lane: Lane = Field(description="A closed set.")


def per_user_literal(user: int) -> type[TelemetryEvent]:
    """A one-member Literal spelling the user's number in letters: 0 bits in a lock it is
    never in, one user per class."""
    word = "".join("abcdefghij"[int(d)] for d in str(user))
    namespace: dict[str, Any] = {
        "__doc__": "Built per user.",
        "__module__": __name__,
        "__annotations__": {
            "event_name": ClassVar[str],
            "schema_version": ClassVar[int],
            "cohort": Literal[word],  # type: ignore[valid-type]
        },
        "event_name": "visit",
        "schema_version": 1,
        "cohort": Field(description="A closed set of one."),
    }
    return type("Visit", (TelemetryEvent,), namespace)


def defined_in_a_function() -> type[TelemetryEvent]:
    class Local(TelemetryEvent):
        """A class statement inside a function: a new class on every call."""

        event_name: ClassVar[str] = "local"
        schema_version: ClassVar[int] = 1

        lane: Lane = Field(description="A closed set.")

    return Local


def impostor() -> type[TelemetryEvent]:
    """Claims to be ChatTurn of agent_telemetry.schema.events, and is not that class."""
    copy = type("ChatTurn", (ChatTurn,), {"__doc__": "A copy.", "event_name": "chat_turn"})
    copy.__module__ = ChatTurn.__module__
    return copy


def fake_module() -> types.ModuleType:
    module = types.ModuleType("not_importable_anywhere")
    module.EVENTS = {"visit": per_user_literal(1234)}  # type: ignore[attr-defined]
    return module


def catalogue_object() -> object:
    model = per_user_literal(99)
    from types import MappingProxyType

    from agent_telemetry.schema.catalogue import Catalogue

    return Catalogue("<mapping>", MappingProxyType({"visit": model}), version_registry([model]))


REFUSED: dict[str, Callable[[], object]] = {
    "one_member_literal_per_user": lambda: {"visit": per_user_literal(1234)},
    "class_in_a_function": lambda: {"local": defined_in_a_function()},
    "impostor_of_a_module_class": lambda: {"chat_turn": impostor()},
    "module_not_importable": fake_module,
    "catalogue_built_by_hand": catalogue_object,
}


@pytest.mark.parametrize("source", REFUSED)
def test_what_no_lock_could_hold_is_refused_at_configure_and_never_written(
    source: str,
) -> None:
    given = REFUSED[source]()
    with emitting() as buffer:
        before = settings()
        with pytest.raises(CatalogueError, match=r"run time|importable") as caught:
            configure(catalogue=given)  # type: ignore[arg-type]
        assert settings() == before
        assert "1234" not in str(caught.value)
        assert "bcde" not in str(caught.value)
        for name in ("visit", "local"):
            emit(name, cohort="bcde")
        written = lines(buffer)
    assert all(line["event"] == "telemetry_rejected" for line in written)
    assert "bcde" not in buffer.getvalue()


@pytest.mark.parametrize(
    "source",
    [
        {"module_level_probe": ModuleLevelProbe},
        {"chat_turn": ChatTurn},
        "agent_telemetry.schema",
    ],
    ids=["module_level_class", "package_class", "module_path"],
)
def test_module_level_classes_and_module_paths_are_accepted(source: object) -> None:
    with emitting() as buffer:
        configure(catalogue=source)  # type: ignore[arg-type]
        emit("chat_turn", tier="public", kind="text")
        emit("module_level_probe", lane="public")
    events = [line["event"] for line in lines(buffer)]
    assert events.count("telemetry_rejected") == 1  # one of the two is outside each catalogue


def test_a_catalogue_the_loader_made_from_a_module_is_accepted_again() -> None:
    loaded = load_catalogue("agent_telemetry.schema")
    with emitting() as buffer:
        configure(catalogue=loaded)
        emit("chat_turn", tier="public", kind="text")
    assert lines(buffer)[0]["event"] == "chat_turn"
