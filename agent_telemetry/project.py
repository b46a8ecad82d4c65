"""telemetry.toml resolved once: the config, the catalogue, its lock and generated files.

Like pytest's rootdir and ini file: every command resolves a ``Project`` once (from
``--config``, or the nearest telemetry.toml at or above the working directory, up to
the repository's root) and hands it down. Nothing below reads the toml again or a
module's ``EVENTS``; it reads ``project.catalogue`` and the paths here.

Without ``[catalogue]`` the project is this package's own: its catalogue, its
``schema.lock.json`` and its generated/ folder, exactly as before the setting existed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from agent_telemetry.config import (
    ConfigError,
    DeploymentConfig,
    KnownEvents,
    Layout,
    load_config,
)
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, Catalogue, load_catalogue
from agent_telemetry.schema.lock import LOCK_PATH

CONFIG_NAME = "telemetry.toml"
# The package's committed view SQL (agent_telemetry/views/generated): this repository's.
PACKAGE_SQL_DIR = Path(__file__).parent / "views" / "generated"
DOCS_FILE = Path("docs") / "telemetry.md"
VIEWS_BESIDE_LOCK = "views"


@dataclass(frozen=True)
class Project:
    """One deployment file and everything it names, as absolute-or-given paths.

    ``catalogue`` is imported on first use (importing runs the definition rules, which
    ``check`` reports as findings: it asks for ``module`` first and imports itself).
    """

    config_path: Path
    config: DeploymentConfig
    module: str
    lock_path: Path
    sql_dir: Path
    docs_path: Path
    layouts: tuple[Layout, ...]
    # Where a service's catalogue module is imported from (the folder of telemetry.toml).
    import_root: Path | None = field(default=None, repr=False)

    @property
    def is_default(self) -> bool:
        """No ``[catalogue]``: this package's own events, lock and generated files."""
        return self.config.catalogue is None

    @cached_property
    def catalogue(self) -> Catalogue:
        """The catalogue module, imported once (SchemaRuleError, CatalogueError pass up)."""
        if self.import_root is not None:
            root = str(self.import_root)
            if root not in sys.path:
                # As pytest's rootdir: the service's package needs no install to be found.
                sys.path.insert(0, root)
        return load_catalogue(self.module)

    def trusted_folder(self, path: Path) -> Path:
        """The folder below which no component of ``path``, a file this project names,
        may be a symlink (``_files.trusted_folder``): the folder of telemetry.toml, whose
        paths are relative to it; the package's own files (no ``[catalogue]``) from the
        checkout holding the package."""
        from agent_telemetry._files import trusted_folder

        return trusted_folder(path, self.config_path.parent, PACKAGE_SQL_DIR.parents[2])

    def command_flags(self) -> str:
        """``--config PATH`` when the config is not the one every command finds by itself
        (so a printed hint runs as printed), else nothing."""
        try:
            found = find_config(Path.cwd())
        except ConfigError:
            found = None
        if found is not None and found.resolve() == self.config_path.resolve():
            return ""
        return f" --config {_shown(self.config_path)}"


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def find_config(start: Path) -> Path | None:
    """The nearest telemetry.toml at or above ``start``, not above the repository root
    (the first folder holding ``.git``)."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / CONFIG_NAME
        if path.is_file():
            return path
        if (candidate / ".git").exists():
            return None
    return None


def resolve_project(
    config_path: str | Path | None = None,
    *,
    known: KnownEvents | None = None,
) -> Project:
    """Read ``config_path`` (default: the nearest telemetry.toml) and resolve what it names.

    Raises ConfigError naming the key at fault, never its value.
    """
    if config_path is None:
        found = find_config(Path.cwd())
        if found is None:
            raise ConfigError(
                f"no {CONFIG_NAME} in this folder or above it (pass --config, or run "
                "`agent-telemetry init`)"
            )
        config_path = found
    path = Path(config_path)
    config = load_config(path, known)
    base = path.parent
    setting = config.catalogue
    if setting is None:
        module, lock_path, sql_dir, root = DEFAULT_MODULE, LOCK_PATH, PACKAGE_SQL_DIR, None
    else:
        module, lock_path, root = setting.module, base / setting.lock, base.resolve()
        sql_dir = lock_path.parent / VIEWS_BESIDE_LOCK
    if config.views.dir is not None:
        sql_dir = base / config.views.dir
    docs_path = base / (config.views.docs or DOCS_FILE)
    return Project(
        config_path=path,
        config=config,
        module=module,
        lock_path=lock_path,
        sql_dir=sql_dir,
        docs_path=docs_path,
        layouts=config.layouts,
        import_root=root,
    )
