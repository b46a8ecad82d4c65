"""``agent-telemetry init``: set a service repository up with its own catalogue.

Writes telemetry.toml (naming the catalogue and its lock), a starter catalogue module
with one example event, the GitHub Actions job of docs/ci.md, then the lock, the views
and the data dictionary exactly as ``lock`` and ``views build`` write them. It refuses
to run when any of those files exists (it never overwrites one), so a second run
changes nothing.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from agent_telemetry._files import check_target, write_text
from agent_telemetry.errors import AgentTelemetryError

LOCK = "telemetry/schema.lock.json"
WORKFLOW = ".github/workflows/telemetry.yml"

_TOML = """\
# {package}'s telemetry: its own event catalogue, its lock, where its views go.
# Every agent-telemetry command run in this repository reads this file.

[catalogue]
module = "{package}.telemetry"      # exposes EVENTS (name -> event model)
lock = "{lock}"  # relative to this file's folder

# Where the log sink lands and where the views go: replace with your own.
[source]
project = "my-gcp-project"
dataset = "service_logs"
layout = "partitioned"

[target]
project = "my-gcp-project"
dataset = "{package}_telemetry"
"""

_CATALOGUE = '''\
"""{package}'s event catalogue: telemetry.toml names this module ([catalogue] module).

Add an event: define its model here, add it to EVENTS, then run
`agent-telemetry lock` and `agent-telemetry views build` and commit what they write.
Keep this module importable with agent-telemetry alone (CI imports it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count


class JobOutcome(StrEnum):
    OK = "ok"
    FAILED = "failed"


class JobFinished(TelemetryEvent):
    """One line when a background job ends."""

    event_name: ClassVar[str] = "job_finished"
    schema_version: ClassVar[int] = 1

    outcome: JobOutcome = Field(description="How the job ended.")
    attempts: int | None = count(1, 5, "Which attempt this was.")


EVENTS = {{JobFinished.event_name: JobFinished}}
'''

# The same job as examples/service/.github/workflows/telemetry.yml (a test holds them equal).
_WORKFLOW = """\
# agent-telemetry's CI gate for this service (docs/ci.md): its models' definition rules,
# its lock, compatibility with the lock at the pull request's base, and its committed
# views and data dictionary. Exit 0 clean, 1 on violations, 2 when it cannot run.
name: telemetry
on:
  pull_request:
  push:
    branches: [main]

jobs:
  telemetry:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0 # `check --against origin/main` reads the lock at the base
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install agent-telemetry (the commit or tag this service pins)
        run: pip install "agent-telemetry[cli] @ git+https://github.com/YOUR-ORG/agent-telemetry@YOUR-PIN"
      - name: Schema and views (annotates the pull request)
        run: agent-telemetry check --against origin/main --format github
"""


class InitError(AgentTelemetryError):
    """``init`` cannot run here: a file it would write exists, or the name is unusable."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The source files ``init`` writes, and the package its catalogue lives in."""

    root: Path
    package: str
    files: dict[Path, str]


def package_name(folder: Path) -> str:
    """A Python package name from the repository's folder name (``my-service`` ->
    ``my_service``); ``service`` when nothing usable is left."""
    name = re.sub(r"[^a-z0-9_]+", "_", folder.name.lower()).strip("_")
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = "service"
    return name[:40]


def plan(root: Path, package: str | None = None) -> Plan:
    """What ``init`` would write in ``root``; raises InitError naming what is in the way."""
    package = package or package_name(root.resolve())
    if re.fullmatch(r"[a-z_][a-z0-9_]{0,39}", package) is None or keyword.iskeyword(package):
        raise InitError("--package: not a lowercase Python package name (letters, digits, _)")
    files = {
        root / "telemetry.toml": _TOML.format(package=package, lock=LOCK),
        root / package / "telemetry.py": _CATALOGUE.format(package=package),
        root / WORKFLOW: _WORKFLOW,
    }
    init_file = root / package / "__init__.py"
    views = root / "telemetry" / "views"
    generated = (root / LOCK, views, root / "docs" / "telemetry.md")
    # Every path that init, then `lock` and `views build`, write is checked through the
    # file door before anything is written: a linked folder (.github -> ~) or a linked
    # file refuses the whole run. (``views / "-"`` stands for any file in that folder.)
    for path in (*files, init_file, generated[0], views / "-", generated[2]):
        check_target(path, root)
    if not init_file.exists():
        files[init_file] = ""
    taken = [p for p in (*files, *generated) if p.exists() or p.is_symlink()]
    if taken:
        shown = ", ".join(p.relative_to(root).as_posix() for p in taken)
        raise InitError(
            f"not written: {shown} already exist(s); init never overwrites a file "
            "(`agent-telemetry check` tells whether a set-up repository is current)"
        )
    return Plan(root, package, files)


def write(planned: Plan) -> list[Path]:
    """Write the source files of ``planned`` (new files only); return them."""
    for path, text in planned.files.items():
        write_text(path, text, planned.root, new=True)  # never over a file made meanwhile
    return list(planned.files)
