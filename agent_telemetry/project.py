"""telemetry.toml resolved once: the config, the catalogue, its lock and generated files.

Like pytest's rootdir and ini file: every command resolves a ``Project`` once (from
``--config``, or the nearest telemetry.toml at or above the working directory, up to
the repository's root) and hands it down. Nothing below reads the toml again or a
module's ``EVENTS``; it reads ``project.catalogue`` and the paths here.

Without ``[catalogue]`` the project is this package's own: its catalogue, its
``schema.lock.json`` and its generated/ folder, exactly as before the setting existed.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from agent_telemetry._text import clean
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
            found = discover(Path.cwd()).path
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


@dataclass(frozen=True)
class Discovery:
    """What the search found: the config to read, or None; and, when a telemetry.toml
    was seen but not read, which and why (for a note on stderr)."""

    path: Path | None
    ignored: str | None = None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        return None


def _unsafe(folder: Path) -> str | None:
    """Why ``folder`` is not the user's to trust (git's safe.directory), or None."""
    try:
        info = folder.stat()
    except OSError:
        return "not readable"
    if info.st_uid != os.geteuid():
        return "owned by another user"
    if info.st_mode & stat.S_IWOTH:
        return "writable by every user"
    return None


def _refuse(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"ignored {clean(path)}: its folder is {why}, so anyone could plant a catalogue "
        f"module there (as git's safe.directory); pass --config {clean(path)} to use it anyway"
    )


def discover(start: Path, *, climb: bool = True) -> Discovery:
    """The one discovery of telemetry.toml.

    Inside a git repository: the nearest telemetry.toml at or above ``start``, up to the
    repository root. Outside one, ``start`` itself only (``climb=False``: always so).
    Never above ``$HOME`` when ``start`` is below it. The folder that holds the file must be
    the user's own and not writable by everyone, else ConfigError names it and why.
    """
    folder = start.resolve()
    home = _home()
    bound = home if home is not None and folder.is_relative_to(home) else None
    chain = [folder]
    if climb:
        for parent in folder.parents:
            if bound is not None and not parent.is_relative_to(bound):
                break
            chain.append(parent)
    root = next((i for i, f in enumerate(chain) if (f / ".git").exists()), None)
    # Up to the repository root; outside a repository, the starting folder only.
    searched = chain[: (root or 0) + 1]
    for candidate in searched:
        path = candidate / CONFIG_NAME
        if path.is_file():
            why = _unsafe(candidate)
            if why is not None:
                raise _refuse(path, why)
            return Discovery(path)
    for candidate in chain[len(searched) :]:
        path = candidate / CONFIG_NAME
        if path.is_file():
            return Discovery(
                None,
                f"ignored {clean(path)}: it is above this folder, and no git repository "
                "holds both (pass --config to use it)",
            )
    return Discovery(None)


_NOTED: set[str] = set()


def find_config(start: Path, *, climb: bool = True) -> Path | None:
    """``discover``'s config; a telemetry.toml it passed over is named on stderr, once."""
    found = discover(start, climb=climb)
    if found.ignored is not None and found.ignored not in _NOTED:
        _NOTED.add(found.ignored)
        print(found.ignored, file=sys.stderr)
    return found.path


def resolve_project(
    config_path: str | Path | None = None,
    *,
    known: KnownEvents | None = None,
) -> Project:
    """Read ``config_path`` (default: the nearest telemetry.toml) and resolve what it names.

    Raises ConfigError naming the key at fault, never its value.
    """
    if config_path is None:
        found = discover(Path.cwd())
        if found.path is None:
            why = f"; {found.ignored}" if found.ignored else ""
            raise ConfigError(
                f"no {CONFIG_NAME} in this folder or above it, up to the repository root "
                f"(pass --config, or run `agent-telemetry init`){why}"
            )
        config_path = found.path
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
