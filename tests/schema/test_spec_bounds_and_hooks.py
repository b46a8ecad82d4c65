"""What the spec reader and the hook guards tell a model author, word for word.

- bounds written inside ``Optional[Annotated[int, Field(...)]]`` reach the spec, and a
  gt/lt bound there or on the Field is refused with the hint to use ge and le;
- a class that replaces a definition hook, or that the rules never ran on, is refused
  with the class named and the exact MODEL_OVERRIDE detail;
- ``EventSpec.field`` names the missing field in its KeyError;
- FIELD_CUSTOM_TYPE trusts pydantic's top-level module as much as its submodules;
- the identifier word lists are read as whitespace-separated words.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import annotated_types
import pytest
from pydantic import Field

from agent_telemetry.schema import SchemaRuleError, TelemetryEvent, count
from agent_telemetry.schema.identifiers import _words
from tests.schema.test_rules import define, desc
from tests.schema.test_rules_edges import CLOSED, _ForgedFreeText, refusal

# --- bounds inside an optional Annotated ----------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        (Annotated[int, Field(ge=0, le=5)] | None, Field(None, strict=True, description="N.")),
        (Annotated[int, Field(ge=0, le=5, strict=True)] | None, desc("N.")),
        (
            Annotated[int, annotated_types.Ge(0), annotated_types.Le(5)] | None,
            Field(None, strict=True, description="N."),
        ),
    ],
    ids=["field-inside", "strict-field-inside", "markers-inside"],
)
def test_bounds_inside_an_optional_annotated_reach_the_spec(annotation: Any, default: Any) -> None:
    # pydantic leaves them in the annotation, not on the field's own metadata.
    spec = define(n=(annotation, default)).spec().field("n")
    assert (spec.kind, spec.ge, spec.le) == ("int", 0, 5)


GT_LT = (
    "type is an int bounded with gt/lt (use ge and le); allowed: a closed set of strings "
    "(Literal/StrEnum), int with ge and le, bool, or Optional of one of those"
)


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        (int | None, Field(None, gt=-1, le=5, strict=True, description="N.")),
        (int | None, Field(None, ge=0, lt=6, strict=True, description="N.")),
        (Annotated[int, Field(gt=-1, le=5)] | None, Field(None, strict=True, description="N.")),
    ],
    ids=["gt-on-the-field", "lt-on-the-field", "gt-inside-optional-annotated"],
)
def test_a_gt_or_lt_bound_is_refused_with_the_hint_to_use_ge_and_le(
    annotation: Any, default: Any
) -> None:
    error = refusal(n=(annotation, default))
    assert (error.rule, error.field, error.detail) == ("FIELD_TYPE", "n", GT_LT)
    assert str(error) == f"Probe.n: FIELD_TYPE: {GT_LT}"


# --- hooks: replaced, or the rules never ran --------------------------------------------


def _noop_hook(cls: type[Any], /, **kwargs: Any) -> None:
    """A hook that runs nothing (in particular, not the definition rules)."""


@pytest.mark.parametrize("hook", ["__init_subclass__", "__pydantic_init_subclass__"])
def test_a_base_that_replaces_a_definition_hook_is_refused_by_name(hook: str) -> None:
    with pytest.raises(SchemaRuleError) as caught:
        type("Unchecked", (TelemetryEvent,), {"__doc__": "A base.", hook: classmethod(_noop_hook)})
    error = caught.value
    detail = f"{hook}: an event or its base may not replace the definition hooks"
    assert (error.model, error.field, error.rule, error.detail) == (
        "Unchecked",
        None,
        "MODEL_OVERRIDE",
        detail,
    )
    assert str(error) == f"Unchecked: MODEL_OVERRIDE: {detail}"


def test_an_event_whose_base_hook_was_swapped_after_definition_has_no_spec() -> None:
    # The guard above sees only class bodies; a hook set on the base afterwards skips
    # the rules for every later subclass, and asking for such a class's spec refuses it.
    class Unchecked(TelemetryEvent):
        """A base."""

    Unchecked.__pydantic_init_subclass__ = classmethod(_noop_hook)  # type: ignore[assignment,method-assign]

    class Skipped(Unchecked):
        """Never checked."""

        event_name: ClassVar[str] = "skipped"
        schema_version: ClassVar[int] = 1
        s: CLOSED = Field(None, description="S.")

    with pytest.raises(SchemaRuleError) as caught:
        Skipped.spec()
    error = caught.value
    detail = "the definition rules never ran on this class (a base overrides the hook)"
    assert (error.model, error.field, error.rule, error.detail) == (
        "Skipped",
        None,
        "MODEL_OVERRIDE",
        detail,
    )
    assert str(error) == f"Skipped: MODEL_OVERRIDE: {detail}"


# --- the spec's own lookups ---------------------------------------------------------------


def test_asking_a_spec_for_a_missing_field_names_it_in_the_key_error() -> None:
    spec = define(n=(int | None, count(0, 5, "N."))).spec()
    assert spec.field("n").name == "n"
    with pytest.raises(KeyError) as caught:
        spec.field("m")
    assert caught.value.args == ("m",)


# --- FIELD_CUSTOM_TYPE and pydantic's module ----------------------------------------------


class _ForgedTopLevel(_ForgedFreeText):
    """The same forged free-text marker, claiming pydantic's top-level module."""

    __module__ = "pydantic"


def test_a_marker_claiming_pydantics_top_level_module_is_left_to_the_core_schema_rule() -> None:
    # Like pydantic.types in test_rules_edges: trusted by FIELD_CUSTOM_TYPE, then
    # refused for what pydantic would run.
    error = refusal(note=(Annotated[Literal["a", "b"], _ForgedTopLevel()], desc("Note.")))
    assert (error.rule, error.field) == ("FIELD_CORE_SCHEMA", "note")


# --- the word lists ---------------------------------------------------------------------


def test_a_word_list_is_read_as_whitespace_separated_words() -> None:
    assert _words(" user client\n    remote\tsrc user ") == {"user", "client", "remote", "src"}
