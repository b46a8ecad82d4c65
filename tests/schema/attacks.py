"""The attack table: one model source per way to break a definition rule.

Each row is Python source that defines an event class ``Attack`` (and whatever helper
types it needs). The same source is defined in-process (``define``) and appended to a
copy of the repository's ``events.py`` for ``agent-telemetry check``
(tests/check/test_rule_gate.py), so both see exactly the same model. Rows name the one
rule the model breaks (the first in ``RULES`` order) and the field it breaks it at.
"""

from __future__ import annotations

import sys
import textwrap
import types
from dataclasses import dataclass

# What every row may use; appended to events.py as is (events.py has ChatTier, Lane,
# TurnKind, Field, ClassVar, StrEnum, TelemetryEvent, count and flag already).
IMPORTS = """\
import enum as _enum
from typing import Annotated, Any, Literal
from pydantic import (
    AfterValidator, BaseModel, BeforeValidator, ConfigDict, PlainSerializer, PlainValidator,
    WrapSerializer, WrapValidator, computed_field, field_serializer, field_validator,
    model_serializer, model_validator,
)
from pydantic_core import core_schema as _core_schema
from agent_telemetry.schema.spec import CardinalityWaiver, DataReview, Precision
"""

# For rows defined in-process: the names events.py already has.
HEADER = """\
from __future__ import annotations
from enum import StrEnum
from typing import ClassVar
from pydantic import Field
from agent_telemetry.schema import TelemetryEvent, count, flag
from agent_telemetry.schema.events import ChatTier, Lane, TurnKind
"""


@dataclass(frozen=True)
class Attack:
    id: str
    rule: str
    field: str | None
    source: str  # defines class Attack (and helpers), indented at module level


def event(
    fields: str,
    *,
    pre: str = "",
    body: str = "",
    name: str = "attack_event",
    version: str = "1",
    doc: str | None = "An attack.",
    bases: str = "TelemetryEvent",
) -> str:
    """Source of an event class ``Attack`` with the given field lines and methods."""
    lines = [textwrap.dedent(pre).strip(), "", "", f"class Attack({bases}):"]
    if doc is not None:
        lines.append(f'    """{doc}"""')
        lines.append("")
    lines.append(f'    event_name: ClassVar[str] = "{name}"')
    lines.append(f"    schema_version: ClassVar[int] = {version}")
    lines.append("")
    lines.append(textwrap.indent(textwrap.dedent(fields).strip(), "    "))
    if body:
        lines.append("")
        lines.append(textwrap.indent(textwrap.dedent(body).strip(), "    "))
    return "\n".join(lines).strip() + "\n"


def define(source: str) -> type:
    """Define the row's classes in a fresh module, as events.py would; return ``Attack``."""
    module = types.ModuleType("attack_models")
    sys.modules[module.__name__] = module
    try:
        exec(compile(HEADER + IMPORTS + source, "<attack>", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    model: type = module.Attack
    return model


OK_FIELD = 'tier: ChatTier = Field(description="Tier of the caller.")'
DESC = 'description="A field."'


def _name_rows() -> list[Attack]:
    """Every identifier word, bare, in snake_case after a qualifier and glued to it."""
    rows = []
    for word in IDENTIFIER_WORDS_IN_TESTS:
        for form in (word, f"owner_{word}", f"owner{word}"):
            rows.append(
                Attack(
                    f"name-{form}",
                    "FIELD_NAME_NO_IDENTIFIER",
                    form,
                    event(f"{form}: Lane | None = Field(None, {DESC})"),
                )
            )
    return rows


# Pinned here, not read from the code: dropping a word there must fail a test.
IDENTIFIER_WORDS_IN_TESTS = [
    "id",
    "ids",
    "uid",
    "uuid",
    "guid",
    "userid",
    "username",
    "accountid",
    "serial",
    "fingerprint",
    "session",
    "cookie",
    "email",
    "mail",
    "phone",
    "address",
    "addr",
    "ip",
    "ipv",
    "imei",
    "msisdn",
    "ssn",
    "passport",
    "iban",
    "hash",
    "sha",
    "digest",
    "hmac",
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "credential",
    "jwt",
    "accesstoken",
    "authtoken",
    "apitoken",
    "refreshtoken",
]

# Names the issue found accepted, and split or glued forms of compound words.
LEAKY_NAMES = [
    "userid",
    "uid",
    "apikey",
    "access_token",
    "tokenhash",
    "ownerkey",
    "sessionkey",
    "phone",
    "ssn",
    "user_name",
    "user_id",
    "account_id",
    "api_key",
    "auth_token",
    "api_token",
    "refresh_token",
    "e_mail",
    "pass_word",
    "finger_print",
    "ip_address",
    "client_ip",
    "clientip",
    "remoteip",
    "filesha",
    "sha256",
    "ipv4",
    "ipv6_addr",
    "myaccess_token",
    "session_keys",
    "keys_total",
    "user_ids",
    "owner_hashes",
    "tokenhashes",
    # Segments that glue into an ordinary word (valid, rid, kid, monkey) still hold an
    # exact identifier segment: the ordinary-word list excuses glued words, never these.
    "val_id",
    "r_id",
    "k_id",
    "mon_key",
]


REVIEWS = "data_reviews: ClassVar[tuple[DataReview, ...]] = "
FLAGS_64 = "\n".join(f'f{i:02d}: bool | None = flag("Bit {i}.")' for i in range(64))

ATTACKS: tuple[Attack, ...] = (
    # --- issue 23: channels no rule measured ---------------------------------------------
    Attack(
        "issue-100k-member-enum",
        "ENUM_SIZE",
        "cohort",
        event(
            f"cohort: Cohort | None = Field(None, {DESC})",
            pre="""
            Cohort = StrEnum("Cohort", {f"U{i:06d}": f"u{i:06d}" for i in range(100_000)})
            """,
        ),
    ),
    Attack(
        "issue-phone-like-member",
        "ENUM_MEMBER_NUMBER",
        "cohort",
        event(f'cohort: Literal["none", "4155550123"] | None = Field(None, {DESC})'),
    ),
    Attack(
        "issue-ip-like-member",
        "ENUM_MEMBER_NUMBER",
        "cohort",
        event(f'cohort: Literal["none", "10_0_0_1"] | None = Field(None, {DESC})'),
    ),
    Attack(
        "issue-numbered-member",
        "ENUM_MEMBER_NUMBER",
        "cohort",
        event(f'cohort: Literal["none", "user_12345"] | None = Field(None, {DESC})'),
    ),
    Attack(
        "issue-split-phone-number",
        "INT_PRECISION",
        "area",
        event(
            """
            area: int | None = count(0, 9_999_999, "Part one.")
            exchange: int | None = count(0, 9_999_999, "Part two.")
            line: int | None = count(0, 9_999_999, "Part three.")
            """
        ),
    ),
    Attack(
        "issue-split-phone-number-waived",
        "EVENT_CAPACITY",
        None,
        event(
            """
            area: int | None = count(0, 9_999_999, "Part one.", waiver="w")
            exchange: int | None = count(0, 9_999_999, "Part two.", waiver="w")
            line: int | None = count(0, 9_999_999, "Part three.", waiver="w")
            """
        ),
    ),
    Attack("issue-64-flags", "EVENT_CAPACITY", None, event(FLAGS_64)),
    Attack(
        "issue-identifier-event-name",
        "EVENT_NAME_NO_IDENTIFIER",
        None,
        event(OK_FIELD, name="user_id_8c87b489ce35cf2e2f39f80e282cb2e804932a56"),
    ),
    Attack(
        "issue-11-digit-schema-version",
        "EVENT_VERSION",
        None,
        event(OK_FIELD, version="14155550123"),
    ),
    Attack(
        "event-name-hex-run",
        "EVENT_NAME_NO_IDENTIFIER",
        None,
        event(OK_FIELD, name="checkout_8c87b489ce35cf2e2f39"),
    ),
    Attack(
        "event-name-phone", "EVENT_NAME_NO_IDENTIFIER", None, event(OK_FIELD, name="v4155550123")
    ),
    Attack("event-version-1000", "EVENT_VERSION", None, event(OK_FIELD, version="1000")),
    Attack(
        "field-name-hex-run",
        "FIELD_NAME_NO_TOKEN",
        "seen_8c87b489ce35cf2e",
        event(f"seen_8c87b489ce35cf2e: Lane | None = Field(None, {DESC})"),
    ),
    Attack(
        "field-name-numbered",
        "FIELD_NAME_NO_TOKEN",
        "visits_4155550123",
        event(f"visits_4155550123: Lane | None = Field(None, {DESC})"),
    ),
    Attack(
        "enum-65-members",
        "ENUM_SIZE",
        "bucket",
        event(
            f"bucket: Bucket | None = Field(None, {DESC})",
            pre="""
            Bucket = StrEnum("Bucket", {f"B{i}": f"b{i}" for i in range(65)})
            """,
        ),
    ),
    Attack(
        "enum-needless-waiver",
        "ENUM_SIZE",
        "lane",
        event(f'lane: Annotated[Lane, CardinalityWaiver("r")] | None = Field(None, {DESC})'),
    ),
    Attack(
        "int-precision-on-a-member",
        "INT_PRECISION",
        "lane",
        event(f"lane: Annotated[Lane, Precision(3)] | None = Field(None, {DESC})"),
    ),
    Attack(
        "int-precision-zero",
        "INT_PRECISION",
        "ms",
        event('ms: int | None = count(0, 3_600_000, "Ms.", precision=0)'),
    ),
    Attack(
        "int-precision-bound-not-exact",
        "INT_PRECISION",
        "ms",
        event('ms: int | None = count(0, 3_599_999, "Ms.", precision=3)'),
    ),
    Attack(
        "int-precision-too-fine",
        "INT_PRECISION",
        "ms",
        event('ms: int | None = count(0, 3_600_000, "Ms.", precision=7)'),
    ),
    Attack(
        "data-review-blank-reason",
        "DATA_REVIEW",
        None,
        event(
            OK_FIELD,
            body=REVIEWS + '(DataReview("issue 1", " ", 2.0, "attack_event", 1),)',
        ),
    ),
    Attack(
        "data-review-not-a-review",
        "DATA_REVIEW",
        None,
        event(OK_FIELD, body='data_reviews: ClassVar[tuple[Any, ...]] = ("approved",)'),
    ),
    Attack(
        "data-review-over-the-budget",
        "DATA_REVIEW",
        None,
        event(
            OK_FIELD,
            body=REVIEWS + '(DataReview("r", "why", 99.0, "attack_event", 1),)',
        ),
    ),
    Attack(
        "data-review-bits-hundredths",
        "DATA_REVIEW",
        None,
        event(
            OK_FIELD,
            body=REVIEWS + '(DataReview("r", "why", 1.05, "attack_event", 1),)',
        ),
    ),
    # --- the issue, as reported --------------------------------------------------------
    Attack(
        "issue-plain-validator",
        "FIELD_VALIDATOR",
        "tier",
        event(
            """
            tier: Annotated[ChatTier, PlainValidator(lambda v: v)] = Field(description="T.")
            kind: TurnKind = Field(description="Kind.")
            """
        ),
    ),
    Attack(
        "issue-userid-2**63",
        "INT_SAFE_RANGE",
        "userid",
        event('userid: int | None = count(0, 2**63 - 1, "x")'),
    ),
    Attack(
        "issue-bound-10**20", "INT_SAFE_RANGE", "n", event('n: int | None = count(0, 10**20, "N.")')
    ),
    # --- model rules -------------------------------------------------------------------
    Attack("event-name-format", "EVENT_NAME", None, event(OK_FIELD, name="Bad-Name")),
    Attack("event-name-reserved", "EVENT_NAME", None, event(OK_FIELD, name="telemetry_rejected")),
    Attack("event-version-zero", "EVENT_VERSION", None, event(OK_FIELD, version="0")),
    Attack("event-version-bool", "EVENT_VERSION", None, event(OK_FIELD, version="True")),
    Attack("event-no-docstring", "EVENT_DESCRIPTION", None, event(OK_FIELD, doc=None)),
    Attack(
        "config-extra-allow",
        "MODEL_CONFIG",
        None,
        event(OK_FIELD, body='model_config = ConfigDict(extra="allow", frozen=True)'),
    ),
    Attack(
        "config-use-enum-values",
        "MODEL_CONFIG",
        None,
        event(OK_FIELD, body="model_config = ConfigDict(use_enum_values=True)"),
    ),
    Attack(
        "config-str-to-lower",
        "MODEL_CONFIG",
        None,
        event(OK_FIELD, body="model_config = ConfigDict(str_to_lower=True)"),
    ),
    Attack(
        "schema-unresolved-type",
        "MODEL_SCHEMA",
        None,
        event(f"tier: NoSuchType | None = Field(None, {DESC})"),
    ),
    Attack(
        "names-fold-together",
        "FIELD_NAME_UNIQUE",
        None,
        event(
            f"Lane: ChatTier | None = Field(None, {DESC})\n"
            f"lane: ChatTier | None = Field(None, {DESC})"
        ),
    ),
    # --- validators of every mode --------------------------------------------------------
    Attack(
        "annotated-wrap-validator",
        "FIELD_VALIDATOR",
        "tier",
        event('tier: Annotated[ChatTier, WrapValidator(lambda v, h: v)] = Field(description="T.")'),
    ),
    Attack(
        "annotated-after-validator-returns-text",
        "FIELD_VALIDATOR",
        "tier",
        event(
            'tier: Annotated[ChatTier, AfterValidator(lambda v: "x@example.com")] = '
            'Field(description="T.")'
        ),
    ),
    Attack(
        "annotated-before-validator",
        "FIELD_VALIDATOR",
        "tier",
        event('tier: Annotated[ChatTier, BeforeValidator(lambda v: v)] = Field(description="T.")'),
    ),
    Attack(
        "optional-annotated-plain-validator",
        "FIELD_VALIDATOR",
        "n",
        event(f"n: Annotated[int, PlainValidator(lambda v: v)] | None = Field(None, {DESC})"),
    ),
    *(
        Attack(
            f"field-validator-{mode}",
            "FIELD_VALIDATOR",
            "tier",
            event(
                OK_FIELD,
                body=f"""
                @field_validator("tier", mode="{mode}")
                @classmethod
                def leak(cls, value: Any{", handler: Any" if mode == "wrap" else ""}) -> Any:
                    return "someone@example.com"
                """,
            ),
        )
        for mode in ("after", "before", "wrap", "plain")
    ),
    Attack(
        "field-validator-star",
        "FIELD_VALIDATOR",
        "tier",
        event(
            OK_FIELD,
            body="""
            @field_validator("*")
            @classmethod
            def leak(cls, value: Any) -> Any:
                return value
            """,
        ),
    ),
    Attack(
        "default-factory",
        "FIELD_VALIDATOR",
        "tier",
        event(f"tier: ChatTier | None = Field(default_factory=lambda: None, {DESC})"),
    ),
    # --- serializers -------------------------------------------------------------------
    Attack(
        "annotated-plain-serializer",
        "FIELD_SERIALIZER",
        "tier",
        event(
            'tier: Annotated[ChatTier, PlainSerializer(lambda v: "x")] = Field(description="T.")'
        ),
    ),
    Attack(
        "annotated-wrap-serializer",
        "FIELD_SERIALIZER",
        "n",
        event('n: Annotated[int, WrapSerializer(lambda v, h: h(v))] | None = count(0, 9, "N.")'),
    ),
    *(
        Attack(
            f"field-serializer-{mode}",
            "FIELD_SERIALIZER",
            "tier",
            event(
                OK_FIELD,
                body=f"""
                @field_serializer("tier", mode="{mode}")
                def dump(self, value: Any{", handler: Any" if mode == "wrap" else ""}) -> Any:
                    return "someone@example.com"
                """,
            ),
        )
        for mode in ("plain", "wrap")
    ),
    # --- custom types ------------------------------------------------------------------
    Attack(
        "custom-type-class",
        "FIELD_CUSTOM_TYPE",
        "n",
        event(
            f"n: UserNumber | None = Field(None, {DESC})",
            pre="""
            class UserNumber(int):
                @classmethod
                def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
                    return _core_schema.int_schema(ge=0, le=9, strict=True)
            """,
        ),
    ),
    Attack(
        "custom-type-marker",
        "FIELD_CUSTOM_TYPE",
        "n",
        event(
            'n: Annotated[int, Passthrough()] | None = count(0, 9, "N.")',
            pre="""
            class Passthrough:
                def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
                    return handler(source)
            """,
        ),
    ),
    Attack(
        "custom-type-enum-hook",
        "FIELD_CUSTOM_TYPE",
        "colour",
        event(
            f"colour: Hooked | None = Field(None, {DESC})",
            pre="""
            class Hooked(StrEnum):
                RED = "red"

                @classmethod
                def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
                    return _core_schema.no_info_plain_validator_function(lambda v: v)
            """,
        ),
    ),
    Attack(
        "custom-type-v1-validators",
        "FIELD_CUSTOM_TYPE",
        "n",
        event(
            f"n: OldStyle | None = Field(None, {DESC})",
            pre="""
            class OldStyle(int):
                @classmethod
                def __get_validators__(cls) -> Any:
                    yield lambda v: v
            """,
        ),
    ),
    # --- types outside the closed set ----------------------------------------------------
    Attack("free-str", "FIELD_TYPE", "note", event(f"note: str | None = Field(None, {DESC})")),
    Attack("any", "FIELD_TYPE", "note", event(f"note: Any = Field(None, {DESC})")),
    Attack("float", "FIELD_TYPE", "ratio", event(f"ratio: float | None = Field(None, {DESC})")),
    Attack("list", "FIELD_TYPE", "tags", event(f"tags: list[str] | None = Field(None, {DESC})")),
    Attack(
        "dict", "FIELD_TYPE", "tags", event(f"tags: dict[str, int] | None = Field(None, {DESC})")
    ),
    Attack(
        "nested-model",
        "FIELD_TYPE",
        "inner",
        event(
            f"inner: Inner | None = Field(None, {DESC})",
            pre="""
            class Inner(BaseModel):
                who: str
            """,
        ),
    ),
    Attack("union", "FIELD_TYPE", "tier", event(f"tier: ChatTier | Lane = Field({DESC})")),
    Attack(
        "int-enum",
        "FIELD_TYPE",
        "level",
        event(
            f"level: Level | None = Field(None, {DESC})",
            pre="""
            class Level(_enum.IntEnum):
                LOW = 1
            """,
        ),
    ),
    Attack(
        "gt-beside-ge-le",
        "FIELD_TYPE",
        "n",
        event(f"n: int | None = Field(None, ge=0, gt=-1, le=5, strict=True, {DESC})"),
    ),
    Attack(
        "gt-lt-only",
        "FIELD_TYPE",
        "n",
        event(f"n: int | None = Field(None, gt=0, lt=5, strict=True, {DESC})"),
    ),
    # --- enums ---------------------------------------------------------------------------
    Attack(
        "enum-missing-makes-a-member",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(StrEnum):
                RED = "red"

                @classmethod
                def _missing_(cls, value: object) -> Any:
                    member = str.__new__(cls, str(value))
                    member._name_ = member._value_ = str(value)
                    return member
            """,
        ),
    ),
    Attack(
        "enum-custom-new",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(StrEnum):
                def __new__(cls, value: str) -> Any:
                    member = str.__new__(cls, "someone@example.com")
                    member._value_ = value
                    return member

                RED = "red"
            """,
        ),
    ),
    Attack(
        "enum-custom-init",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(StrEnum):
                RED = "red"

                def __init__(self, *args: Any) -> None:
                    pass
            """,
        ),
    ),
    Attack(
        "enum-method",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(StrEnum):
                RED = "red"

                def label(self) -> str:
                    return self.value.title()
            """,
        ),
    ),
    Attack(
        "enum-missing-in-a-base",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Forgiving(StrEnum):
                @classmethod
                def _missing_(cls, value: object) -> Any:
                    return None

            class Colour(Forgiving):
                RED = "red"
            """,
        ),
    ),
    Attack(
        "enum-plain-enum",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(_enum.Enum):
                RED = "red"
            """,
        ),
    ),
    Attack(
        "enum-str-mixin",
        "ENUM_PLAIN",
        "colour",
        event(
            f"colour: Colour | None = Field(None, {DESC})",
            pre="""
            class Colour(str, _enum.Enum):
                RED = "red"
            """,
        ),
    ),
    # --- what pydantic runs differs from the declared set --------------------------------
    Attack(
        "alias",
        "FIELD_CORE_SCHEMA",
        "tier",
        event(f'tier: ChatTier | None = Field(None, validation_alias="t", {DESC})'),
    ),
    Attack(
        "exclude",
        "FIELD_CORE_SCHEMA",
        "tier",
        event(f"tier: ChatTier | None = Field(None, exclude=True, {DESC})"),
    ),
    Attack(
        "multiple-of",
        "FIELD_CORE_SCHEMA",
        "n",
        event(f"n: int | None = Field(None, ge=0, le=9, multiple_of=2, strict=True, {DESC})"),
    ),
    # --- ints ----------------------------------------------------------------------------
    Attack(
        "int-unbounded",
        "INT_BOUNDED",
        "n",
        event(f"n: int | None = Field(None, strict=True, {DESC})"),
    ),
    Attack(
        "int-one-sided",
        "INT_BOUNDED",
        "n",
        event(f"n: int | None = Field(None, ge=0, strict=True, {DESC})"),
    ),
    Attack("int-ge-over-le", "INT_BOUNDED", "n", event('n: int | None = count(5, 4, "N.")')),
    Attack("int-le-2**53", "INT_SAFE_RANGE", "n", event('n: int | None = count(0, 2**53, "N.")')),
    Attack(
        "int-le-2**63",
        "INT_SAFE_RANGE",
        "n",
        event('n: int | None = count(0, 2**63, "N.", waiver="w")'),
    ),
    Attack(
        "int-ge-minus-2**53",
        "INT_SAFE_RANGE",
        "n",
        event('n: int | None = count(-(2**53), 0, "N.", waiver="w")'),
    ),
    Attack(
        "int-10**8-no-waiver",
        "INT_CARDINALITY",
        "n",
        event('n: int | None = count(0, 10**8, "N.")'),
    ),
    Attack(
        "int-budget-plus-one",
        "INT_CARDINALITY",
        "n",
        event('n: int | None = count(0, 10_000_000, "N.")'),
    ),
    Attack(
        "int-blank-waiver",
        "INT_CARDINALITY",
        "n",
        event('n: int | None = count(0, 10**8, "N.", waiver="  ")'),
    ),
    Attack(
        "int-needless-waiver",
        "INT_PRECISION",
        "n",
        event('n: int | None = count(0, 60, "N.", waiver="just in case")'),
    ),
    Attack(
        "waiver-on-a-bool",
        "INT_CARDINALITY",
        "ok",
        event('ok: Annotated[bool, CardinalityWaiver("r")] | None = flag("Ok.")'),
    ),
    Attack(
        "int-lax",
        "FIELD_STRICT",
        "n",
        event(f"n: int | None = Field(None, ge=0, le=5, {DESC})"),
    ),
    Attack("bool-lax", "FIELD_STRICT", "ok", event(f"ok: bool | None = Field(None, {DESC})")),
    # --- defaults, names, descriptions, members -------------------------------------------
    Attack(
        "default-not-none",
        "OPTIONAL_DEFAULT_NONE",
        "lane",
        event(f"lane: Lane = Field(Lane.PUBLIC, {DESC})"),
    ),
    Attack(
        "name-camel-case",
        "FIELD_NAME_FORMAT",
        "queueWait",
        event(f"queueWait: Lane | None = Field(None, {DESC})"),
    ),
    Attack(
        "name-capitalised",
        "FIELD_NAME_FORMAT",
        "Tier",
        event(f"Tier: ChatTier | None = Field(None, {DESC})"),
    ),
    Attack(
        "name-double-underscore",
        "FIELD_NAME_FORMAT",
        "queue__wait",
        event(f"queue__wait: Lane | None = Field(None, {DESC})"),
    ),
    Attack(
        "name-65-characters",
        "FIELD_NAME_FORMAT",
        "a" * 65,
        event(f"{'a' * 65}: Lane | None = Field(None, {DESC})"),
    ),
    *(
        Attack(
            f"name-reserved-{name}",
            "FIELD_NAME_RESERVED",
            name,
            event(f"{name}: Lane | None = Field(None, {DESC})"),
        )
        for name in ("event", "severity", "time", "invalid_fields", "unknown_fields", "timestamp")
    ),
    *(
        # Each broke the view build before the rule: the parser reads a keyword, not a key.
        Attack(
            f"name-keyword-{name}",
            "FIELD_NAME_KEYWORD",
            name,
            event(f"{name}: Lane | None = Field(None, {DESC})"),
        )
        for name in ("select", "like", "case", "exclude", "order")
    ),
    *_name_rows(),
    *(
        Attack(
            f"name-leaky-{name}",
            "FIELD_NAME_NO_IDENTIFIER",
            name,
            event(f"{name}: Lane | None = Field(None, {DESC})"),
        )
        for name in LEAKY_NAMES
    ),
    Attack(
        "no-description", "FIELD_DESCRIPTION", "tier", event("tier: ChatTier | None = Field(None)")
    ),
    Attack(
        "member-upper-case",
        "ENUM_MEMBER_FORMAT",
        "colour",
        event(
            f'colour: Literal["Red", "ok"] | None = Field(None, {DESC})',
            pre="from typing import Literal",
        ),
    ),
    Attack(
        "member-33-characters",
        "ENUM_MEMBER_FORMAT",
        "colour",
        event(
            f'colour: Literal["{"x" * 33}", "ok"] | None = Field(None, {DESC})',
            pre="from typing import Literal",
        ),
    ),
    Attack(
        "member-hex-run",
        "ENUM_MEMBER_NO_IDENTIFIER",
        "colour",
        event(
            f'colour: Literal["deadbeefcafebabe", "ok"] | None = Field(None, {DESC})',
            pre="from typing import Literal",
        ),
    ),
    Attack(
        "member-token",
        "ENUM_MEMBER_NO_IDENTIFIER",
        "colour",
        event(
            f'colour: Literal["tok_9f8a7b6c5d4e3f2a1b0c", "ok"] | None = Field(None, {DESC})',
            pre="from typing import Literal",
        ),
    ),
    # --- code on the model ---------------------------------------------------------------
    Attack(
        "model-validator-before",
        "MODEL_VALIDATOR",
        None,
        event(
            OK_FIELD,
            body="""
            @model_validator(mode="before")
            @classmethod
            def leak(cls, data: Any) -> Any:
                return {**data, "tier": "someone@example.com"}
            """,
        ),
    ),
    Attack(
        "model-validator-wrap",
        "MODEL_VALIDATOR",
        None,
        event(
            OK_FIELD,
            body="""
            @model_validator(mode="wrap")
            @classmethod
            def leak(cls, data: Any, handler: Any) -> Any:
                return handler(data)
            """,
        ),
    ),
    Attack(
        "model-validator-after-sets-a-field",
        "MODEL_VALIDATOR",
        None,
        event(
            OK_FIELD,
            body="""
            @model_validator(mode="after")
            def leak(self) -> Any:
                object.__setattr__(self, "tier", "someone@example.com")
                return self
            """,
        ),
    ),
    Attack(
        "model-post-init",
        "MODEL_VALIDATOR",
        None,
        event(
            OK_FIELD,
            body="""
            def model_post_init(self, context: Any) -> None:
                object.__setattr__(self, "tier", "someone@example.com")
            """,
        ),
    ),
    Attack(
        "custom-init",
        "MODEL_VALIDATOR",
        None,
        event(
            OK_FIELD,
            body="""
            def __init__(self, **data: Any) -> None:
                super().__init__(**data)
            """,
        ),
    ),
    Attack(
        "model-serializer",
        "MODEL_SERIALIZER",
        None,
        event(
            OK_FIELD,
            body="""
            @model_serializer
            def dump(self) -> Any:
                return {"tier": "someone@example.com"}
            """,
        ),
    ),
    Attack(
        "computed-field",
        "COMPUTED_FIELD",
        None,
        event(
            OK_FIELD,
            body="""
            @computed_field  # type: ignore[prop-decorator]
            @property
            def who(self) -> str:
                return "someone@example.com"
            """,
        ),
    ),
    Attack(
        "override-model-dump",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            def model_dump(self, **kwargs: Any) -> Any:
                return {"tier": "someone@example.com"}
            """,
        ),
    ),
    Attack(
        "override-pydantic-init-subclass",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            @classmethod
            def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
                pass
            """,
        ),
    ),
    Attack(
        "override-hook-in-a-base",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            bases="Unchecked",
            pre="""
            class Unchecked(TelemetryEvent):
                @classmethod
                def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
                    pass  # never runs the rules for its subclasses
            """,
        ),
    ),
    Attack(
        "override-metaclass",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            bases="TelemetryEvent, metaclass=Forging",
            pre="""
            from pydantic._internal._model_construction import ModelMetaclass

            class Forging(ModelMetaclass):
                def __call__(cls, *args: Any, **kwargs: Any) -> Any:
                    made = super().__call__(*args, **kwargs)
                    object.__setattr__(made, "tier", "someone@example.com")
                    return made
            """,
        ),
    ),
    Attack(
        "override-init-subclass",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            def __init_subclass__(cls, **kwargs: Any) -> None:
                pass
            """,
        ),
    ),
    Attack(
        "override-in-a-mixin",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            bases="Dumper, TelemetryEvent",
            pre="""
            class Dumper:
                def model_dump(self, **kwargs: Any) -> Any:
                    return {"tier": "someone@example.com"}
            """,
        ),
    ),
    Attack(
        "helper-method",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            def describe(self) -> str:
                return "a helper"
            """,
        ),
    ),
    Attack(
        "property",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            @property
            def who(self) -> str:
                return "someone@example.com"
            """,
        ),
    ),
    Attack(
        "validator-for-no-field",
        "MODEL_OVERRIDE",
        None,
        event(
            OK_FIELD,
            body="""
            @field_validator("nothing", check_fields=False)
            @classmethod
            def stray(cls, value: Any) -> Any:
                return value
            """,
        ),
    ),
    Attack(
        "reviewed-name-not-a-field",
        "NAME_REVIEWED",
        None,
        event(OK_FIELD, body='reviewed_names: ClassVar[dict[str, str]] = {"owner_key": "r"}'),
    ),
    Attack(
        "reviewed-name-needs-no-review",
        "NAME_REVIEWED",
        None,
        event(OK_FIELD, body='reviewed_names: ClassVar[dict[str, str]] = {"tier": "r"}'),
    ),
    Attack(
        "reviewed-name-blank-reason",
        "FIELD_NAME_NO_IDENTIFIER",
        "owner_key",
        event(
            f"owner_key: Lane | None = Field(None, {DESC})",
            body='reviewed_names: ClassVar[dict[str, str]] = {"owner_key": " "}',
        ),
    ),
)
