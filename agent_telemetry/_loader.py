"""The one door through which a catalogue module's code runs.

Importing a catalogue runs its author's code, and reading its ``EVENTS`` may run more (a
module ``__getattr__``, a custom mapping). Whatever that code raises must not decide a
command's exit status or reach a terminal raw: ``SystemExit(0)`` would make ``check`` pass,
``KeyboardInterrupt`` and other ``BaseException`` subclasses would escape every handler,
an exception whose ``__str__`` raises would crash the printer, and the text of any of them
could forge a CI annotation. ``guarded`` turns each into one line that names the module,
the exception's class and, when known, the file, line and class being built, every piece
through ``_text.clean``. ``load_catalogue`` is its only caller, and ``import_catalogue``
the package's only import of a module named by a config.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, TracebackType

from agent_telemetry._text import clean
from agent_telemetry.errors import AgentTelemetryError, SchemaRuleError

# Longest excerpt of an exception's own text shown (cleaned) after its class.
_DETAIL_CHARS = 200


class CatalogueError(AgentTelemetryError, ValueError):
    """A catalogue cannot be loaded: the module does not import, or its mappings are wrong."""


class CatalogueLoadError(CatalogueError):
    """The catalogue module raised while it was imported or read: one safe line."""


def import_catalogue(name: str) -> ModuleType:
    """Import ``name`` (already checked to be a dotted path). Call inside ``guarded``."""
    return importlib.import_module(name)


def _ours(exc: BaseException) -> bool:
    """A rule or catalogue error raised by this package's own checks (they carry text we
    wrote and ``check`` turns them into findings), not one the module made up."""
    return isinstance(exc, AgentTelemetryError | SchemaRuleError) and type(
        exc
    ).__module__.startswith("agent_telemetry.")


@contextmanager
def guarded(module: str) -> Iterator[None]:
    """Run the body; anything it raises but this package's own errors becomes
    ``CatalogueLoadError`` with one line from ``describe``."""
    try:
        yield
    except BaseException as exc:  # the point: nothing the module raises escapes
        if _ours(exc):
            raise
        raise CatalogueLoadError(describe(module, exc)) from None


def _text_of(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # a __str__ that raises (even SystemExit) says nothing
        return ""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _shown(path: str) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.getcwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _frames(tb: TracebackType | None) -> list[tuple[str, int]]:
    frames: list[tuple[str, int]] = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return frames


def definition_site(tb: TracebackType | None) -> tuple[str, int] | None:
    """(file, line) of the ``class`` statement whose creation raised: the frame just
    before pydantic's model metaclass took over."""
    frames = _frames(tb)
    for i, (filename, _) in enumerate(frames):
        if i and "pydantic" in Path(filename).parts:
            return frames[i - 1]
    return None


def _class_name(file: str, line: int) -> str | None:
    try:
        text = Path(file).read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    match = re.match(r"\s*class\s+(\w+)", text)
    return match.group(1) if match else None


def describe(module: str, exc: BaseException) -> str:
    """One line: the module, where (a syntax error's line, the class pydantic could not
    build), the exception's class and a short cleaned excerpt of its text."""
    kind = clean(type(exc).__name__)
    where = ""
    if isinstance(exc, SyntaxError):
        if exc.filename:
            where = f" at {clean(_shown(exc.filename))}:{exc.lineno or 1}"
        detail = clean(exc.msg or "")
    else:
        site = definition_site(exc.__traceback__)
        if site is not None:
            name = _class_name(*site)
            built = f" (class {name}: pydantic cannot build it)" if name else ""
            where = f" at {clean(_shown(site[0]))}:{site[1]}{built}"
        # SystemExit's and KeyboardInterrupt's "text" is an exit code or nothing.
        plain = not isinstance(exc, SystemExit | KeyboardInterrupt)
        detail = clean(_text_of(exc)) if plain else ""
    if len(detail) > _DETAIL_CHARS:
        detail = detail[:_DETAIL_CHARS] + "..."
    return f"the catalogue module {clean(module)} does not load{where}: {kind}" + (
        f" ({detail})" if detail else ""
    )
