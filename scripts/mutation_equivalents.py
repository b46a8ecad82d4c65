"""tests/mutation/equivalent.txt: the surviving mutants explained, each bound to its change.

mutmut names a mutant by its function and a number (``x_emit__mutmut_7``), and numbers
the mutants of a function in the order it finds them: an edit above a mutant renumbers
it, and a line written for one mutation would then excuse another. So each entry keeps
a fingerprint of the lines its mutant changes (the diff ``mutmut show`` prints, without
its context), and ``scripts/mutation_report.py`` excuses a survivor only while its
fingerprint matches:

    agent_telemetry._text.x_clean__mutmut_3 @1a2b3c4d  # why it cannot change behaviour

    .venv/bin/python scripts/mutation_equivalents.py record

writes the fingerprint of every entry that has none yet, from the groups' copies under
``.mutation/`` (run it after a group's run, once each new line's reason is checked
against ``mutmut show``). A fingerprint that no longer matches is never rewritten here:
look at the mutant again, then delete the old fingerprint and record.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT = REPO / "tests" / "mutation" / "equivalent.txt"
_ENTRY = re.compile(r"^(?P<name>\S+)(?:\s+@(?P<print>[0-9a-f]{8}))?\s+#\s*(?P<why>\S.*)$")


class EntryError(ValueError):
    """A line of equivalent.txt that is not ``<mutant name> [@fingerprint]  # why``."""


@dataclass(frozen=True)
class Entry:
    name: str
    fingerprint: str | None
    why: str
    line: int

    @property
    def module(self) -> str:
        """The mutated module's dotted name (``agent_telemetry._text``)."""
        return self.name.rsplit(".", 1)[0]


def read_entries(path: Path = EQUIVALENT) -> list[Entry]:
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is None:
            raise EntryError(f"{path.name}:{number}: not `<mutant name> [@fingerprint]  # why`")
        entries.append(Entry(match["name"], match["print"], match["why"], number))
    return entries


def fingerprint(diff: str) -> str:
    """8 hex digits of the lines the mutant removes and adds (stripped): the same for the
    same mutation wherever its function moves, another for another mutation."""
    changed = [
        line[0] + line[1:].strip()
        for line in diff.splitlines()
        if line[:1] in "-+" and not line.startswith(("---", "+++"))
    ]
    return hashlib.blake2b("\n".join(changed).encode(), digest_size=4).hexdigest()


@contextmanager
def _inside(copy: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(copy)  # mutmut reads mutants/ from the working directory
    try:
        yield
    finally:
        os.chdir(before)


def mutant_fingerprint(name: str, copy: Path) -> str | None:
    """The fingerprint of mutant ``name`` in a group's copy (None when it has none)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    module = Path(*name.rsplit(".", 1)[0].split(".")).with_suffix(".py")
    if not (copy / "mutants" / module).is_file():
        return None
    with _inside(copy):
        try:
            return fingerprint(get_diff_for_mutant(name, path=module))
        except FileNotFoundError:  # mutmut makes no such mutant (any longer)
            return None


def _newest_copy(entry: Entry, work: Path) -> Path | None:
    """The copy under ``work`` that mutated the entry's module most recently (mutmut
    copies every module into each copy; only the mutated ones have a ``.meta``)."""
    meta = Path("mutants", *entry.module.split(".")).with_suffix(".py.meta")
    found = [c for c in work.iterdir() if entry.name in _mutants_in(c / meta)]
    return max(found, key=lambda c: (c / meta).stat().st_mtime, default=None)


def _mutants_in(meta: Path) -> set[str]:
    """The mutant names a ``.meta`` file lists (JSON: a class's are written escaped)."""
    if not meta.is_file():
        return set()
    return set(json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {}))


def record(path: Path = EQUIVALENT, work: Path = REPO / ".mutation") -> list[str]:
    """Write the fingerprint of each entry that has none; the names not found in a copy."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    missing = []
    for entry in read_entries(path):
        if entry.fingerprint is not None:
            continue
        copy = _newest_copy(entry, work)
        found = None if copy is None else mutant_fingerprint(entry.name, copy)
        if found is None:
            missing.append(entry.name)
            continue
        lines[entry.line - 1] = lines[entry.line - 1].replace(
            entry.name, f"{entry.name} @{found}", 1
        )
    path.write_text("".join(lines), encoding="utf-8")
    return missing


def main() -> int:
    if sys.argv[1:] != ["record"]:
        sys.exit(__doc__)
    missing = record()
    for name in missing:
        print(f"no mutant {name} in any copy under .mutation/: run its group first")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
