"""tests/mutation/equivalent.txt binds each explained survivor to its mutation.

mutmut numbers a function's mutants in the order it finds them, so an edit above a
mutant renumbers it: a line written for ``x_share__mutmut_1`` would then excuse another
mutation. These tests make mutmut itself renumber a function and check that the
fingerprint follows the mutation, not the number.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from mutmut.mutation.file_mutation import mutate_file_contents

from scripts.mutation_equivalents import (
    EQUIVALENT,
    EntryError,
    mutant_fingerprint,
    read_entries,
    record,
)

BEFORE = """\
def share(used, cap):
    return used / cap
"""
# A new first line: mutmut now finds its mutants first, and numbers the old ones after.
AFTER = """\
def share(used, cap):
    cap = max(cap, 1)
    return used / cap


class Budget:
    def left(self, used):
        return self.cap - used
"""


def _copy(root: Path, source: str) -> tuple[Path, list[str]]:
    """A group's copy as mutmut leaves it: the mutated module under ``mutants/``."""
    mutated = mutate_file_contents("calc.py", textwrap.dedent(source))
    (root / "mutants").mkdir(parents=True)
    (root / "mutants" / "calc.py").write_text(mutated.code, encoding="utf-8")
    names = [f"calc.{name}" for name in mutated.mutant_names]
    # as mutmut writes it: JSON, so a method's name (``xǁBudgetǁleft``) is escaped
    meta = json.dumps({"exit_code_by_key": dict.fromkeys(names, 0)})
    (root / "mutants" / "calc.py.meta").write_text(meta, encoding="utf-8")
    return root, names


def test_a_renumbered_mutant_no_longer_matches_the_line_that_explained_it(
    tmp_path: Path,
) -> None:
    before, names_before = _copy(tmp_path / "before", BEFORE)
    after, names_after = _copy(tmp_path / "after", AFTER)
    first = names_before[0]
    assert first in names_after  # the same name, now another mutation
    explained = mutant_fingerprint(first, before)
    assert explained is not None
    assert mutant_fingerprint(first, after) != explained
    # ... and the mutation it explained is still found, under its new number.
    moved = [n for n in names_after if mutant_fingerprint(n, after) == explained]
    assert len(moved) == 1
    assert moved != [first]


def test_every_mutant_of_a_function_has_its_own_fingerprint(tmp_path: Path) -> None:
    copy, names = _copy(tmp_path / "copy", AFTER)
    prints = [mutant_fingerprint(n, copy) for n in names]
    assert None not in prints
    assert len(set(prints)) == len(names) > 2


def test_a_name_mutmut_does_not_make_has_no_fingerprint(tmp_path: Path) -> None:
    copy, names = _copy(tmp_path / "copy", BEFORE)
    assert mutant_fingerprint(names[0].replace("_1", "_999"), copy) is None
    assert mutant_fingerprint("other.x_share__mutmut_1", copy) is None


def test_record_writes_missing_fingerprints_and_keeps_the_ones_written(tmp_path: Path) -> None:
    _, names = _copy(tmp_path / "work" / "group", AFTER)
    method = next(n for n in names if "ǁBudgetǁleft" in n)
    listed = tmp_path / "equivalent.txt"
    listed.write_text(
        "# header kept\n"
        "calc.x_share__mutmut_1  # the first\n"
        "calc.x_share__mutmut_2 @00000000  # written by hand: never overwritten\n"
        "gone.x_f__mutmut_1  # its module is in no copy\n"
        f"{method}  # a method's mutant\n",
        encoding="utf-8",
    )
    assert record(listed, tmp_path / "work") == ["gone.x_f__mutmut_1"]
    entries = {e.name: e for e in read_entries(listed)}
    written = mutant_fingerprint("calc.x_share__mutmut_1", tmp_path / "work" / "group")
    assert entries["calc.x_share__mutmut_1"].fingerprint == written
    assert entries["calc.x_share__mutmut_1"].why == "the first"
    assert entries["calc.x_share__mutmut_2"].fingerprint == "00000000"
    assert entries[method].fingerprint == mutant_fingerprint(method, tmp_path / "work" / "group")
    assert entries[method].fingerprint is not None
    assert listed.read_text(encoding="utf-8").startswith("# header kept\n")


@pytest.mark.parametrize(
    "line",
    [
        "calc.x_share__mutmut_1",  # no reason
        "calc.x_share__mutmut_1  #   ",  # an empty reason
        "calc.x_share__mutmut_1 @12  # a fingerprint of the wrong length",
    ],
)
def test_an_entry_without_a_reason_or_with_a_malformed_fingerprint_is_refused(
    tmp_path: Path, line: str
) -> None:
    listed = tmp_path / "equivalent.txt"
    listed.write_text(f"{line}\n", encoding="utf-8")
    with pytest.raises(EntryError, match=r"equivalent\.txt:1"):
        read_entries(listed)


def test_the_repositorys_entries_each_name_one_mutant_with_a_reason() -> None:
    entries = read_entries(EQUIVALENT)
    names = [e.name for e in entries]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert all(e.name.startswith("agent_telemetry.") for e in entries)
