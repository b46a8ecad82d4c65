"""Two gaps mutation testing found in the emitter's tests.

An unknown key whose value is None is still an unknown key: flagged in ``unknown_fields``
(lenient) or reported as ``unknown_field`` (strict), on the hot path (``_fast_record``)
and on the model path (``check``) alike; a hot path that let the validator drop it as
"an optional None" would hide it.

Fields whose values raise in ``__eq__``/``__hash__`` make pydantic itself raise, so the
culprits are found field by field: every one of them is named in ``invalid_fields``.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from agent_telemetry.emit import TelemetryValidationError, emit
from agent_telemetry.emit._validate import check, plan_by_name
from agent_telemetry.schema import ChatTurn
from tests.emit.conftest import lines
from tests.emit.test_lenient import Hostile, HostileInt, HostileStr

SECRET = "alice@example.com"
VALID = {"tier": "public", "kind": "text"}


def test_the_hot_path_does_not_accept_an_unknown_key_whose_value_is_none() -> None:
    plan = plan_by_name("chat_turn")
    assert plan is not None
    assert plan.fast is not None
    fast = plan.fast
    assert fast(dict(VALID))["kind"] == "text"
    with pytest.raises(Exception):  # noqa: B017, PT011 - any exception: the model decides
        fast({**VALID, SECRET: None})


@pytest.mark.parametrize("extra", [{SECRET: None}, {SECRET: None, "other": None}])
def test_lenient_counts_an_unknown_key_whose_value_is_none(
    lenient: io.StringIO, extra: dict[str, None]
) -> None:
    record = emit("chat_turn", **VALID, **extra)
    (line,) = lines(lenient)
    assert line == record
    assert line["unknown_fields"] == 1  # a flag: never how many
    assert "invalid_fields" not in line
    assert (line["tier"], line["kind"]) == ("public", "text")
    assert SECRET not in lenient.getvalue()


def test_strict_raises_on_an_unknown_key_whose_value_is_none(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as info:
        emit("chat_turn", **VALID, **{SECRET: None})
    assert str(info.value) == "chat_turn: unknown_field"
    assert SECRET not in str(info.value)
    assert strict.getvalue() == ""


@pytest.mark.parametrize("strict", [False, True])
def test_the_model_path_counts_an_unknown_key_whose_value_is_none(strict: bool) -> None:
    plan = plan_by_name("chat_turn")
    assert plan is not None
    if strict:
        with pytest.raises(TelemetryValidationError) as info:
            check(plan, {**VALID, SECRET: None}, strict=True)
        assert [(p.field, p.rule, p.count) for p in info.value.problems] == [
            (None, "unknown_field", 1)
        ]
    else:
        values, invalid, unknown = check(plan, {**VALID, SECRET: None}, strict=False)
        assert (values, invalid, unknown) == (VALID, (), 1)


def test_the_model_path_counts_a_none_keyword_beside_an_instance(lenient: io.StringIO) -> None:
    emit(ChatTurn(tier="public", kind="text"), refusal=None)
    (line,) = lines(lenient)
    assert line["unknown_fields"] == 1
    assert "refusal" not in line


UNUSABLE: dict[str, Callable[[], object]] = {
    "hostile": Hostile,
    "hostile_str": lambda: HostileStr("zzz"),
}


@pytest.mark.parametrize("make", list(UNUSABLE.values()), ids=list(UNUSABLE))
def test_every_field_whose_value_raises_in_eq_or_hash_is_named(
    lenient: io.StringIO, make: Callable[[], object]
) -> None:
    record = emit("chat_turn", **VALID, refusal=make(), error=make(), duration_ms=make())
    (line,) = lines(lenient)
    assert line == record
    assert line["invalid_fields"] == ["refusal", "error", "duration_ms"]
    assert (line["tier"], line["kind"]) == ("public", "text")
    assert not {"refusal", "error", "duration_ms"} & set(line)


def test_three_unusable_values_next_to_a_valid_one_of_the_same_kind(
    lenient: io.StringIO,
) -> None:
    # A HostileInt in range is its int; the three raising values are all named.
    emit(
        "chat_turn",
        tier=HostileStr("public"),
        kind=HostileStr("zzz"),
        refusal=Hostile(),
        error=Hostile(),
        model_calls=HostileInt(5),
    )
    (line,) = lines(lenient)
    assert line["invalid_fields"] == ["kind", "refusal", "error"]
    assert (line["tier"], line["model_calls"]) == ("public", 5)


def test_strict_names_every_field_whose_value_raises_in_eq_or_hash(strict: io.StringIO) -> None:
    with pytest.raises(TelemetryValidationError) as info:
        emit("chat_turn", **VALID, refusal=Hostile(), error=Hostile(), duration_ms=Hostile())
    named = [p.field for p in info.value.problems]
    assert named == ["refusal", "error", "duration_ms"]
    assert strict.getvalue() == ""
