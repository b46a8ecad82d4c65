"""Where a finding points: the model's source line, or the line in the lock file.

Annotations land on the line a reviewer has to change: a field still in the models
points at its definition, a deleted field at its class, anything only the lock knows
(a deleted event, an older version) at its entry in the lock.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

from agent_telemetry.check._paths import display_path
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.lock import lock_lines

Location = tuple[str | None, int | None]


def model_location(model: type[TelemetryEvent], field: str | None = None) -> Location:
    """The line of ``field`` in the model's class body, or of the class if it has none."""
    try:
        file = inspect.getsourcefile(model)
        lines, start = inspect.getsourcelines(model)
    except (OSError, TypeError):
        return None, None  # defined at run time (a test's copy of a model)
    if file is None:
        return None, None
    if field is not None:
        pattern = re.compile(rf"^\s+{re.escape(field)}\s*:")
        for offset, line in enumerate(lines):
            if pattern.match(line):
                return display_path(file), start + offset
    return display_path(file), start


def module_line(module: ModuleType, name: str) -> Location:
    """The line where ``module`` assigns ``name`` at top level (line 1 if not found)."""
    file = inspect.getsourcefile(module)
    if file is None:
        return None, None
    pattern = re.compile(rf"^{re.escape(name)}\b")
    text = Path(file).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return display_path(file), number
    return display_path(file), 1


def lock_location(
    lock_text: str | None,
    lock_path: Path,
    event: str,
    version: int | None = None,
    field: str | None = None,
) -> Location | None:
    """The most precise line the lock text has for (event, version, field), if any."""
    if lock_text is None:
        return None
    lines = lock_lines(lock_text)
    for key in ((event, version, field), (event, version, None), (event, None, None)):
        if key in lines:
            return display_path(lock_path), lines[key]
    return None
