"""Each definition rule rejects a model that breaks it, naming class, field and rule."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

import pytest
from pydantic import ConfigDict, Field

from agent_telemetry.schema import SchemaRuleError, TelemetryEvent, count, flag
from agent_telemetry.schema.rules import RULES


def define(name: str = "probe_event", doc: str | None = "A probe.", **fields: Any) -> type:
    """Define a TelemetryEvent subclass with the given (annotation, default) fields."""
    namespace: dict[str, Any] = {
        "__annotations__": {"event_name": ClassVar[str], "schema_version": ClassVar[int]},
        "event_name": name,
        "schema_version": 1,
        "__doc__": doc,
    }
    for field_name, (annotation, default) in fields.items():
        namespace["__annotations__"][field_name] = annotation
        namespace[field_name] = default
    return type("Probe", (TelemetryEvent,), namespace)


def assert_rule(rule: str, field: str | None, **kwargs: Any) -> None:
    with pytest.raises(SchemaRuleError) as caught:
        define(**kwargs)
    assert caught.value.rule == rule
    assert caught.value.field == field
    assert rule in str(caught.value)
    assert "Probe" in str(caught.value)


def desc(text: str = "A field.") -> Any:
    return Field(None, description=text)


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


def test_a_well_formed_model_is_accepted() -> None:
    model = define(
        color=(Color, Field(description="Colour.")),
        size=(Literal["s", "m"] | None, desc()),
        n=(int | None, count(0, 9, "Count.")),
        ok=(bool | None, flag("Flag.")),
    )
    assert model(color="red").model_dump(exclude_none=True) == {"color": Color.RED}


@pytest.mark.parametrize(
    ("annotation", "what"),
    [
        (str | None, "free str"),
        (float | None, "float"),
        (dict[str, int] | None, "dict"),
        (list[str] | None, "list"),
    ],
)
def test_free_types_are_rejected(annotation: Any, what: str) -> None:
    with pytest.raises(SchemaRuleError, match="FIELD_TYPE") as caught:
        define(field=(annotation, desc()))
    assert what in str(caught.value)


def test_nested_models_are_rejected() -> None:
    inner = define(name="inner_event", color=(Color, Field(description="c")))
    assert_rule("FIELD_TYPE", "nested", nested=(inner | None, desc()))


def test_unbounded_int_is_rejected() -> None:
    assert_rule("INT_BOUNDED", "n", n=(int | None, Field(None, strict=True, description="n")))


def test_one_sided_int_is_rejected() -> None:
    assert_rule("INT_BOUNDED", "n", n=(int | None, Field(None, ge=0, strict=True, description="n")))


def test_lax_int_is_rejected() -> None:
    assert_rule("FIELD_STRICT", "n", n=(int | None, Field(None, ge=0, le=5, description="n")))


@pytest.mark.parametrize(
    ("name", "segment"),
    [
        ("user_id", "id"),
        ("session_hash", "session"),
        ("api_key", "key"),
        ("client_ip", "ip"),
        ("owner_email", "email"),
        ("request_uuid", "uuid"),
    ],
)
def test_identifier_segments_are_rejected(name: str, segment: str) -> None:
    with pytest.raises(SchemaRuleError, match="FIELD_NAME_NO_IDENTIFIER") as caught:
        define(**{name: (Color | None, desc())})
    assert caught.value.field == name
    assert repr(segment) in str(caught.value)


def test_identifier_words_inside_a_segment_are_fine() -> None:
    # user_tokens_today: segments user, tokens, today; "tokens" is not "key".
    define(user_tokens_today=(Color | None, desc()), keyboard_layout=(Color | None, desc()))


@pytest.mark.parametrize("name", ["Lane", "queueWait", "double__underscore", "a" * 65])
def test_names_must_be_snake_case(name: str) -> None:
    with pytest.raises(SchemaRuleError, match=r"FIELD_NAME_FORMAT|FIELD_TYPE"):
        define(**{name: (Color | None, desc())})


def test_envelope_names_are_reserved() -> None:
    assert_rule("FIELD_NAME_RESERVED", "severity", severity=(Color | None, desc()))


def test_names_colliding_after_sanitising_are_rejected() -> None:
    # Pydantic keeps both; BigQuery's sink would fold them into one column.
    assert_rule(
        "FIELD_NAME_UNIQUE",
        None,
        Lane=(Color | None, desc()),
        lane=(Color | None, desc()),
    )


@pytest.mark.parametrize(
    "member",
    [
        "Red",  # upper case
        "with space",
        "x" * 33,
    ],
)
def test_enum_members_must_match_format(member: str) -> None:
    assert_rule("ENUM_MEMBER_FORMAT", "color", color=(Literal[member, "ok"] | None, desc()))


@pytest.mark.parametrize(
    "member",
    [
        "deadbeefcafebabe",  # hex run of 16
        "a1b2c3d4e5f6g7h8i9",  # base64-like mixed run
        "tok_9f8a7b6c5d4e3f2a1b0c",  # an API-key-like token
    ],
)
def test_enum_members_that_look_like_identifiers_are_rejected(member: str) -> None:
    assert_rule("ENUM_MEMBER_NO_IDENTIFIER", "color", color=(Literal[member, "ok"] | None, desc()))


def test_long_plain_words_are_members() -> None:
    define(color=(Literal["internationalisation", "ok"] | None, desc()))


def test_fields_need_descriptions() -> None:
    assert_rule("FIELD_DESCRIPTION", "color", color=(Color | None, Field(None)))


def test_events_need_docstrings() -> None:
    assert_rule("EVENT_DESCRIPTION", None, doc=None, color=(Color | None, desc()))


def test_optional_fields_default_to_none() -> None:
    assert_rule("OPTIONAL_DEFAULT_NONE", "color", color=(Color, Field(Color.RED, description="c")))


def test_event_names_are_snake_case_and_not_reserved() -> None:
    assert_rule("EVENT_NAME", None, name="Pipeline-Run", color=(Color | None, desc()))
    assert_rule("EVENT_NAME", None, name="telemetry_rejected", color=(Color | None, desc()))


def test_config_cannot_allow_extra_keys() -> None:
    with pytest.raises(SchemaRuleError, match="MODEL_CONFIG"):

        class Loose(TelemetryEvent):
            """Loose."""

            model_config = ConfigDict(extra="allow", frozen=True)
            event_name: ClassVar[str] = "loose"
            schema_version: ClassVar[int] = 1


def test_every_rule_in_the_catalogue_has_a_test() -> None:
    tested = {
        "EVENT_NAME",
        "EVENT_VERSION",
        "EVENT_DESCRIPTION",
        "MODEL_CONFIG",
        "FIELD_NAME_UNIQUE",
        "FIELD_TYPE",
        "INT_BOUNDED",
        "FIELD_STRICT",
        "OPTIONAL_DEFAULT_NONE",
        "FIELD_NAME_FORMAT",
        "FIELD_NAME_RESERVED",
        "FIELD_NAME_NO_IDENTIFIER",
        "FIELD_DESCRIPTION",
        "ENUM_MEMBER_FORMAT",
        "ENUM_MEMBER_NO_IDENTIFIER",
    }
    assert {rule.id for rule in RULES} == tested


def test_schema_version_must_be_positive() -> None:
    with pytest.raises(SchemaRuleError, match="EVENT_VERSION"):

        class Zero(TelemetryEvent):
            """Zero."""

            event_name: ClassVar[str] = "zero"
            schema_version: ClassVar[int] = 0
