"""What importing the emitter costs a service, against importing its three dependencies.

    .venv/bin/python bench/import_time.py [--python LIGHT_VENV/bin/python] [--runs N]

Measured in the light install (the wheel with no extras, as a service gets it from
``pip install agent-telemetry``): without ``--python`` it builds the wheel of this
checkout and a fresh virtual environment in a temporary directory first (~30 s). Each
run is a new interpreter (``python -I``, started outside this checkout) that times its
one import statement; the statements alternate run by run, and each figure is the best
of N (the least disturbed by whatever else runs).

Time is the process's CPU time by default (``time.process_time``: on a shared machine
wall time also counts whoever else runs); ``--clock wall`` measures elapsed time.

The headline is the emitter against ``import pydantic, structlog, orjson``. That
baseline defines no model, and pydantic imports lazily: the first model anyone defines
costs as much again (``from pydantic import BaseModel`` and building a schema load most
of pydantic). The "one model" row shows that cost, which a service that uses pydantic
itself pays anyway; the rows in between show where the rest goes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "import pydantic, structlog, orjson"
ONE_MODEL = f"{BASELINE}\nclass Model(pydantic.BaseModel):\n    x: int"
SCHEMA = "import structlog, orjson, agent_telemetry.schema"
EMITTER = "import agent_telemetry.emit"
STATEMENTS = {
    BASELINE: BASELINE,
    ONE_MODEL: f"{BASELINE}; class Model(pydantic.BaseModel): x: int",
    SCHEMA: SCHEMA,
    EMITTER: EMITTER,
}
CLOCKS = {"cpu": "time.process_time()", "wall": "time.perf_counter()"}
# Nothing of this checkout may leak into the light install (PYTHONPATH would find it).
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def _run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return result.stdout


def build_light_install(root: Path) -> Path:
    """The wheel of this checkout, installed with no extras into a fresh venv; its python."""
    source = root / "source"
    shutil.copytree(
        REPO / "agent_telemetry",
        source / "agent_telemetry",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root, source, cwd=root)
    (wheel,) = root.glob("agent_telemetry-*.whl")
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    python = venv / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel, cwd=root)
    return python


def import_seconds(python: Path, statement: str, clock: str, cwd: Path) -> float:
    now = CLOCKS[clock]
    code = f"import time\nt = {now}\n{statement}\nprint({now} - t)"
    return float(_run(python, "-I", "-c", code, cwd=cwd))


def loaded(python: Path, statement: str, modules: tuple[str, ...], cwd: Path) -> list[str]:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    return _run(python, "-I", "-c", code, cwd=cwd).split()


def measure(python: Path, runs: int, clock: str, cwd: Path) -> None:
    best = dict.fromkeys(STATEMENTS, float("inf"))
    for _ in range(runs):
        for statement in best:
            seconds = import_seconds(python, statement, clock, cwd)
            best[statement] = min(best[statement], seconds)
    print(f"light install: {python}")
    print(f"{clock} time, best of {runs} fresh interpreters per row")
    for statement, label in STATEMENTS.items():
        ratio = best[statement] / best[BASELINE]
        print(f"  {label:76s} {best[statement] * 1000:7.1f} ms  {ratio:.2f}x")
    ratio = best[EMITTER] / best[BASELINE]
    print(f"{EMITTER} / {BASELINE}: {ratio:.2f}x (target <= 1.3x)")
    in_use = best[EMITTER] / best[ONE_MODEL]
    print(f"{EMITTER} / the same with one pydantic model defined: {in_use:.2f}x")
    heavy = loaded(python, EMITTER, ("rich", "click", "jinja2", "sqlglot", "duckdb"), cwd)
    print(f"heavier modules loaded by {EMITTER}: {', '.join(heavy) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, help="python of an existing light install")
    parser.add_argument("--runs", type=int, default=20, help="interpreters per statement")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-telemetry-import-") as tmp:
        root = Path(tmp)
        python = args.python if args.python is not None else build_light_install(root)
        measure(python, args.runs, args.clock, cwd=root)


if __name__ == "__main__":
    main()
