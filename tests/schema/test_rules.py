"""Each definition rule rejects a model that breaks it, naming class, field and rule."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

import pytest
from pydantic import ConfigDict, Field

from agent_telemetry.schema import (
    EVENT_VERSIONS,
    FieldSpec,
    SchemaRuleError,
    TelemetryEvent,
    catalogue,
    count,
    events,
    flag,
)
from agent_telemetry.schema.coreschema import enum_problem, field_problems, read_model
from agent_telemetry.schema.identifiers import (
    GLUED,
    IDENTIFIER_WORDS,
    ORDINARY_WORDS,
    QUALIFIERS,
    identifier_word,
)
from agent_telemetry.schema.rules import looks_like_identifier
from agent_telemetry.schema.spec import CARDINALITY_BUDGET, MAX_SAFE_INT, rules_ran
from agent_telemetry.schema.versions import version_registry
from tests.schema.attacks import IDENTIFIER_WORDS_IN_TESTS


def define(
    name: str = "probe_event",
    doc: str | None = "A probe.",
    reviewed_names: dict[str, str] | None = None,
    **fields: Any,
) -> Any:
    """Define a TelemetryEvent subclass with the given (annotation, default) fields."""
    namespace: dict[str, Any] = {
        "__annotations__": {"event_name": ClassVar[str], "schema_version": ClassVar[int]},
        "event_name": name,
        "schema_version": 1,
        "__doc__": doc,
    }
    if reviewed_names is not None:
        namespace["reviewed_names"] = reviewed_names
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
    with pytest.raises(SchemaRuleError) as caught:
        define(field=(annotation, desc()))
    assert caught.value.rule == "FIELD_TYPE"
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
    with pytest.raises(SchemaRuleError) as caught:
        define(**{name: (Color | None, desc())})
    assert caught.value.rule == "FIELD_NAME_NO_IDENTIFIER"
    assert caught.value.field == name
    assert repr(segment) in str(caught.value)


def test_identifier_words_inside_a_segment_are_fine() -> None:
    # user_tokens_today: segments user, tokens, today; "tokens" is not "key".
    define(user_tokens_today=(Color | None, desc()), keyboard_layout=(Color | None, desc()))


@pytest.mark.parametrize("name", ["Lane", "queueWait", "double__underscore", "a" * 65])
def test_names_must_be_snake_case(name: str) -> None:
    assert_rule("FIELD_NAME_FORMAT", name, **{name: (Color | None, desc())})


def test_a_name_of_64_characters_is_accepted() -> None:
    name = "a" * 64
    assert define(**{name: (Color | None, desc())}).spec().field_names == (name,)


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
    with pytest.raises(SchemaRuleError) as caught:

        class Loose(TelemetryEvent):
            """Loose."""

            model_config = ConfigDict(extra="allow", frozen=True)
            event_name: ClassVar[str] = "loose"
            schema_version: ClassVar[int] = 1

    assert caught.value.rule == "MODEL_CONFIG"


def test_schema_version_must_be_positive() -> None:
    with pytest.raises(SchemaRuleError) as caught:

        class Zero(TelemetryEvent):
            """Zero."""

            event_name: ClassVar[str] = "zero"
            schema_version: ClassVar[int] = 0

    assert caught.value.rule == "EVENT_VERSION"


# --- identifiers, numbers and reviewed exceptions ------------------------------------------


def test_the_identifier_word_list_is_pinned_word_for_word() -> None:
    # Each word also has refusing rows in the attack table (bare, owner_<w>, owner<w>).
    assert set(IDENTIFIER_WORDS_IN_TESTS) == IDENTIFIER_WORDS
    assert set(GLUED) == IDENTIFIER_WORDS


@pytest.mark.parametrize(
    "name",
    [
        "user_runs_today",
        "user_tokens_today",
        "model_calls",
        "keyboard_layout",
        "valid_count",
        "paid_runs",
        "monkey_count",
        "hashtag_count",
        "pipeline_runs",
        "ownership_changes",
        "shadow_ms",
        "guidance_shown",
        "serialize_ms",
        "input_tokens",
        "token_budget_share",
        "cache_hit",
        "voicemail_count",
        "possessions",
    ],
)
def test_ordinary_words_of_this_domain_are_legal_names(name: str) -> None:
    assert identifier_word(name) is None
    define(**{name: (Color | None, desc())})


def test_every_catalogue_field_name_carries_no_identifier_word() -> None:
    for spec in catalogue():
        for field in spec.fields:
            assert identifier_word(field.name) is None, field.name
            assert field.name_review is None, field.name
            assert field.waiver is None, field.name


@pytest.mark.parametrize("word", sorted(ORDINARY_WORDS))
def test_each_ordinary_word_is_a_legal_segment(word: str) -> None:
    assert identifier_word(f"{word}_count") is None
    assert identifier_word(f"{word}s") is None  # and its plural


@pytest.mark.parametrize("word", sorted(ORDINARY_WORDS))
def test_no_ordinary_word_is_itself_an_identifier(word: str) -> None:
    assert word not in IDENTIFIER_WORDS
    assert not any(word == q + w for q in QUALIFIERS for w in IDENTIFIER_WORDS)


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("valid_id", "id"),  # an ordinary segment excuses nothing next to it
        ("paid_user_id", "id"),
        ("myaccess_token", "accesstoken"),  # glued across a segment boundary
        ("my_refresh_token", "refreshtoken"),
        ("the_username", "username"),
        ("user2id", "id"),  # digits split too
    ],
)
def test_identifier_words_are_found_across_segments(name: str, word: str) -> None:
    assert identifier_word(name) == word


def test_a_reviewed_name_passes_and_is_recorded() -> None:
    model = define(
        owner_key=(Color | None, desc()),
        reviewed_names={"owner_key": "the key of a colour map, not a credential"},
    )
    spec = model.spec().field("owner_key")
    assert spec.name_review == "the key of a colour map, not a credential"


def test_ge_equal_to_le_is_a_legal_bound() -> None:
    spec = define(n=(int | None, count(5, 5, "Always five."))).spec().field("n")
    assert (spec.ge, spec.le) == (5, 5)


@pytest.mark.parametrize(
    ("ge", "le", "waiver"),
    [
        (0, 9_999_999, "over 16 bits"),  # exactly the budget: 10,000,000 values
        (-(2**53) + 1, -(2**53) + 10, None),
        (2**53 - 10, 2**53 - 1, None),
    ],
)
def test_bounds_within_the_budget_and_the_safe_range_are_legal(
    ge: int, le: int, waiver: str | None
) -> None:
    define(n=(int | None, count(ge, le, "N.", waiver=waiver)))


def test_a_waiver_lets_a_wide_domain_through_and_is_recorded() -> None:
    model = define(n=(int | None, count(0, 2**53 - 1, "N.", waiver="bytes read, bucketed later")))
    assert model.spec().field("n").waiver == "bytes read, bucketed later"


def test_the_budget_is_ten_million_values() -> None:
    assert CARDINALITY_BUDGET == 10_000_000
    assert MAX_SAFE_INT == 2**53 - 1


def test_an_email_looks_like_an_identifier() -> None:
    # Members cannot hold "@" (ENUM_MEMBER_FORMAT), so the function is pinned directly.
    assert looks_like_identifier("someone@example.com")
    assert not looks_like_identifier("someone_example_com")


def test_the_schema_reader_refuses_gt_beside_ge_and_le() -> None:
    # FIELD_TYPE refuses gt/lt from the annotation first; this pins the second layer.
    read = read_model(define(n=(int | None, count(0, 5, "N."))))
    field = dict(read.fields["n"])
    leaf = {"type": "int", "ge": 0, "le": 5, "gt": -1, "strict": True}
    field["schema"] = {
        "type": "default",
        "default": None,
        "schema": {"type": "nullable", "schema": leaf},
    }
    spec = FieldSpec("n", "int", False, "N.", ge=0, le=5)
    assert [p.rule for p in field_problems(field, read.reader, spec)] == ["FIELD_CORE_SCHEMA"]


@pytest.mark.parametrize(
    "enum_class",
    [c for c in vars(events).values() if isinstance(c, type) and issubclass(c, StrEnum)],
)
def test_every_catalogue_enum_is_plain(enum_class: type) -> None:
    assert enum_problem(enum_class) is None


def test_the_definition_rules_run_on_every_catalogue_model() -> None:
    # The registry refuses a model the rules never ran on (a base replaced the hook).
    assert all(rules_ran(model) for model in EVENT_VERSIONS.values())


def test_a_class_that_skipped_the_rules_is_refused_by_the_registry() -> None:
    model = define(name="skipped", color=(Color | None, desc()))
    delattr(model, "__event_spec__")  # as if a base had replaced the hook that runs them
    with pytest.raises(SchemaRuleError) as caught:
        version_registry([model])
    assert caught.value.rule == "MODEL_OVERRIDE"
