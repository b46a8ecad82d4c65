"""``views build``: write the committed SQL and data dictionary, or diff them (``--check``).

The committed files are a pure function of the models and the deployment file, so CI
regenerates them in memory and fails on any difference: a hand edit to a SQL file, a
model change without a rebuild, a stale file for a view that no longer exists.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from agent_telemetry._files import read_text, read_text_or_none, trusted_folder, unlink, write_text
from agent_telemetry._text import clean
from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.project import PACKAGE_SQL_DIR, Project, resolve_project
from agent_telemetry.schema import EventSpec
from agent_telemetry.views import _jsonschema as jsonschema
from agent_telemetry.views._docs import data_dictionary
from agent_telemetry.views._generate import generate_views
from agent_telemetry.views._render import ViewDefinition

GENERATED_DIR = PACKAGE_SQL_DIR
# The catalogue's JSON Schema (``_jsonschema``), written beside the views' layout folders.
JSONSCHEMA_FILE = "events.schema.json"


def sql_path(sql_dir: Path, layout: str, view: str) -> Path:
    return sql_dir / layout / f"{view}.sql"


def expected_files(
    config: DeploymentConfig,
    sql_dir: Path,
    docs_path: Path,
    specs: tuple[EventSpec, ...] | None = None,
    layouts: tuple[Layout, ...] = LAYOUTS,
) -> dict[Path, str]:
    """Every generated file and its exact contents, for each of ``layouts``.

    ``specs``: every event version to generate (default: ``version_catalogue()``).
    The data dictionary documents the source's own layout.
    """
    files: dict[Path, str] = {}
    documented: tuple[ViewDefinition, ...] = ()
    for layout in dict.fromkeys((*layouts, config.source.layout)):
        views = generate_views(config, layout, specs)
        if layout in layouts:
            for view in views:
                files[sql_path(sql_dir, layout, view.name)] = view.ddl
        if layout == config.source.layout:
            documented = views
    files[docs_path] = data_dictionary(config, documented, specs)
    return files


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What a build wrote, or (``check``) which files drifted and the unified diff."""

    check: bool
    written: tuple[Path, ...]
    removed: tuple[Path, ...]
    drifted: tuple[Path, ...]
    diff: str

    @property
    def ok(self) -> bool:
        return not (self.check and self.drifted)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


class InstalledPackageError(AgentTelemetryError, ValueError):
    """``views build`` was about to write into an installed copy of the package."""


def installed_package(path: Path) -> bool:
    """True when ``path`` lies inside an installed package (site-packages/dist-packages),
    not a checkout of this repository (an editable install keeps the checkout's path)."""
    return any(part in {"site-packages", "dist-packages"} for part in path.resolve().parts)


def _stale(sql_dir: Path, expected: dict[Path, str]) -> list[Path]:
    """Generated-looking files no view produces any more (a removed event, say)."""
    found = []
    for layout in LAYOUTS:
        folder = sql_dir / layout
        if folder.is_dir():
            found += [p for p in sorted(folder.glob("*.sql")) if p not in expected]
    return found


def build(
    config: str | Path | Project | None = None,
    check: bool = False,
    *,
    sql_dir: Path | None = None,
    docs_path: Path | None = None,
    specs: tuple[EventSpec, ...] | None = None,
    layouts: tuple[Layout, ...] | None = None,
) -> BuildResult:
    """Generate the configured layouts' SQL, the data dictionary and the catalogue's JSON
    Schema (``events.schema.json`` beside the layouts' folders); ``check`` writes nothing.

    ``config``: a resolved ``Project``, or the deployment file to resolve (default: the
    nearest telemetry.toml). ``sql_dir``, ``docs_path``, ``specs`` and ``layouts``
    default to what it names: ``[views]``, every version of its catalogue, the
    configured layouts. Writing to the package's own ``generated`` folder of an
    installed package (a service repository's virtualenv) raises
    ``InstalledPackageError``: that folder is this repository's, and the next upgrade
    would replace it.
    """
    project = config if isinstance(config, Project) else resolve_project(config)
    # Where each file may be written from (``_files.trusted_folder``): a folder named on
    # the command line as given, what telemetry.toml names from its folder.
    sql_root = None if sql_dir is None else Path(sql_dir)
    docs_root = None if docs_path is None else Path(docs_path).parent
    sql_dir = project.sql_dir if sql_dir is None else Path(sql_dir)
    if not check and sql_dir == PACKAGE_SQL_DIR and installed_package(PACKAGE_SQL_DIR):
        raise InstalledPackageError(
            "the views would go into the generated/ folder of the installed "
            "agent_telemetry package (site-packages); name your own catalogue and "
            "folders in telemetry.toml ([catalogue], [views]; `agent-telemetry init` "
            "writes them) or pass --sql-dir and --docs"
        )
    docs_path = project.docs_path if docs_path is None else Path(docs_path)
    specs = project.catalogue.version_specs() if specs is None else specs
    layouts = project.layouts if layouts is None else layouts
    expected = expected_files(project.config, sql_dir, docs_path, specs, layouts)
    expected[sql_dir / JSONSCHEMA_FILE] = jsonschema.render(specs, project.module)
    drifted: list[Path] = []
    chunks: list[str] = []
    for path, text in expected.items():
        current = read_text_or_none(path)
        if current == text:
            continue
        drifted.append(path)
        name = _shown(path)
        chunks += difflib.unified_diff(
            [] if current is None else current.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=f"a/{name}" if current is not None else "/dev/null",
            tofile=f"b/{name}",
        )
    stale = _stale(sql_dir, expected)
    for path in stale:
        drifted.append(path)
        chunks += difflib.unified_diff(
            read_text(path).splitlines(keepends=True),
            [],
            fromfile=f"a/{_shown(path)}",
            tofile="/dev/null",
        )
    # For display: a committed file's lines (and paths) are outside text, each made safe.
    diff = "".join(clean(c.removesuffix("\n")) + "\n" for c in chunks)
    if check:
        return BuildResult(True, (), (), tuple(drifted), diff)

    def below(path: Path) -> Path:
        named = docs_root if path == docs_path else sql_root
        return project.trusted_folder(path) if named is None else trusted_folder(path, named)

    written = []
    for path in drifted:
        if path in expected:
            write_text(path, expected[path], below(path))
            written.append(path)
    for path in stale:
        unlink(path, below(path))
    return BuildResult(False, tuple(written), tuple(stale), tuple(drifted), diff)
