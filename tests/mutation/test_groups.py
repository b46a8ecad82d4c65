"""`make mutation` covers every module of the package: each is mutated by exactly one
group, and no group names a module that does not exist (scripts/mutation.py GROUPS)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from scripts.mutation import GROUPS, OPT_IN, group_of

REPO = Path(__file__).resolve().parents[2]


def _modules() -> set[str]:
    package = REPO / "agent_telemetry"
    return {p.relative_to(REPO).as_posix() for p in package.rglob("*.py")}


def test_every_module_is_in_exactly_one_group() -> None:
    named = Counter(m for group in GROUPS.values() for m in group.modules)
    assert sorted(_modules() - set(named)) == []  # add a new module to a group
    assert [m for m, n in named.items() if n > 1] == []
    assert sorted(set(named) - _modules()) == []  # a module moved or gone


def test_the_new_modules_have_groups_of_their_own_in_the_default_run() -> None:
    for module, group in (
        ("agent_telemetry/_text.py", "text"),
        ("agent_telemetry/_files.py", "files"),
        ("agent_telemetry/check/_init.py", "check-init"),
        ("agent_telemetry/schema/lock.py", "capacity"),
        ("agent_telemetry/warehouse/_judging/copies.py", "warehouse-copies"),
        ("agent_telemetry/views/_lanes.py", "lanes"),
        ("agent_telemetry/report/charts.py", "report"),
        ("agent_telemetry/deploy/cli.py", "deploy-cli"),
    ):
        assert group_of(module) == group
        assert group not in OPT_IN
    assert group_of("agent_telemetry/deploy/_client.py") == "deploy-server"
