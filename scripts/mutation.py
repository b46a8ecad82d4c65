"""`make mutation`: mutmut 3 over the promise-critical modules, one group at a time.

    .venv/bin/python scripts/mutation.py [--group NAME]... [--children N]

Each group's modules are mutated against the group's own tests, in its own copy of the
repository's tracked files under ``.mutation/<group>/``; mutmut keeps its results in
that copy's ``mutants/``, so a re-run only tests the functions that changed. Then
``scripts/mutation_report.py`` summarises the group and fails on a survivor that is
neither killed nor listed in ``tests/mutation/equivalent.txt``.

One run over every module and the whole suite cannot work: tests that start
``agent-telemetry`` in a copy of the repository import the mutated package from a folder
without mutmut's configuration, and fail before any mutant runs.

The deploy group mutates the modules that decide (approval, plan, what apply refuses)
against the tests that need no server. ``--group deploy-server`` mutates the modules
that read and write through the client (``_read``, ``_apply``) against
``tests/deploy/bigquery/test_deploy.py`` as well: one emulator serves all its mutants
(started here, named to the tests by ``AGENT_TELEMETRY_BQEMULATOR_ENDPOINT``). It is not
in the default run: a mutant those tests do not kill costs their whole ~70 s, so the
group takes hours on two cores. The emulator's CLI and docs transcript tests stay out:
they run the command in a subprocess, which mutmut cannot observe.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.deploy.bigquery.emulator import ENDPOINT_ENV, running_emulator  # noqa: E402

WORK = REPO / ".mutation"
MUTMUT = Path(sys.executable).with_name("mutmut")
SLOW = (
    "tests/emit/test_reentrancy.py"
    "::test_emit_from_a_signal_handler_during_two_million_emits_finishes"
)


@dataclass(frozen=True)
class Group:
    modules: list[str]  # the files mutated
    tests: list[str]  # pytest arguments selecting their tests
    emulator: bool = False  # the tests need a BigQuery emulator


# The deploy modules that decide (no server): approval, plan, what apply refuses.
DEPLOY_MODULES = [
    "agent_telemetry/deploy/_approval.py",
    "agent_telemetry/deploy/_plan.py",
    "agent_telemetry/deploy/_decide.py",
]
# The ones that read and write through the client: only the emulator tests reach them.
DEPLOY_SERVER_MODULES = ["agent_telemetry/deploy/_read.py", "agent_telemetry/deploy/_apply.py"]
GROUPS: dict[str, Group] = {
    "schema": Group(
        [
            "agent_telemetry/schema/rules.py",
            "agent_telemetry/schema/identifiers.py",
            "agent_telemetry/schema/spec.py",
            "agent_telemetry/schema/_base.py",
            "agent_telemetry/schema/buckets.py",
            "agent_telemetry/schema/compat.py",
            "agent_telemetry/schema/capacity.py",
        ],
        ["tests/schema"],
    ),
    "emit": Group(
        [
            "agent_telemetry/emit/_validate.py",
            "agent_telemetry/emit/_fast_record.py",
            "agent_telemetry/emit/_processors.py",
            "agent_telemetry/emit/_output.py",
        ],
        ["tests/emit", f"--deselect={SLOW}"],
    ),
    "views": Group(
        [
            "agent_telemetry/views/_bindings.py",
            "agent_telemetry/views/_render.py",
            "agent_telemetry/views/_describe.py",
        ],
        ["tests/views"],
    ),
    "deploy": Group(DEPLOY_MODULES, ["tests/deploy", "--ignore=tests/deploy/bigquery"]),
    "deploy-server": Group(
        DEPLOY_SERVER_MODULES,
        [
            "tests/deploy",
            "--ignore=tests/deploy/bigquery/test_cli.py",
            "--ignore=tests/deploy/bigquery/test_docs_transcripts.py",
            "--ignore=tests/deploy/bigquery/test_dedupe.py",
        ],
        emulator=True,
    ),
    "warehouse": Group(
        [
            "agent_telemetry/warehouse/_load.py",
            "agent_telemetry/warehouse/_load_scan.py",
            "agent_telemetry/warehouse/_checklogs.py",
        ],
        ["tests/warehouse"],
    ),
}
OPT_IN = {"deploy-server"}  # only when named: hours on two cores


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def prepare(group: str) -> Path:
    """The group's copy: the tracked files as they are now, its own [tool.mutmut]."""
    modules, tests = GROUPS[group].modules, GROUPS[group].tests
    copy = WORK / group
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    own = (
        f"only_mutate = {_toml_list(modules)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
    )
    text, found = re.subn(r"^\[tool\.mutmut\]\n", lambda m: m.group(0) + own, text, flags=re.M)
    if found != 1:
        sys.exit("pyproject.toml: no [tool.mutmut] table")
    pyproject.write_text(text, encoding="utf-8")
    return copy


def survivors(copy: Path) -> list[str]:
    """The mutants the group's last run left alive (none before its first run)."""
    if not (copy / "mutants").is_dir():
        return []
    out = subprocess.run(
        [str(MUTMUT), "results"], cwd=copy, capture_output=True, text=True, check=True
    ).stdout
    return re.findall(r"^\s*(\S+): (?:survived|no tests|timeout)$", out, flags=re.MULTILINE)


def run(group: str, children: int) -> int:
    copy = prepare(group)
    # mutmut reruns only the mutants of changed functions; a survivor of an unchanged one
    # keeps its verdict even when a test written since would kill it, so those are named
    # to mutmut again after the run.
    earlier = survivors(copy)
    # mutmut 3.8.1 keeps its map of which tests call which function from the first run:
    # a function added since reads as "no tests". Collecting it again costs one run of
    # the group's tests; the mutants' results are kept (unchanged functions are not rerun).
    (copy / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    print(f"== {group}: {', '.join(GROUPS[group].modules)}", flush=True)
    env = dict(os.environ)
    with ExitStack() as stack:
        if GROUPS[group].emulator:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            env[ENDPOINT_ENV] = stack.enter_context(running_emulator(workdir)).endpoint
        command = [str(MUTMUT), "run", "--max-children", str(children)]
        subprocess.run(command, cwd=copy, env=env, check=False)
        again = sorted(set(earlier) & set(survivors(copy)))
        if again:
            print(f"== {group}: testing the {len(again)} earlier survivors again", flush=True)
            subprocess.run([*command, *again], cwd=copy, env=env, check=False)
    report = subprocess.run(
        [sys.executable, str(copy / "scripts" / "mutation_report.py")], cwd=copy, check=False
    )
    return report.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS))
    parser.add_argument("--children", type=int, default=2)
    args = parser.parse_args()
    default = [name for name in GROUPS if name not in OPT_IN]
    failed = [g for g in args.group or default if run(g, args.children) != 0]
    if failed:
        print(f"groups with unexplained survivors or below the target: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
