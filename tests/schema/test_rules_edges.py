"""Edges of the definition rules that the main rule tests leave open.

What a model author or reviewer relies on, pinned at the boundaries:

- identifier words split across segments are refused at the exact place they cross
  (one letter over the cut, at the end of the name, inside an ordinary word that repeats
  them), and ordinary names that merely touch a cut (``data_serialization``,
  ``api_p99_ms``) are accepted;
- each rule's detail is pinned word for word: it is the author's only hint of what to
  do, and it names fields and rules, never a value;
- the model rules see what hides behind a mixin, a copied ``__hash__`` or a marker
  that pretends to be pydantic's, and the cardinality budget is inclusive.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_core import core_schema

from agent_telemetry.schema import SchemaRuleError, TelemetryEvent, count
from agent_telemetry.schema.coreschema import Problem, read_model
from agent_telemetry.schema.rules import FieldContext, ModelContext, _problem
from agent_telemetry.schema.spec import CARDINALITY_BUDGET, CardinalityWaiver
from tests.schema.test_rules import define, desc

CLOSED = Literal["a", "b"] | None


def refusal(**kwargs: Any) -> SchemaRuleError:
    """The error defining the probe model raises (it must raise one)."""
    with pytest.raises(SchemaRuleError) as caught:
        define(**kwargs)
    return caught.value


def refused(make: Any) -> SchemaRuleError:
    with pytest.raises(SchemaRuleError) as caught:
        make()
    return caught.value


# --- identifier words across segments ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("tokenhas_h", "hash"),  # a suffix word one letter over the cut, at the end
        ("xpasswor_d", "password"),  # an anywhere word one letter over the cut
        ("pass_wordlist", "password"),  # an anywhere word across the cut, not at the end
        ("headphon_earphone", "phone"),  # crosses first; the later "phone" is ordinary
    ],
)
def test_a_word_split_across_segments_is_refused_with_the_word(name: str, word: str) -> None:
    error = refusal(**{name: (CLOSED, desc())})
    assert (error.rule, error.field) == ("FIELD_NAME_NO_IDENTIFIER", name)
    assert f"the identifier word {word!r}" in error.detail


@pytest.mark.parametrize(
    "name",
    [
        "data_serialization",  # "serial" starts right at the cut: in one ordinary segment
        "word_phonemes",  # the same for "phone"
        "possession_time_ms",  # "session" ends at the first cut, not the second
        "api_p99_ms",  # "ip" across a cut is looked for only with a qualifier in front
    ],
)
def test_an_ordinary_name_touching_a_cut_is_accepted(name: str) -> None:
    model = define(**{name: (CLOSED, desc())})
    assert name in model.model_fields


# --- each detail, word for word --------------------------------------------------------


class Aliased(StrEnum):
    A = "a"
    B = "a"  # an alias: pydantic's schema has one member, the annotation two


DETAILS: list[tuple[dict[str, Any], str, str | None, str]] = [
    (
        {"name": "Bad"},
        "EVENT_NAME",
        None,
        "event_name must be lowercase snake_case, at most 64 characters",
    ),
    (
        {"name": "telemetry_rejected"},
        "EVENT_NAME",
        None,
        "event_name 'telemetry_rejected' is reserved for the emitter",
    ),
    (
        {"doc": "  ", "s": (CLOSED, desc())},
        "EVENT_DESCRIPTION",
        None,
        "the event needs a docstring (it becomes the view description)",
    ),
    (
        {"fooBar": (CLOSED, desc()), "foobar": (CLOSED, desc())},
        "FIELD_NAME_UNIQUE",
        None,
        "fields 'fooBar' and 'foobar' land in the same sink column",
    ),
    (
        {"na_ve": (CLOSED, desc()), "na\u00efve": (CLOSED, desc())},
        "FIELD_NAME_UNIQUE",
        None,
        "fields 'na_ve' and 'na\u00efve' land in the same sink column",
    ),
    (
        {"s": (str | None, desc())},
        "FIELD_TYPE",
        "s",
        "type is free str; allowed: a closed set of strings (Literal/StrEnum), "
        "int with ge and le, bool, or Optional of one of those",
    ),
    (
        {"n": (int | None, Field(None, ge=0, strict=True, description="N."))},
        "INT_BOUNDED",
        "n",
        "an int needs both ge and le bounds",
    ),
    (
        {"n": (int | None, Field(None, ge=5, le=1, strict=True, description="N."))},
        "INT_BOUNDED",
        "n",
        "ge is greater than le",
    ),
    (
        {"n": (int | None, count(0, 2**60, "N."))},
        "INT_SAFE_RANGE",
        "n",
        "bounds must lie within +-(2**53 - 1): Cloud Logging keeps JSON numbers as "
        "doubles, so a larger int arrives changed",
    ),
    (
        {"n": (int | None, count(0, CARDINALITY_BUDGET, "N."))},
        "INT_CARDINALITY",
        "n",
        f"{CARDINALITY_BUDGET + 1:,} possible values exceed the budget of "
        f"{CARDINALITY_BUDGET:,}: a domain that wide can carry a user number; narrow it, "
        'or add count(..., waiver="why")',
    ),
    (
        {"n": (int | None, count(0, 9, "N.", waiver="  "))},
        "INT_CARDINALITY",
        "n",
        "the cardinality waiver needs the reason it was reviewed",
    ),
    (
        {"n": (int | None, count(0, 9, "N.", waiver="reviewed"))},
        "INT_PRECISION",
        "n",
        "the field is within 16 bits: remove the waiver",
    ),
    (
        {
            "b": (
                Annotated[bool | None, CardinalityWaiver("reviewed")],
                Field(None, strict=True, description="B."),
            )
        },
        "INT_CARDINALITY",
        "b",
        "a cardinality waiver belongs on a bounded int (count(..., waiver=...))",
    ),
    (
        {"s": (CLOSED, Field("a", description="S."))},
        "OPTIONAL_DEFAULT_NONE",
        "s",
        "an optional field must default to None",
    ),
    (
        {"timestamp": (CLOSED, desc())},
        "FIELD_NAME_RESERVED",
        "timestamp",
        "the name is an envelope key every line already carries",
    ),
    (
        {"user_id": (CLOSED, desc())},
        "FIELD_NAME_NO_IDENTIFIER",
        "user_id",
        "the name holds the identifier word 'id'; telemetry carries none. Rename it, "
        "or, if it is no identifier, list it in the event's reviewed_names with a reason",
    ),
    (
        {"s": (CLOSED, Field(None))},
        "FIELD_DESCRIPTION",
        "s",
        "every field needs a description (it becomes the column description)",
    ),
    (
        {"s": (Literal["Red"] | None, desc())},
        "ENUM_MEMBER_FORMAT",
        "s",
        "members match [a-z0-9_]{1,32}",
    ),
    (
        {"s": (Literal["0123456789abcdef"] | None, desc())},
        "ENUM_MEMBER_NO_IDENTIFIER",
        "s",
        "a member looks like an identifier (hex/base64 run, uuid or email)",
    ),
    (
        {"s": (Aliased | None, desc())},
        "FIELD_CORE_SCHEMA",
        "s",
        "the enum schema's members are not the declared set",
    ),
    (
        {"size": (CLOSED, desc()), "reviewed_names": ["size"]},
        "NAME_REVIEWED",
        None,
        "reviewed_names maps field names to the reason each was reviewed",
    ),
    (
        {"size": (CLOSED, desc()), "reviewed_names": {"size": None}},
        "NAME_REVIEWED",
        None,
        "reviewed_names['size'] needs the reason it was reviewed",
    ),
    (
        {"size": (CLOSED, desc()), "reviewed_names": {"size": "  "}},
        "NAME_REVIEWED",
        None,
        "reviewed_names['size'] needs the reason it was reviewed",
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "rule", "field", "detail"),
    DETAILS,
    ids=[f"{row[1]}-{i}" for i, row in enumerate(DETAILS)],
)
def test_each_rule_says_what_to_do_word_for_word(
    kwargs: dict[str, Any], rule: str, field: str | None, detail: str
) -> None:
    error = refusal(**kwargs)
    assert (error.rule, error.field, error.detail) == (rule, field, detail)
    assert str(error) == f"{'Probe.' + field if field else 'Probe'}: {rule}: {detail}"


def test_a_member_that_looks_like_an_identifier_is_never_echoed() -> None:
    error = refusal(s=(Literal["0123456789abcdef"] | None, desc()))
    assert "0123456789abcdef" not in str(error)


def test_a_bad_config_and_a_bad_version_say_what_to_do() -> None:
    def config() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            model_config = ConfigDict(strict=True)
            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1

    error = refused(config)
    assert (error.rule, error.detail) == (
        "MODEL_CONFIG",
        'model_config must stay the base\'s (extra="forbid", frozen=True, nothing else)',
    )

    def version() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 0

    error = refused(version)
    assert (error.rule, error.detail) == ("EVENT_VERSION", "schema_version must be an int >= 1")


# --- model rules: what the check must still see ----------------------------------------


def test_an_event_without_a_schema_version_is_refused_by_the_rule() -> None:
    def make() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            s: CLOSED = Field(None, description="S.")

    error = refused(make)
    assert (error.rule, error.detail) == ("EVENT_VERSION", "schema_version must be an int >= 1")


def test_a_title_is_the_one_config_setting_an_event_may_add() -> None:
    class Probe(TelemetryEvent):
        """A probe."""

        model_config = ConfigDict(title="Pretty probe")
        event_name: ClassVar[str] = "probe_event"
        schema_version: ClassVar[int] = 1
        s: CLOSED = Field(None, description="S.")

    assert Probe.model_config.get("title") == "Pretty probe"


class _Mixin:
    def leak(self) -> str:
        return "a value"


def test_a_method_from_a_mixin_listed_after_the_base_is_refused_and_placed() -> None:
    # In the MRO the mixin comes after TelemetryEvent and BaseModel.
    def make() -> None:
        class Probe(TelemetryEvent, _Mixin):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1

    error = refused(make)
    assert (error.rule, error.field, error.detail) == (
        "MODEL_OVERRIDE",
        None,
        "leak (in _Mixin): an event defines no methods, properties or hooks",
    )


def test_a_method_of_the_event_itself_is_refused_without_a_place() -> None:
    def make() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1

            def leak(self) -> str:
                return "a value"

    error = refused(make)
    assert (error.rule, error.detail) == (
        "MODEL_OVERRIDE",
        "leak: an event defines no methods, properties or hooks",
    )


def test_an_own_hash_is_refused() -> None:
    def make() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1

            def __hash__(self) -> int:
                return 0

    error = refused(make)
    assert (error.rule, error.detail) == (
        "MODEL_OVERRIDE",
        "__hash__: an event defines no methods, properties or hooks",
    )


def test_a_hash_without_a_module_is_refused() -> None:
    # object.__hash__ is a slot wrapper: it has no __module__ at all.
    def make() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1
            __hash__ = object.__hash__

    error = refused(make)
    assert (error.rule, error.detail) == (
        "MODEL_OVERRIDE",
        "__hash__: an event defines no methods, properties or hooks",
    )


def test_a_copied_pydantic_hash_does_not_hide_the_methods_after_it() -> None:
    def make() -> None:
        class Probe(TelemetryEvent):
            """A probe."""

            event_name: ClassVar[str] = "probe_event"
            schema_version: ClassVar[int] = 1
            __hash__ = TelemetryEvent.__hash__

            def leak(self) -> str:
                return "a value"

    error = refused(make)
    assert (error.rule, error.detail) == (
        "MODEL_OVERRIDE",
        "leak: an event defines no methods, properties or hooks",
    )


# --- field rules: custom types ----------------------------------------------------------


class _Leaky:
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return core_schema.str_schema()


class _Nested(BaseModel):
    x: int = 0


class _Marker:
    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return handler(source)


class _PosingMarker(_Marker):
    """A marker that claims pydantic's module on the instance."""

    def __init__(self) -> None:
        self.__module__ = "pydantic.functional_validators"


@pytest.mark.parametrize(
    ("annotation", "culprit"),
    [
        (_Leaky | None, "_Leaky"),
        (_Leaky | _Nested | None, "_Leaky"),  # the nested model is met first
        (Annotated[CLOSED, _Marker()], "_Marker"),
        (Annotated[CLOSED, _PosingMarker()], "_PosingMarker"),
    ],
)
def test_a_custom_type_or_marker_is_refused_by_name(annotation: Any, culprit: str) -> None:
    error = refusal(s=(annotation, desc()))
    assert (error.rule, error.field, error.detail) == (
        "FIELD_CUSTOM_TYPE",
        "s",
        f"{culprit} defines __get_pydantic_core_schema__: a custom type decides what is stored",
    )


def test_a_pydantic_type_is_refused_as_a_type_not_as_a_custom_type() -> None:
    error = refusal(s=(SecretStr | None, desc()))
    assert (error.rule, error.field) == ("FIELD_TYPE", "s")
    assert error.detail.startswith("type is SecretStr ")


def test_a_field_nested_in_the_annotation_is_accepted() -> None:
    annotation = Annotated[Literal["a"], Field(description="Inner.")] | None
    model = define(s=(annotation, desc()))
    assert "s" in model.model_fields


# --- the cardinality budget is inclusive ------------------------------------------------


def test_a_waiver_on_a_field_of_exactly_16_bits_is_refused() -> None:
    # 65,535 values and absence: 2**16 in all, the most a field says without a waiver.
    error = refusal(n=(int | None, count(1, 65_535, "N.", waiver="reviewed")))
    assert (error.rule, error.field, error.detail) == (
        "INT_PRECISION",
        "n",
        "the field is within 16 bits: remove the waiver",
    )


def test_one_value_more_than_16_bits_needs_a_precision() -> None:
    error = refusal(n=(int | None, count(0, 65_535, "N.")))
    assert (error.rule, error.field) == ("INT_PRECISION", "n")
    assert error.detail.startswith("16.0 bits: an int of more than 16 bits is a measurement")


# --- the problem checks, built at test time ---------------------------------------------
# RULES builds these checks when rules.py is imported; building one here pins what the
# table relies on: the first problem filed under the rule, from the field or the model.


def test_a_problem_check_reports_the_first_problem_of_its_rule() -> None:
    model = define(s=(CLOSED, desc()))
    schema = read_model(model)
    problems = (
        Problem("FIELD_STRICT", "other"),
        Problem("FIELD_VALIDATOR", "first"),
        Problem("FIELD_VALIDATOR", "second"),
    )
    info = model.model_fields["s"]
    field = FieldContext("Probe", "s", info, None, problems, None)
    check = _problem("FIELD_VALIDATOR")
    assert check(field) == "first"
    assert check(FieldContext("Probe", "s", info, None, (), None)) is None
    assert check(ModelContext(model, TelemetryEvent, schema)) is None
    model_problem = ModelContext(
        model, TelemetryEvent, replace(schema, problems=(Problem("FIELD_VALIDATOR", "m"),))
    )
    assert check(model_problem) == "m"


class _ForgedFreeText:
    """A marker that claims to be pydantic's own and makes the field free text."""

    __module__ = "pydantic.types"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return core_schema.str_schema()


@pytest.mark.parametrize(
    "annotation",
    [Literal["a", "b"], Annotated[int, Field(ge=0, le=5)]],
    ids=["closed-set", "bounded-int"],
)
def test_a_marker_forging_pydantics_module_still_cannot_make_free_text(annotation: Any) -> None:
    """FIELD_CUSTOM_TYPE trusts a class's ``__module__``; a forged one slips past it, but
    FIELD_CORE_SCHEMA reads what pydantic will run (a plain str) and refuses the field."""
    error = refusal(note=(Annotated[annotation, _ForgedFreeText()], desc("Note.")))
    assert (error.rule, error.field) == ("FIELD_CORE_SCHEMA", "note")
    assert str(error).startswith("Probe.note: FIELD_CORE_SCHEMA: pydantic runs a 'str' schema")
