"""mutmut mutates decorated functions too: `make mutation` applies each decorator after
its ``def`` in the mutation copy (scripts/mutation_decorators.py), and the package
behaves the same rewritten.

Without it mutmut 3.8.1 leaves every decorated function alone: the file door's
writers, the check-logs verdict, the capacity's budget test and every click command's
body had no mutant, while their groups read 100%."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pydantic
import pytest
from click.testing import CliRunner
from mutmut.mutation.file_mutation import create_mutations

from scripts.mutation import prepare
from scripts.mutation_decorators import decorators_after, refused_by_mutmut

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "agent_telemetry"


def _mutated_functions(path: Path, source: str) -> set[str]:
    _, mutations, _, _ = create_mutations(str(path), source)
    return {
        m.contained_by_top_level_function.name.value
        for m in mutations
        if isinstance(m.contained_by_top_level_function, cst.FunctionDef)
    }


def test_mutmut_refuses_decorated_functions_and_mutates_them_once_rewritten() -> None:
    path = PACKAGE / "_files.py"
    source = path.read_text(encoding="utf-8")
    doors = {"_replacing", "writing", "building"}  # the file door's context managers
    assert set(refused_by_mutmut(source)) >= doors
    assert not doors & _mutated_functions(path, source)  # mutmut's blind spot
    rewritten = decorators_after(source)
    assert doors <= _mutated_functions(path, rewritten)


SAMPLE = '''
import contextlib
import functools

import click
import pydantic

calls = []

class Budget(pydantic.BaseModel):
    used: int
    cap: int

    @pydantic.field_validator("cap")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("cap must be positive")
        return value

    @pydantic.model_validator(mode="after")
    def _within(self) -> "Budget":
        if self.used > self.cap:
            raise ValueError("over the cap")
        return self

    @property
    def left(self) -> int:
        return self.cap - self.used

    @functools.cached_property
    def share(self) -> float:
        calls.append("share")
        return self.used / self.cap

    @staticmethod
    def unit() -> str:
        return "tokens"

@contextlib.contextmanager
def tagged(tag):
    calls.append(f"open {tag}")
    yield tag.upper()
    calls.append(f"close {tag}")

@functools.lru_cache(maxsize=8)
def square(n):
    calls.append(n)
    return n * n

@click.group()
def main():
    """The sample's commands."""

@main.command("show")
@click.option("--cap", type=int, default=3)
@click.argument("used", type=int)
@click.pass_context
def show(ctx, used, cap):
    """Show a budget."""
    budget = Budget(used=used, cap=cap)
    click.echo(f"{ctx.info_name}: {budget.left} {budget.unit()} left")
    ctx.exit(0 if budget.left else 1)
'''


def _behaviour(source: str) -> list[object]:
    namespace: dict[str, object] = {"__name__": "sample"}
    exec(compile(source, "sample.py", "exec"), namespace)  # the test's own sample
    Budget, tagged, square, main = (namespace[n] for n in ("Budget", "tagged", "square", "main"))
    seen: list[object] = []
    budget = Budget(used=1, cap=4)  # type: ignore[operator]
    seen += [budget.left, budget.share, budget.share, Budget.unit(), type(Budget.left).__name__]  # type: ignore[attr-defined]
    for bad in ({"used": 1, "cap": 0}, {"used": 5, "cap": 4}):
        with pytest.raises(pydantic.ValidationError) as refused:
            Budget(**bad)  # type: ignore[operator]
        seen.append(refused.value.errors()[0]["msg"])
    with tagged("a") as value:  # type: ignore[operator]
        seen.append(value)
    seen += [square(3), square(3), square.cache_info().hits]  # type: ignore[operator,attr-defined]
    runner = CliRunner()
    for args in (["show", "1"], ["show", "--cap", "1", "1"], ["--help"], ["show", "x"]):
        result = runner.invoke(main, args)  # type: ignore[arg-type]
        seen.append((result.exit_code, result.output))
    seen.append(namespace["calls"])
    return seen


def test_a_rewritten_module_behaves_as_the_decorated_one() -> None:
    rewritten = decorators_after(SAMPLE)
    assert refused_by_mutmut(SAMPLE)
    assert refused_by_mutmut(rewritten) == []
    assert _behaviour(rewritten) == _behaviour(SAMPLE)


# Every module of the package, imported as written and as rewritten: each name a module
# or a class defines is the same kind of object (a Command, a property, a validator...).
_KINDS = textwrap.dedent(
    """
    import importlib, inspect, json, pkgutil, sys
    import agent_telemetry
    kinds = {}
    for info in pkgutil.walk_packages(agent_telemetry.__path__, "agent_telemetry."):
        if info.name.endswith("pytest_plugin"):
            continue  # imports pytest's plugin machinery; its fixture is checked below
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.ismodule(value) or (
                (inspect.isclass(value) or inspect.isfunction(value))
                and value.__module__ != module.__name__
            ):
                continue  # imported
            kinds[f"{info.name}.{name}"] = type(value).__name__
            if inspect.isclass(value):
                for attr, member in vars(value).items():
                    kinds[f"{info.name}.{name}.{attr}"] = type(member).__name__
    json.dump(kinds, sys.stdout, sort_keys=True)
    """
)


def _kinds(root: Path) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", _KINDS],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    kinds: dict[str, str] = json.loads(out)
    return kinds


def test_every_module_rewritten_is_all_mutmuts_and_keeps_its_kinds(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "agent_telemetry")
    changed, refused = 0, []
    for path in (tmp_path / "agent_telemetry").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "@" not in source:
            continue
        rewritten = decorators_after(source)
        changed += rewritten != source
        refused += [f"{path.relative_to(tmp_path)}:{f}" for f in refused_by_mutmut(rewritten)]
        path.write_text(rewritten, encoding="utf-8")
    assert changed > 30  # the package's decorated functions are spread over its modules
    assert refused == []  # no function left to mutmut's blind spot
    written, rewritten_kinds = _kinds(REPO), _kinds(tmp_path)
    assert written == rewritten_kinds
    assert written["agent_telemetry.deploy.cli.plan_command"] == "Command"
    assert written["agent_telemetry._files.writing"] == "function"
    assert written["agent_telemetry.schema.capacity.EventCapacity.within_budget"] == "property"


def test_the_mutation_copy_is_rewritten_for_the_mutated_modules_only(tmp_path: Path) -> None:
    copy = prepare("files", work=tmp_path)
    assert refused_by_mutmut((copy / "agent_telemetry/_files.py").read_text()) == []
    assert refused_by_mutmut((copy / "agent_telemetry/_loader.py").read_text()) != []
