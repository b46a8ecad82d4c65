"""The four catalogue events, exactly as docs/design.md lists them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_telemetry.schema import EVENTS, catalogue, event_spec

# docs/design.md, "The event catalogue": field -> (kind, required, members or (ge, le)).
EXPECTED: dict[str, dict[str, tuple[str, bool, Any]]] = {
    "pipeline_run": {
        "lane": ("enum", True, ("public", "admin", "premium")),
        "status": ("enum", True, ("ok", "needs_attention", "failed", "not_ready")),
        "reason": (
            "enum",
            False,
            (
                "validation",
                "render",
                "deadline",
                "budget",
                "error",
                "busy",
                "capacity",
                "no_dataset",
                "incomplete_bindings",
                "stalled",
            ),
        ),
        "error_class": (
            "enum",
            False,
            (
                "timeout",
                "rate_limited",
                "quota_exhausted",
                "model_overloaded",
                "renderer_unavailable",
                "render_busy",
                "validation",
                "upstream",
                "cancelled",
                "other",
            ),
        ),
        "queue_wait_ms": ("int", False, (0, 3_600_000)),
        "queue_position": ("int", False, (0, 60)),
        "user_runs_today": (
            "enum",
            False,
            ("1", "2_5", "6_10", "11_20", "21_30", "31_40", "41_plus"),
        ),
        "user_tokens_today": ("enum", False, ("lt25", "25_50", "50_75", "75_90", "90_100", "over")),
        "attempts": ("int", False, (0, 2)),
        "duration_ms": ("int", False, (0, 3_600_000)),
        "model_calls": ("int", False, (0, 200)),
        "provider": ("enum", False, ("anthropic", "vertex", "openai", "ollama", "other")),
    },
    "chat_turn": {
        "tier": ("enum", True, ("public", "admin")),
        "kind": ("enum", True, ("text", "action")),
        "refusal": (
            "enum",
            False,
            ("out_of_scope", "budget", "unsupported_content", "run_limit", "strike", "capacity"),
        ),
        "error": (
            "enum",
            False,
            (
                "capacity",
                "busy",
                "deadline",
                "guard_unavailable",
                "upstream",
                "run_limit",
                "internal",
            ),
        ),
        "duration_ms": ("int", False, (0, 3_600_000)),
        "model_calls": ("int", False, (0, 200)),
        "pipeline_runs": ("int", False, (0, 60)),
    },
    "pipeline_render": {
        "theme": ("enum", True, ("light", "dark")),
        "render_lane": ("enum", True, ("run", "toggle")),
        "slot_wait_ms": ("int", False, (0, 120_000)),
        "render_ms": ("int", False, (0, 600_000)),
        "passed": ("bool", False, None),
        "attempt": ("int", False, (1, 2)),
    },
    "provider_status": {
        "provider": ("enum", True, ("anthropic", "vertex", "openai", "ollama", "other")),
        "state": ("enum", True, ("live", "rate_limited", "no_quota", "unreachable")),
        "probe": ("enum", True, ("preflight", "turn_outcome")),
        "retry_after_s": ("int", False, (0, 86_400)),
        "blocked_runs": ("int", False, (0, 60)),
    },
}


def test_catalogue_lists_exactly_the_designed_events() -> None:
    assert list(EVENTS) == list(EXPECTED)
    assert [spec.name for spec in catalogue()] == list(EXPECTED)


def test_events_mapping_is_read_only() -> None:
    with pytest.raises(TypeError):
        EVENTS["x"] = EVENTS["chat_turn"]  # type: ignore[index]


@pytest.mark.parametrize("event", list(EXPECTED))
def test_fields_match_the_design(event: str) -> None:
    spec = event_spec(EVENTS[event])
    assert spec.schema_version == 1
    assert spec.description
    assert spec.field_names == tuple(EXPECTED[event])
    for field in spec.fields:
        kind, required, domain = EXPECTED[event][field.name]
        assert (field.kind, field.required) == (kind, required), field.name
        assert field.description, field.name
        if kind == "enum":
            assert field.members == domain
        elif kind == "int":
            assert (field.ge, field.le) == domain


def _required_values(event: str) -> dict[str, Any]:
    return {
        name: domain[0] for name, (kind, required, domain) in EXPECTED[event].items() if required
    }


@pytest.mark.parametrize("event", list(EXPECTED))
def test_valid_extremes_are_accepted(event: str) -> None:
    model = EVENTS[event]
    for name, (kind, _required, domain) in EXPECTED[event].items():
        values: list[Any] = (
            list(domain) if kind == "enum" else [True, False] if kind == "bool" else list(domain)
        )
        for value in values:
            instance = model(**{**_required_values(event), name: value})
            assert getattr(instance, name) == value


def _invalid_values(kind: str, domain: Any) -> list[Any]:
    if kind == "enum":
        first = domain[0]
        lettered = next(m for m in domain if m.upper() != m)
        return [lettered.upper(), f" {first}", f"{first} ", "nope", 1, None]
    if kind == "int":
        ge, le = domain
        return [ge - 1, le + 1, float(ge), str(ge), True]
    return [1, 0, "true", None]


@pytest.mark.parametrize("event", list(EXPECTED))
def test_out_of_set_and_out_of_bound_values_are_rejected(event: str) -> None:
    model = EVENTS[event]
    for name, (kind, required, domain) in EXPECTED[event].items():
        for value in _invalid_values(kind, domain):
            if value is None and not required:
                continue  # None is "not known", valid for optional fields
            with pytest.raises(ValidationError) as caught:
                model(**{**_required_values(event), name: value})
            assert {err["loc"][0] for err in caught.value.errors()} == {name}


@pytest.mark.parametrize("event", list(EXPECTED))
def test_unknown_keys_and_mutation_are_rejected(event: str) -> None:
    model = EVENTS[event]
    with pytest.raises(ValidationError):
        model(**_required_values(event), user_name="x")
    instance = model(**_required_values(event))
    first = next(iter(_required_values(event)))
    with pytest.raises(ValidationError):
        setattr(instance, first, _required_values(event)[first])
