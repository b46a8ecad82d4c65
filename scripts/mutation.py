"""`make mutation`: mutmut 3 over every module of the package, one group at a time.

    .venv/bin/python scripts/mutation.py [--group NAME]... [--children N]
    .venv/bin/python scripts/mutation.py --module agent_telemetry/_text.py

Every module is in exactly one group (tests/mutation/test_groups.py holds it so).
``--module`` mutates one module alone against its group's tests, in a copy of its own
(``.mutation/<group>.<module>/``). At the end a table gives each group's mutants,
killed, equivalent, survived, timeouts, score and time.

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
that read and write through the client (``_read``, ``_apply``, ``_client``) against
``tests/deploy/bigquery/test_deploy.py`` as well: one emulator serves all its mutants
(started here, named to the tests by ``AGENT_TELEMETRY_BQEMULATOR_ENDPOINT``). It is not
in the default run: a mutant those tests do not kill costs their whole ~70 s, so the
group takes hours on two cores. The docs transcript tests stay out: they run the
command in a subprocess, which mutmut cannot observe. ``--group deploy-cli`` mutates the
commands' glue (``deploy/cli.py``) against the deploy tests that need no server and
``tests/deploy/bigquery/test_cli.py``, which runs the commands in-process (click's runner)
against one emulator started here, as for deploy-server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from scripts.mutation_decorators import decorators_after  # noqa: E402
from tests.deploy.bigquery.emulator import ENDPOINT_ENV, running_emulator  # noqa: E402

WORK = REPO / ".mutation"
MUTMUT = Path(sys.executable).with_name("mutmut")
SLOW = (
    "tests/emit/test_reentrancy.py"
    "::test_emit_from_a_signal_handler_during_two_million_emits_finishes"
)
UNBUILDABLE_COPY = (
    "tests/schema/test_catalogue_door.py"
    "::test_this_repositorys_unbuildable_model_is_one_line_exit_2"
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
DEPLOY_SERVER_MODULES = [
    "agent_telemetry/deploy/_read.py",
    "agent_telemetry/deploy/_apply.py",
    "agent_telemetry/deploy/_client.py",
    "agent_telemetry/deploy/_sink_create.py",
]
# The deploy tests that need no server, one argument each: pytest's --ignore of
# tests/deploy/bigquery would drop a file of it named after it as well.
DEPLOY_OFFLINE_TESTS = sorted(
    p.relative_to(REPO).as_posix() for p in (REPO / "tests" / "deploy").glob("test_*.py")
)
PKG = "agent_telemetry"
# Every module of the package is in exactly one group (tests/mutation/test_groups.py holds
# it so). The groups of the modules added since the first five come first; the "-rest"
# groups hold what the promise-critical groups left out, against their package's tests.
GROUPS: dict[str, Group] = {
    "text": Group(
        [f"{PKG}/_text.py"],
        [
            "tests/test_text_classes.py",
            "tests/test_markdown_escapes.py",
            "tests/test_outside_text.py::test_clean_keeps_one_line_and_is_stable",
            "tests/test_outside_text.py::test_markup_escapes_what_rich_would_read",
        ],
    ),
    "files": Group(
        [f"{PKG}/_files.py"],
        ["tests/test_files.py", "tests/test_files_layer.py", "tests/test_files_building.py"],
    ),
    "project": Group(
        [f"{PKG}/project.py", f"{PKG}/config.py"],
        [
            "tests/test_project.py",
            "tests/test_config.py",
            "tests/test_config_messages.py",
            "tests/test_project_discovery.py",
            "tests/check/test_reviewed.py",
        ],
    ),
    # The trust boundaries' doors (docs/security.md): one catalogue loader, one parser,
    # one baseline reader, each against the table-driven test that runs every entry point.
    "doors": Group(
        [f"{PKG}/_loader.py", f"{PKG}/_parse.py", f"{PKG}/check/_baseline.py"],
        [
            "tests/schema/test_catalogue_door.py",
            # It runs the command on a copy of the repository: that copy's package is the
            # mutated one, which cannot import without mutmut's configuration.
            f"--deselect={UNBUILDABLE_COPY}",
            "tests/test_nesting.py",
            "tests/test_discovery.py",
            "tests/check/test_baseline.py",
            "tests/emit/test_configure_catalogue.py",
            "tests/test_loader.py",
            "tests/check/test_read_baseline.py",
        ],
    ),
    "check-init": Group(
        [f"{PKG}/check/_init.py"],
        [
            "tests/check/test_service_repo.py::test_init_sets_an_empty_repository_up_once",
            "tests/check/test_service_repo.py::test_init_refuses_before_writing_anything",
            "tests/check/test_init_plan.py",
        ],
    ),
    "capacity": Group(
        [f"{PKG}/schema/capacity.py", f"{PKG}/schema/lock.py"],
        [
            "tests/schema/test_capacity.py",
            "tests/schema/test_capacity_growth.py",
            "tests/schema/test_lock.py",
            # The file's other tests run the command on a copy of the repository, whose
            # package is the mutated one (see UNBUILDABLE_COPY): this one runs in-process.
            "tests/check/test_capacity_gate.py"
            "::test_check_the_lock_and_the_dictionary_show_the_same_bits",
        ],
    ),
    "warehouse-copies": Group(
        [
            f"{PKG}/warehouse/_judging/copies.py",
            f"{PKG}/warehouse/_loading/fast.py",
            f"{PKG}/warehouse/_sink/table.py",
            f"{PKG}/warehouse/_checking/fast.py",
            f"{PKG}/warehouse/_checking/checked_table.py",
            f"{PKG}/warehouse/_checking/keys_ahead.py",
            f"{PKG}/warehouse/_reading/inputs.py",
        ],
        ["tests/warehouse"],
    ),
    "lanes": Group(
        [f"{PKG}/views/_lanes.py", f"{PKG}/views/_lanes_proof.py"],
        # The build and the proof in-process, and the view's rows on DuckDB. test_render
        # (the views group's) and the demo's lane test (a whole demo per mutant) stay out.
        ["tests/views/test_lanes.py", "tests/warehouse/test_lane_health.py"],
    ),
    "report": Group(
        [f"{PKG}/report/{m}.py" for m in ("__init__", "_page", "_svg", "charts", "cli")],
        # The drawn charts and pages from rows made by hand, and the CLI on small logs. The
        # tests on the demo's report (a whole demo per mutant) and the browser's stay out.
        [
            "tests/report/test_drawn.py",
            "tests/report/test_report_command.py",
            "tests/report/test_report_broken_logs.py",
            *(
                f"tests/report/test_report.py::{t}"
                for t in (
                    "test_every_chart_of_the_issue_is_there",
                    "test_an_empty_chart_says_so",
                    "test_a_hostile_file_name_is_text_on_the_page",
                    "test_a_missing_log_is_a_usage_error",
                    "test_k_of_the_page_is_the_option",
                )
            ),
        ],
    ),
    "schema": Group(
        [
            f"{PKG}/schema/rules.py",
            f"{PKG}/schema/identifiers.py",
            f"{PKG}/schema/spec.py",
            f"{PKG}/schema/_base.py",
            f"{PKG}/schema/buckets.py",
            f"{PKG}/schema/compat.py",
        ],
        # the one door test that runs the command on a copy of the repository cannot
        # import the package from mutmut's copy (UNBUILDABLE_COPY): the doors group's
        ["tests/schema", f"--deselect={UNBUILDABLE_COPY}"],
    ),
    "emit": Group(
        [
            f"{PKG}/emit/_validate.py",
            f"{PKG}/emit/_fast_record.py",
            f"{PKG}/emit/_processors.py",
            f"{PKG}/emit/_output.py",
            f"{PKG}/emit/_long_line.py",
        ],
        ["tests/emit", f"--deselect={SLOW}"],
    ),
    "views": Group(
        [f"{PKG}/views/_bindings.py", f"{PKG}/views/_render.py", f"{PKG}/views/_describe.py"],
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
            f"{PKG}/warehouse/_loading/load.py",
            f"{PKG}/warehouse/_loading/entries.py",
            f"{PKG}/warehouse/_loading/report.py",
            f"{PKG}/warehouse/_loading/staging.py",
            f"{PKG}/warehouse/_loading/store.py",
            f"{PKG}/warehouse/_reading/records.py",
            f"{PKG}/warehouse/_checking/check_logs.py",
        ],
        ["tests/warehouse"],
    ),
    # What the groups above leave out: each package's other modules against its tests.
    "schema-rest": Group(
        [
            f"{PKG}/schema/{m}.py"
            for m in (
                "__init__",
                "catalogue",
                "coreschema",
                "coverage",
                "envelope",
                "events",
                "grid",
                "retired",
                "sql_keywords",
                "versions",
            )
        ],
        # the one door test that runs the command on a copy of the repository cannot
        # import the package from mutmut's copy (UNBUILDABLE_COPY): the doors group's
        ["tests/schema", f"--deselect={UNBUILDABLE_COPY}"],
    ),
    "emit-rest": Group(
        [
            f"{PKG}/emit/{m}.py"
            for m in (
                "__init__",
                "_capture",
                "_config",
                "_counters",
                "_emit",
                "_errors",
                "_guard",
                "_logger",
                "_time",
                "pytest_plugin",
            )
        ],
        ["tests/emit", f"--deselect={SLOW}"],
    ),
    "views-rest": Group(
        [
            f"{PKG}/views/{m}.py"
            for m in (
                "__init__",
                "_build",
                "_dedupe",
                "_docs",
                "_generate",
                "_inline",
                "_jsonschema",
                "_pruning",
                "_reading",
                "_sink",
                "_sql_error",
                "cli",
                "cli_options",
                "table_field",
            )
        ],
        ["tests/views"],
    ),
    "warehouse-rest": Group(
        [
            f"{PKG}/warehouse/{m}.py"
            for m in (
                "__init__",
                "_preview",
                "_query",
                "_warehouse",
                "cli",
                "results",
                "_checking/__init__",
                "_checking/rare",
                "_checking/render",
                "_duckdb_views/__init__",
                "_duckdb_views/dedupe",
                "_duckdb_views/transpile",
                "_judging/__init__",
                "_judging/python",
                "_judging/sql",
                "_judging/typed",
                "_loading/__init__",
                "_loading/progress",
                "_reading/__init__",
                "_reading/source",
                "_reading/structure",
                "_sink/__init__",
                "_sink/duckdb_types",
            )
        ],
        ["tests/warehouse"],
    ),
    "deploy-rest": Group(
        [
            f"{PKG}/deploy/{m}.py"
            for m in (
                "__init__",
                "_capacity",
                "_identity",
                "_plan_document",
                "_plan_markdown",
                "_report",
                "_review_page",
                "_sink",
                "_types",
            )
        ],
        ["tests/deploy", "--ignore=tests/deploy/bigquery"],
    ),
    # The commands' glue: their errors need no server (test_commands_offline.py), their
    # plans do. test_cli.py runs the commands in-process against the group's emulator.
    "deploy-cli": Group(
        [f"{PKG}/deploy/cli.py"],
        [*DEPLOY_OFFLINE_TESTS, "tests/deploy/bigquery/test_cli.py"],
        emulator=True,
    ),
    "check": Group(
        [
            f"{PKG}/check/{m}.py"
            for m in (
                "__init__",
                "_beside",
                "_definition",
                "_findings",
                "_format",
                "_git",
                "_locate",
                "_paths",
                "_run",
                "_schema_stages",
                "_view_stages",
                "cli",
            )
        ],
        ["tests/check"],
    ),
    "analyze": Group(
        [
            f"{PKG}/analyze/{m}.py"
            for m in (
                "__init__",
                "_analyzer",
                "_catalog",
                "_errors",
                "_evaluate",
                "_limits",
                "_run",
                "_runtime",
                "_views",
                "cli",
            )
        ],
        ["tests/analyze"],
    ),
    "demo": Group(
        [f"{PKG}/demo/{m}.py" for m in ("__init__", "_report", "_sim", "_workload", "cli")],
        ["tests/demo"],
    ),
    "entry": Group(
        [f"{PKG}/{m}.py" for m in ("__init__", "_entry", "_lazy", "cli", "errors")],
        # not tests/test_packaging.py: it installs a wheel built from the copy and runs it
        # in a subprocess, which mutmut cannot observe (and the mutated wheel cannot import)
        ["tests/cli", "tests/test_import_rules.py"],
    ),
}
OPT_IN = {"deploy-server"}  # only when named: hours on two cores


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def group_of(module: str) -> str:
    """The group that mutates ``module`` (a path such as ``agent_telemetry/_text.py``)."""
    for name, group in GROUPS.items():
        if module in group.modules:
            return name
    sys.exit(f"{module}: in no group of scripts/mutation.py")


def prepare(group: str, module: str | None = None, work: Path = WORK) -> Path:
    """The group's copy: the tracked files as they are now, its own [tool.mutmut].
    One ``module`` of the group gets a copy of its own, mutating that module alone.
    The mutated modules' decorators are applied after each ``def``, so that mutmut
    mutates decorated functions too (scripts/mutation_decorators.py)."""
    modules, tests = GROUPS[group].modules, GROUPS[group].tests
    copy = work / group
    if module is not None:
        modules, copy = [module], work / f"{group}.{Path(module).stem}"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    for name in modules:
        mutated = copy / name
        mutated.write_text(decorators_after(mutated.read_text(encoding="utf-8")), encoding="utf-8")
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


def run(group: str, children: int, module: str | None = None) -> int:
    started = time.monotonic()
    copy = prepare(group, module)
    # mutmut reruns only the mutants of changed functions; a survivor of an unchanged one
    # keeps its verdict even when a test written since would kill it, so those are named
    # to mutmut again after the run.
    earlier = survivors(copy)
    # mutmut 3.8.1 keeps its map of which tests call which function from the first run:
    # a function added since reads as "no tests". Collecting it again costs one run of
    # the group's tests; the mutants' results are kept (unchanged functions are not rerun).
    (copy / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    print(f"== {group}: {module or ', '.join(GROUPS[group].modules)}", flush=True)
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
    summary = copy / "mutants" / "summary.json"
    figures = json.loads(summary.read_text()) if summary.is_file() else {}
    ROWS.append((copy.name, figures, time.monotonic() - started))
    return report.returncode


ROWS: list[tuple[str, dict[str, float], float]] = []


def table() -> str:
    """The groups run, one row each (markdown, as docs/testing.md keeps them)."""
    out = ["| group | mutants | killed | equivalent | survived | timeout | score | time |"]
    out.append("|---|---|---|---|---|---|---|---|")
    for name, f, seconds in ROWS:
        cells = [f.get(k, "?") for k in ("mutants", "killed", "equivalent", "survived", "timeout")]
        score = f"{f['score']:.1%}" if "score" in f else "?"
        out.append(f"| {name} | {' | '.join(map(str, cells))} | {score} | {seconds / 60:.1f} min |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS))
    parser.add_argument(
        "--module", help="one module alone, e.g. agent_telemetry/_text.py (its own copy)"
    )
    parser.add_argument("--children", type=int, default=2)
    args = parser.parse_args()
    if args.module:
        failed = [args.module] if run(group_of(args.module), args.children, args.module) else []
    else:
        default = [name for name in GROUPS if name not in OPT_IN]
        failed = [g for g in args.group or default if run(g, args.children) != 0]
    print(table())
    if failed:
        print(f"groups with unexplained survivors or below the target: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
