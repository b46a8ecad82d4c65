"""The import rules: `lint-imports` keeps the contracts in pyproject.toml, and this module
checks it does, and checks what import-linter cannot state.

- A private module (``views._sink``) or private name (``from agent_telemetry.views import
  _x``) is for its own package: import-linter cannot name "every private module" (its
  wildcards replace whole names only), so this walks the source.
- No two modules import each other, even through a package's ``__init__``: import-linter's
  ``acyclic_siblings`` sees cycles between siblings only, not a package and its child.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "agent_telemetry"
# Installed by the dev extra, beside this interpreter.
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package and pyproject.toml in ``project``."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "pyproject.toml"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """Every dotted name an import statement reaches, relative imports resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                keep = len(base) - node.level + (1 if is_package else 0)
                parent = ".".join(base[:keep])
                source = f"{parent}.{node.module}" if node.module else parent
            else:
                source = node.module or ""
            yield node.lineno, source
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"


def _owner_of_private(name: str) -> str | None:
    """The package a private name belongs to (``a.views._sink`` -> ``a.views``), or None."""
    parts = name.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def private_imports_across_packages(root: Path) -> list[str]:
    """``file:line imports name`` for each private name imported from outside its package."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _imported_names(tree, module, path.name == "__init__.py"):
            if not name.startswith(root.name + "."):
                continue
            owner = _owner_of_private(name)
            if owner is not None and not (module == owner or module.startswith(owner + ".")):
                found.append(f"{path.relative_to(root.parent)}:{line} imports {name}")
    return found


def import_cycles(package: str) -> list[list[str]]:
    """Groups of modules that import each other (strongly connected, at least two)."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in edges.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in edges:
        if module not in index:
            visit(module)
    return cycles


def test_no_package_imports_another_packages_private_modules() -> None:
    assert private_imports_across_packages(PACKAGE) == []


def test_the_check_finds_a_private_import_across_packages(tmp_path: Path) -> None:
    root = tmp_path / "agent_telemetry"
    (root / "views").mkdir(parents=True)
    (root / "deploy").mkdir()
    for init in (root, root / "views", root / "deploy"):
        (init / "__init__.py").write_text("")
    (root / "views" / "_sink.py").write_text("def _payload() -> None: ...\n")
    (root / "views" / "_render.py").write_text("from ._sink import _payload\n")  # its own: fine
    (root / "deploy" / "plan.py").write_text(
        "from agent_telemetry.views._sink import _payload\nfrom agent_telemetry.views import _x\n"
    )
    assert private_imports_across_packages(root) == [
        "agent_telemetry/deploy/plan.py:1 imports agent_telemetry.views._sink",
        "agent_telemetry/deploy/plan.py:1 imports agent_telemetry.views._sink._payload",
        "agent_telemetry/deploy/plan.py:2 imports agent_telemetry.views._x",
    ]


def test_no_two_modules_import_each_other() -> None:
    assert import_cycles("agent_telemetry") == []


def test_the_check_finds_a_package_and_its_child_importing_each_other(tmp_path: Path) -> None:
    (tmp_path / "looped").mkdir()
    (tmp_path / "looped" / "__init__.py").write_text("from looped.cli import SEED\n")
    (tmp_path / "looped" / "cli.py").write_text(
        "SEED = 1\n\ndef run() -> None:\n    from looped import SEED\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        assert import_cycles("looped") == [["looped", "looped.cli"]]
    finally:
        sys.path.remove(str(tmp_path))


def test_the_package_keeps_its_import_contracts() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_duckdb_in_the_emitter_breaks_the_emit_contract(tmp_path: Path) -> None:
    shutil.copytree(
        PACKAGE, tmp_path / "agent_telemetry", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    emitter = tmp_path / "agent_telemetry" / "emit" / "_emit.py"
    emitter.write_text(emitter.read_text(encoding="utf-8") + "\nimport duckdb\n", encoding="utf-8")

    result = lint_imports(tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "emit stays light: no SQL, DuckDB, BigQuery or command-line libraries BROKEN" in (
        " ".join(result.stdout.split())
    )
    assert "agent_telemetry.emit._emit -> duckdb" in result.stdout
