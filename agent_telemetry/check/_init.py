"""``agent-telemetry init``: set a service repository up with its own catalogue.

Writes telemetry.toml (naming the catalogue and its lock, and where the sink lands and
the views go: ``--project`` / ``--dataset``, else placeholders to edit), a starter
catalogue module with one example event, the package's start-up naming that catalogue to
the emitter, a starter test, the pytest setting that lets ``pytest`` import the package
(as examples/service's pyproject.toml), the GitHub Actions job of docs/ci.md, then the
lock, the views and the data dictionary exactly as ``lock`` and ``views build`` write
them. It refuses to run when any of those files exists (it never overwrites one), so a
second run changes nothing; the package's ``__init__.py`` and pyproject.toml are written
only when absent (then the service adds the lines itself, and init says which).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from agent_telemetry._files import check_target, write_text
from agent_telemetry.config import identifier_problem
from agent_telemetry.errors import AgentTelemetryError

LOCK = "telemetry/schema.lock.json"
WORKFLOW = ".github/workflows/telemetry.yml"
STARTER_TEST = "tests/test_telemetry.py"
# What telemetry.toml holds until the service names its own (a valid id, so every
# command runs; the views name it, so changing it means `views build` again).
PLACEHOLDER_PROJECT = "my-gcp-project"
PLACEHOLDER_DATASET = "service_logs"

_TOML = """\
# {package}'s telemetry: its own event catalogue, its lock, where its views go.
# Every agent-telemetry command run in this repository reads this file.

[catalogue]
module = "{package}.telemetry"      # exposes EVENTS (name -> event model)
lock = "{lock}"  # relative to this file's folder

{where}
[source]
project = "{project}"
dataset = "{dataset}"
layout = "partitioned"

[target]
project = "{project}"
dataset = "{package}_telemetry"
"""

_WHERE_GIVEN = "# Where the log sink lands ([source]) and where the views go ([target])."
_WHERE_TO_EDIT = (
    "# Where the log sink lands and where the views go: replace with your own, then run\n"
    "# `agent-telemetry views build` (the views name them)."
)

_PACKAGE_INIT = '''\
"""{package}."""

from agent_telemetry.emit import configure

# Once, at start-up: the emitter writes this service's own events (telemetry.toml's
# [catalogue]); without it they would be rejected as unknown.
configure(catalogue="{package}.telemetry")
'''

_STARTER = '''\
"""{package}'s telemetry in its own tests. The telemetry_capture fixture fails a test that
ends with the emitter on another catalogue than telemetry.toml's."""

from typing import Any

import {package}  # noqa: F401  (its start-up names the catalogue to the emitter)
from agent_telemetry.emit import emit


def test_a_finished_job_writes_its_outcome(telemetry_capture: list[dict[str, Any]]) -> None:
    emit("job_finished", outcome="ok", attempts=1)  # call your service's code here
    assert [(r["event"], r["outcome"]) for r in telemetry_capture] == [("job_finished", "ok")]
'''

# As examples/service's: pytest imports the package from the repository's root.
_PYPROJECT = """\
[project]
name = "{package}"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["agent-telemetry"]

[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]
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
    # Set when the source project and dataset were given: no edit of telemetry.toml needed.
    placed: bool = False
    # Files that exist and were left alone (the package's __init__.py, pyproject.toml).
    kept: tuple[Path, ...] = ()

    def next_steps(self) -> str:
        """The one line init ends with: what to do, each command in backquotes, as run."""
        check = "`agent-telemetry check`"
        adds = []
        if self.root / self.package / "__init__.py" in self.kept:
            adds.append(
                f'add `configure(catalogue="{self.package}.telemetry")` where {self.package} starts'
            )
        if self.root / "pyproject.toml" in self.kept:
            adds.append(
                'make sure pytest imports the package (`pythonpath = ["."]` in '
                "[tool.pytest.ini_options])"
            )
        first = "; ".join(adds) + "; " if adds else ""
        if self.placed:
            return f"next: {first}commit everything and run {check}"
        return (
            f"next: {first}set the [source] and [target] project and dataset in "
            "telemetry.toml, run `agent-telemetry views build` (the views name "
            f"them), commit everything and run {check}"
        )


def package_name(folder: Path) -> str:
    """A Python package name from the repository's folder name (``my-service`` ->
    ``my_service``); ``service`` when nothing usable is left."""
    name = re.sub(r"[^a-z0-9_]+", "_", folder.name.lower()).strip("_")
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = "service"
    return name[:40]


def _where(project: str | None, dataset: str | None) -> tuple[str, str]:
    """The source project and dataset, checked as telemetry.toml checks them (the value
    is never echoed: it goes into a file)."""
    for option, kind, value in (("--project", "project", project), ("--dataset", "name", dataset)):
        problem = None if value is None else identifier_problem(kind, value)
        if problem is not None:
            raise InitError(f"{option}: {problem}")
    return project or PLACEHOLDER_PROJECT, dataset or PLACEHOLDER_DATASET


def plan(
    root: Path,
    package: str | None = None,
    *,
    project: str | None = None,
    dataset: str | None = None,
) -> Plan:
    """What ``init`` would write in ``root``; raises InitError naming what is in the way."""
    package = package or package_name(root.resolve())
    if re.fullmatch(r"[a-z_][a-z0-9_]{0,39}", package) is None or keyword.iskeyword(package):
        raise InitError("--package: not a lowercase Python package name (letters, digits, _)")
    source_project, source_dataset = _where(project, dataset)
    placed = project is not None and dataset is not None
    toml = _TOML.format(
        package=package,
        lock=LOCK,
        where=_WHERE_GIVEN if placed else _WHERE_TO_EDIT,
        project=source_project,
        dataset=source_dataset,
    )
    files = {
        root / "telemetry.toml": toml,
        root / package / "telemetry.py": _CATALOGUE.format(package=package),
        root / STARTER_TEST: _STARTER.format(package=package),
        root / WORKFLOW: _WORKFLOW,
    }
    optional = {
        root / package / "__init__.py": _PACKAGE_INIT.format(package=package),
        root / "pyproject.toml": _PYPROJECT.format(package=package),
    }
    views = root / "telemetry" / "views"
    generated = (root / LOCK, views, root / "docs" / "telemetry.md")
    # Every path that init, then `lock` and `views build`, write is checked through the
    # file door before anything is written: a linked folder (.github -> ~) or a linked
    # file refuses the whole run. (``views / "-"`` stands for any file in that folder;
    # a file named views is in the way, and named so below with the rest.)
    in_views = () if views.is_file() and not views.is_symlink() else (views / "-",)
    for path in (*files, *optional, generated[0], *in_views, generated[2]):
        check_target(path, root)
    kept = tuple(path for path in optional if path.exists() or path.is_symlink())
    files.update({path: text for path, text in optional.items() if path not in kept})
    taken = [p for p in (*files, *generated) if p.exists() or p.is_symlink()]
    if taken:
        shown = ", ".join(p.relative_to(root).as_posix() for p in taken)
        raise InitError(
            f"not written: {shown} already exist(s); init never overwrites a file "
            "(`agent-telemetry check` tells whether a set-up repository is current)"
        )
    return Plan(root, package, files, placed, kept)


def write(planned: Plan) -> list[Path]:
    """Write the source files of ``planned`` (new files only); return them."""
    for path, text in planned.files.items():
        write_text(path, text, planned.root, new=True)  # never over a file made meanwhile
    return list(planned.files)
