"""An ``[[exceptions]]`` entry is a reviewed promise: it must name a rule that can be
excepted and say why. What the user reads when it does not, word for word."""

from __future__ import annotations

import pytest

from agent_telemetry.config import ConfigError, parse_config

PLACES = {
    "source": {"project": "acme-agents-prod", "dataset": "agent_logs"},
    "target": {"project": "acme-agents-prod", "dataset": "agent_telemetry"},
}


def _refusal(entry: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config({**PLACES, "exceptions": [entry]}, "telemetry.toml")
    return str(caught.value)


def test_an_exception_for_an_unknown_rule_lists_the_rules_that_can_be_excepted() -> None:
    entry = {"rule": "FIELD_PRECISION", "event": "e", "field": "f", "reason": "r"}
    assert _refusal(entry) == (
        "telemetry.toml: exceptions[0].rule: not a compatibility rule that can be excepted; "
        "one of: EVENT_NO_DELETE, FIELD_NO_DELETE, FIELD_SAME_TYPE, FIELD_NO_REQUIRED_ADD, "
        "FIELD_SAME_REQUIREDNESS, ENUM_VALUE_NO_DELETE, ENUM_VALUE_SAME_SPELLING, "
        "BOUND_NO_NARROW, COLUMN_ORDER_APPEND_ONLY, SINK_COLUMN_SAME_TYPE"
    )


def test_an_exception_with_a_blank_reason_asks_why() -> None:
    entry = {"rule": "BOUND_NO_NARROW", "event": "e", "field": "f", "reason": " \t\n"}
    assert _refusal(entry) == (
        "telemetry.toml: exceptions[0].reason: empty: say why breaking readers is acceptable"
    )


def test_a_reason_is_kept_without_its_surrounding_blanks() -> None:
    entry = {"rule": "BOUND_NO_NARROW", "event": "e", "field": "f", "reason": " Reviewed in #12.\n"}
    (kept,) = parse_config({**PLACES, "exceptions": [entry]}).exceptions
    assert kept.reason == "Reviewed in #12."
