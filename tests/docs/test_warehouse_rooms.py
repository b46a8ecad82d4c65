"""docs/design.md's picture of the warehouse's rooms is the package's import graph: every
arrow of docs/diagrams/warehouse.dot is an import between two rooms, and every import
between two rooms is an arrow (the face is every module directly in the warehouse)."""

from __future__ import annotations

import re

import grimp

from tests.docs.blocks import REPO

WAREHOUSE = "agent_telemetry.warehouse"
PICTURE = REPO / "docs" / "diagrams" / "warehouse.dot"


def room_of(module: str) -> str | None:
    """The room a module of the warehouse is in; ``face`` for the modules directly in it."""
    if not module.startswith(WAREHOUSE + "."):
        return None
    part = module.removeprefix(WAREHOUSE + ".").split(".")[0]
    return part if (REPO / "agent_telemetry" / "warehouse" / part).is_dir() else "face"


def imports_between_rooms() -> set[tuple[str, str]]:
    graph = grimp.build_graph("agent_telemetry", cache_dir=None)
    edges = set()
    for module in graph.modules:
        room = room_of(module)
        if room is None:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = room_of(imported)
            if other is not None and other != room:
                edges.add((room, other))
    return edges


def arrows() -> set[tuple[str, str]]:
    text = PICTURE.read_text(encoding="utf-8")
    return set(re.findall(r"^\s*(\w+) -> (\w+)", text, flags=re.MULTILINE))


def test_the_picture_draws_every_import_between_rooms_and_no_other() -> None:
    assert arrows() == imports_between_rooms()


def test_every_room_is_in_the_picture() -> None:
    rooms = {p.name for p in (REPO / "agent_telemetry" / "warehouse").iterdir() if p.is_dir()}
    drawn = {room for arrow in arrows() for room in arrow}
    assert rooms - {"__pycache__"} <= drawn
