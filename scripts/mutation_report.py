"""Summarise a `mutmut run`: mutants, killed, survived, equivalent, score.

Every surviving mutant must be either killed by a behaviour test or listed in
``tests/mutation/equivalent.txt`` with one line saying why it cannot change behaviour
(``<mutant name> @fingerprint  # why``; the fingerprint binds the line to the mutation it
explains, scripts/mutation_equivalents.py). Exits 1 when a survivor is neither, or is
listed with another mutation's fingerprint, or when the score over the non-equivalent
mutants is below the target. The figures also go to
``mutants/summary.json``, for ``scripts/mutation.py``'s table.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

TARGET = 0.95
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from scripts.mutation_equivalents import (  # noqa: E402
    EQUIVALENT,
    Entry,
    EntryError,
    mutant_fingerprint,
    read_entries,
)

MUTMUT = Path(sys.executable).with_name("mutmut")


def mutated_modules() -> set[str]:
    """The dotted names of the modules this run mutates ([tool.mutmut] only_mutate)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    paths = config["tool"]["mutmut"]["only_mutate"]
    return {path.removesuffix(".py").replace("/", ".") for path in paths}


def equivalent_mutants() -> dict[str, Entry]:
    """The listed equivalent mutants of the modules this run mutates."""
    modules = mutated_modules()
    try:
        entries = read_entries(EQUIVALENT)
    except EntryError as error:
        sys.exit(str(error))
    return {e.name: e for e in entries if e.module in modules}


def excused(entry: Entry) -> str | None:
    """Why a listed survivor is not excused after all (None when it is)."""
    if entry.fingerprint is None:
        return "listed without its fingerprint: scripts/mutation_equivalents.py record"
    if mutant_fingerprint(entry.name, REPO) != entry.fingerprint:
        return (
            f"listed (line {entry.line}) for another mutation: its function changed since; "
            "look again (mutmut show), then record its fingerprint"
        )
    return None


def survivors() -> list[str]:
    out = subprocess.run(
        [str(MUTMUT), "results"], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    return re.findall(r"^\s*(\S+): (?:survived|no tests)$", out, flags=re.MULTILINE)


def main() -> int:
    subprocess.run([str(MUTMUT), "export-cicd-stats"], check=True, cwd=REPO, capture_output=True)
    stats = json.loads((REPO / "mutants" / "mutmut-cicd-stats.json").read_text())
    listed = equivalent_mutants()
    alive = survivors()
    why_not = {m: excused(listed[m]) for m in alive if m in listed}
    equivalent = [m for m in alive if m in listed and why_not[m] is None]
    unexplained = [m for m in alive if m not in equivalent]
    scored = stats["total"] - len(equivalent)
    score = stats["killed"] / scored if scored else 1.0
    print(
        f"mutants {stats['total']}, killed {stats['killed']}, survived {len(alive)} "
        f"({len(equivalent)} equivalent, {len(unexplained)} unexplained), "
        f"timeout {stats['timeout']}, score {score:.1%} of non-equivalent (target {TARGET:.0%})"
    )
    for name in unexplained:
        reason = why_not.get(name) or f"kill it with a test, or list it in {EQUIVALENT.name}"
        print(f"  survived: {name}  ({reason})")
    summary = {
        "mutants": stats["total"],
        "killed": stats["killed"],
        "equivalent": len(equivalent),
        "survived": len(unexplained),
        "timeout": stats["timeout"],
        "score": score,
    }
    (REPO / "mutants" / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    stale = sorted(set(listed) - set(alive))
    for name in stale:
        print(f"  listed as equivalent but not a survivor now: {name}")
    return 0 if not unexplained and score >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
