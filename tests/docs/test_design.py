"""docs/design.md stays true: its layout tree is the repository, and imports go the one
way it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.docs.blocks import REPO, load_page

PACKAGE = REPO / "agent_telemetry"

# What each part of the package may import (besides itself), as docs/design.md says:
# errors <- _text <- _files, _loader, _parse <- schema <- config <- views <-
# {warehouse, deploy, analyze} <- check <- cli <- _entry; emit on errors and schema only;
# demo adds emit and warehouse on top of views; _lazy (a leaf) gives the packages that
# load their modules on first use their __getattr__; report charts the views on top of warehouse.
_BASE = {"errors", "_text", "_files", "_loader", "_parse"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_lazy": set(),
    "_text": set(),
    "_files": {"errors", "_text"},
    "_loader": {"errors", "_text"},
    "_parse": set(),
    "schema": _BASE,
    "emit": {"errors", "schema"},
    "config": _BASE | {"schema"},
    "project": _BASE | {"schema", "config"},
    "views": _BASE | {"_lazy", "schema", "config", "project"},
    "warehouse": _BASE | {"_lazy", "schema", "config", "project", "views"},
    "deploy": _BASE | {"_lazy", "schema", "config", "project", "views"},
    "analyze": _BASE | {"_lazy", "schema", "config", "project", "views"},
    "check": _BASE | {"schema", "config", "project", "views", "warehouse", "deploy", "analyze"},
    "demo": _BASE | {"schema", "emit", "config", "project", "views", "warehouse"},
    "report": _BASE | {"schema", "config", "project", "views", "warehouse"},
    "_entry": {"cli"},
}


PYTEST_PLUGIN = PACKAGE / "emit" / "pytest_plugin.py"


def layout_block() -> str:
    page = load_page("docs/design.md")
    (step,) = [s for s in page.steps if s.arg.endswith("test_the_layout_tree_is_the_repository")]
    return step.block.text


def test_the_layout_tree_is_the_repository() -> None:
    lines = layout_block().splitlines()
    top = lines[0].split() + re.findall(r"(\S+/)  ", lines[-1] + "  ")
    assert [p for p in top if not (REPO / p).exists()] == []
    listed = {m.group(1) for line in lines if (m := re.match(r"  (\S+(?:/|\.py))\s", line))}
    parts = {
        p.name + ("/" if p.is_dir() else "")
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name != "__init__.py")
    }
    assert listed == parts


def part_of(module: str) -> str | None:
    pieces = module.split(".")
    if pieces[0] != "agent_telemetry" or len(pieces) == 1:
        return None
    return pieces[1]


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_imports_go_one_way() -> None:
    wrong = []
    for part, allowed in ALLOWED.items():
        files = [PACKAGE / f"{part}.py"] if (PACKAGE / f"{part}.py").exists() else []
        files += sorted((PACKAGE / part).rglob("*.py")) if (PACKAGE / part).is_dir() else []
        assert files, part
        for path in files:
            for module in imports(path):
                target = part_of(module)
                if (path, target) == (PYTEST_PLUGIN, "project"):
                    continue  # the plugin reads the [catalogue] setting (pyproject.toml)
                if target is not None and target != part and target not in allowed:
                    wrong.append(f"{path.relative_to(REPO)} imports {module}")
    assert wrong == []


def test_every_part_of_the_package_has_its_place_in_the_order() -> None:
    parts = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or p.is_dir()}
    assert parts - {"__init__", "__pycache__", "cli"} == set(ALLOWED)
