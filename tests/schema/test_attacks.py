"""Every way found to get an identifier past the definition rules is refused when the
class is defined, with the exact rule ID; the table drives the rules' own coverage."""

from __future__ import annotations

import pytest

from agent_telemetry.errors import SchemaRuleError
from agent_telemetry.schema.rules import RULES
from tests.schema.attacks import ATTACKS, Attack, define


# pydantic warns about the v1 hook the custom-type-v1-validators row uses; that row is
# refused all the same.
@pytest.mark.filterwarnings("ignore:.*__get_validators__:DeprecationWarning")
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_each_attack_is_refused_at_definition_by_its_rule(attack: Attack) -> None:
    with pytest.raises(SchemaRuleError) as caught:
        define(attack.source)
    assert caught.value.rule == attack.rule, caught.value
    assert caught.value.field == attack.field
    assert attack.rule in str(caught.value)


def test_attack_ids_are_unique() -> None:
    ids = [a.id for a in ATTACKS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("rule", [r.id for r in RULES])
def test_every_rule_has_a_refusing_example_in_the_attack_table(rule: str) -> None:
    assert any(a.rule == rule for a in ATTACKS)


def test_every_attack_names_a_rule_of_the_table() -> None:
    assert {a.rule for a in ATTACKS} <= {r.id for r in RULES}


def test_a_metaclass_of_its_own_is_refused_by_name() -> None:
    (attack,) = [a for a in ATTACKS if a.id == "override-metaclass"]
    with pytest.raises(SchemaRuleError) as caught:
        define(attack.source)
    assert caught.value.detail == "metaclass Forging: an event's class is pydantic's own"
