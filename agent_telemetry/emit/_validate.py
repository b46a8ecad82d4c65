"""Resolve the event and validate its fields with the pydantic model.

Pure functions over plain data: ``resolve`` turns what the caller passed into a
``Plan`` (or a closed-set ``RejectReason``), ``check`` turns raw fields into the values
that go on the line plus the names of the invalid fields and the count of unknown keys.
``check`` is the judge for every call the hot path (``_fast_record``) did not accept.

Pydantic's ``ValidationError`` quotes the input in its text, so only ``loc`` and
``type`` are read from it, and it is never re-raised or chained: strict-mode errors are
raised after the ``except`` block has ended, so they carry no ``__context__``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from agent_telemetry.emit._errors import Problem, TelemetryValidationError
from agent_telemetry.emit._fast_record import RecordValidator, record_validator
from agent_telemetry.emit._guard import Domains, domains, recheck
from agent_telemetry.schema import FieldSpec, TelemetryEvent, event_spec
from agent_telemetry.schema.catalogue import Catalogue, default_catalogue
from agent_telemetry.schema.envelope import RESERVED_FIELD_NAMES, SEVERITY, RejectReason
from agent_telemetry.schema.spec import base_type


@dataclass(frozen=True, slots=True)
class Plan:
    """What validating and writing one event needs, computed once per model."""

    model: type[TelemetryEvent]
    event: str
    schema_version: int
    order: tuple[str, ...]
    names: frozenset[str]
    required: tuple[str, ...]
    enums: frozenset[str]  # fields whose validated value is an Enum member but not a str
    placeholders: dict[str, Any] = field(repr=False)
    validator: SchemaValidator = field(repr=False)
    # Each field's set or bounds, re-checked on every value the model returns (_guard).
    domains: Domains = field(repr=False)
    # The hot path (``_fast_record``): fields -> the line's record with a ``time``
    # placeholder, or an exception when the model must decide. None: always ask the model.
    fast: RecordValidator | None = field(repr=False)


# The outcome of ``check``: (validated values in model order, None meaning "omit",
# names of invalid fields in model order, count of unknown keys). A plain tuple: this
# is the hot path.
Checked = tuple[dict[str, Any], tuple[str, ...], int]


class Active:
    """The emitter's catalogue and the plans made from it, swapped whole by ``configure``.

    Plans are made only for the catalogue's own current models, so both dicts hold at most
    one entry per catalogued event: a class made per user at run time never gets one.
    A thread still holding the previous ``Active`` fills that one's dicts, never these.
    """

    __slots__ = ("by_model", "by_name", "catalogue", "names")

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.names = frozenset(catalogue.events)
        self.by_name: dict[str, Plan] = {}
        self.by_model: dict[type[TelemetryEvent], Plan] = {}


class _State:
    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = Active(default_catalogue())


STATE = _State()


def use_catalogue(catalogue: Catalogue) -> None:
    """Make ``catalogue`` the one events resolve in (one assignment: atomic for readers)."""
    STATE.active = Active(catalogue)


def _placeholder(spec: FieldSpec) -> Any:
    # A value the field certainly accepts; it stands in for a required field that is
    # missing or invalid so the other fields can still be validated by the model.
    if spec.kind == "enum":
        return spec.members[0]
    if spec.kind == "int":
        return spec.ge
    return False


def plan_for(
    model: type[TelemetryEvent], cache: dict[type[TelemetryEvent], Plan] | None = None
) -> Plan:
    """The plan of a rule-checked event model, cached in ``cache`` (default: the active
    catalogue's). ``resolve`` calls it for the catalogue's own models only."""
    cache = STATE.active.by_model if cache is None else cache
    plan = cache.get(model)
    if plan is not None:
        return plan
    spec = event_spec(model)
    # StrEnum members are already strings (orjson writes them as such, and they compare
    # equal to their value); only a plain Enum's members need unwrapping.
    enums = frozenset(
        name
        for name, info in model.model_fields.items()
        if isinstance(base_type(info), type)
        and issubclass(base_type(info), enum.Enum)
        and not issubclass(base_type(info), str)
    )
    envelope = {
        "event": spec.name,
        "schema_version": spec.schema_version,
        "severity": SEVERITY,
        "time": "",  # replaced by the time of each line
    }
    plan = Plan(
        model=model,
        event=spec.name,
        schema_version=spec.schema_version,
        order=spec.field_names,
        names=frozenset(spec.field_names),
        required=tuple(f.name for f in spec.fields if f.required),
        enums=enums,
        placeholders={f.name: _placeholder(f) for f in spec.fields if f.required},
        validator=model.__pydantic_validator__,  # type: ignore[arg-type]
        domains=domains(spec),
        # A plain Enum's members need unwrapping, which only the careful path does.
        fast=None if enums else record_validator(model, envelope),
    )
    cache[model] = plan
    return plan


def plan_by_name(name: str, active: Active | None = None) -> Plan | None:
    """The plan of a catalogue event by exact name (filled on each name's first use)."""
    active = active or STATE.active
    plan = active.by_name.get(name)
    if plan is None:
        model = active.catalogue.events.get(name)
        if model is None:
            return None
        plan = active.by_name[name] = plan_for(model, active.by_model)
    return plan


def _is_event_model(candidate: type) -> TypeGuard[type[TelemetryEvent]]:
    # Only classes that define their own event_name went through the definition rules;
    # a subclass of PipelineRun that adds a field inherits the name but was never checked.
    return issubclass(candidate, TelemetryEvent) and "event_name" in candidate.__dict__


def _judge_model(model: type[TelemetryEvent], active: Active) -> Plan | RejectReason:
    """Only the catalogue's own current model of an event is written: a retired version
    is ``retired_version``; any other class, however well it passes the rules (a copy,
    a subclass, a class made at run time with ``type()``), is ``unknown_event``."""
    current = active.catalogue.events.get(model.event_name)
    if current is model:
        return plan_for(model, active.by_model)
    if active.catalogue.versions.get((model.event_name, model.schema_version)) is model:
        return RejectReason.RETIRED_VERSION
    return RejectReason.UNKNOWN_EVENT


@dataclass(frozen=True, slots=True)
class Resolved:
    plan: Plan | None
    reason: RejectReason | None = None
    instance_fields: dict[str, Any] | None = None


def resolve(event: object) -> Resolved:
    """An event name, an event model class or an event instance -> its plan."""
    active = STATE.active
    try:
        if isinstance(event, str):
            # str.__str__ gives an exact str, whatever a subclass does to __hash__/__eq__.
            plan = plan_by_name(str.__str__(event), active)
            if plan is None:
                return Resolved(None, RejectReason.UNKNOWN_EVENT)
            return Resolved(plan)
        if isinstance(event, type):
            if _is_event_model(event):
                judged = _judge_model(event, active)
                if isinstance(judged, RejectReason):
                    return Resolved(None, judged)
                return Resolved(judged)
            return Resolved(None, RejectReason.BAD_EVENT_TYPE)
        kind = type(event)
        if _is_event_model(kind):
            judged = _judge_model(kind, active)
            if isinstance(judged, RejectReason):
                return Resolved(None, judged)
            # Re-validated like keyword fields: model_construct() builds unchecked instances.
            values = object.__getattribute__(event, "__dict__")
            return Resolved(judged, instance_fields=dict(values))
    except Exception:
        pass
    return Resolved(None, RejectReason.BAD_EVENT_TYPE)


def key_problems(unknown: list[object]) -> list[Problem]:
    """Strict mode's errors for keys the model does not define, never naming the key (it
    may be personal data) unless it is an envelope key (``time``, ``severity``, ...),
    which the package itself defines: each of those is a ``reserved_key`` problem, every
    other key counts towards one ``unknown_field`` problem (``unknown_field x3``). No
    "close to" hint: which field a key resembles says something about the key.
    """
    reserved: list[str] = []
    others = 0
    for key in unknown:
        name = key if type(key) is str else None  # exact str only: no subclass's __eq__
        if name is not None and name in RESERVED_FIELD_NAMES:
            reserved.append(name)
        else:
            others += 1
    problems = [Problem(name, "reserved_key") for name in sorted(set(reserved))]
    if others:
        problems.append(Problem(None, "unknown_field", count=others))
    return problems


def _split(raw: dict[Any, Any], names: frozenset[str]) -> tuple[dict[str, Any], list[object]]:
    known: dict[str, Any] = {}
    unknown: list[object] = []
    for key, value in raw.items():
        name = key if type(key) is str else str.__str__(key) if isinstance(key, str) else None
        if name is not None and name in names:
            known[name] = value
        else:
            unknown.append(key)
    return known, unknown


_UNUSABLE = object()


def _problems_of(exc: ValidationError) -> list[Problem]:
    # Only loc and type: the input (and any message quoting it) is never read.
    problems = []
    for error in exc.errors(include_url=False, include_context=False, include_input=False):
        loc = error["loc"]
        where = loc[0] if loc and isinstance(loc[0], str) else None
        problems.append(Problem(where, str(error["type"])))
    return problems


def _attempt(plan: Plan, data: dict[str, Any]) -> Any:
    """The model instance, a list of problems, or ``_UNUSABLE`` if validating raised."""
    try:
        return plan.validator.validate_python(data)
    except ValidationError as exc:
        return _problems_of(exc)
    except Exception:
        # A value whose __hash__/__eq__/__str__ raises inside pydantic; never re-raised.
        return _UNUSABLE


def _isolate(plan: Plan, data: dict[str, Any]) -> list[Problem]:
    """Validate field by field (the others replaced by placeholders) to find culprits."""
    problems: list[Problem] = []
    for name in plan.order:
        if name not in data:
            continue
        outcome = _attempt(plan, {**plan.placeholders, name: data[name]})
        if outcome is _UNUSABLE:
            problems.append(Problem(name, "unusable_value"))
        elif isinstance(outcome, list):
            problems.extend(p for p in outcome if p.field == name)
    return problems


def _values(
    plan: Plan, given: dict[str, Any], skip: frozenset[str] | set[str] = frozenset()
) -> dict[str, Any]:
    """Validated values in model order (pydantic fills ``__dict__`` in field order)."""
    enums = plan.enums
    return {
        k: (v.value if k in enums else v)
        for k, v in given.items()
        if v is not None and k not in skip
    }


def check(plan: Plan, raw: dict[Any, Any], strict: bool, extra_unknown: int = 0) -> Checked:
    """Validate ``raw`` against the plan's model, then re-check every value it returned
    against the field's set or bounds (``_guard``): a value the model let through but
    the field's domain does not hold is invalid like any other (strict: ``outside_domain``).
    """
    values, invalid, unknown = _judge(plan, raw, strict, extra_unknown)
    outside = recheck(values, plan.domains)
    if not outside:
        return values, invalid, unknown
    if strict:
        problems = tuple(Problem(name, "outside_domain") for name in outside)
        raise TelemetryValidationError(plan.event, _in_model_order(plan, list(problems)))
    named = set(invalid).union(outside)
    return values, tuple(name for name in plan.order if name in named), unknown


def _judge(plan: Plan, raw: dict[Any, Any], strict: bool, extra_unknown: int) -> Checked:
    """Validate ``raw`` against the plan's model.

    Strict: raise ``TelemetryValidationError`` naming every bad field and its rule; an
    envelope key passed as a field is ``reserved_key``, other unknown keys one
    ``unknown_field`` with their count.
    Lenient: drop each bad field and name it in ``invalid``; unknown keys, envelope keys
    among them, are dropped and counted in ``unknown_fields`` (the line has no other
    place for them: the envelope's own values always win); a required field that is
    missing or invalid is omitted and named too, so the rest of the line still lands.
    """
    first: Any = None
    if not extra_unknown:
        try:
            # Valid after all (the hot path leaves, say, a plain-Enum model or keywords
            # beside an instance to the model): every key known (extra="forbid" rejects
            # any other) and every value valid. Anything else takes the careful path.
            given: dict[str, Any] = plan.validator.validate_python(raw).__dict__
            # pydantic fills __dict__ in field order, the line's order; None is left for
            # the record builder to skip. A copy: the re-check edits it in place.
            return (dict(given) if not plan.enums else _values(plan, given)), (), 0
        except ValidationError as exc:
            first = _problems_of(exc)
        except Exception:
            first = _UNUSABLE
    # Exact str keys from here on: a str subclass key may break __hash__ or __eq__.
    known, unknown = _split(raw, plan.names)
    # Unknown keys made the first attempt fail on them too; otherwise it is still valid.
    outcome = first if first is not None and not unknown else _attempt(plan, known)
    if strict:
        problems = key_problems(unknown)
        if extra_unknown:
            problems.append(Problem(None, "fields_with_instance"))
        if outcome is _UNUSABLE:
            problems.extend(_isolate(plan, known) or [Problem(None, "unusable_value")])
        elif isinstance(outcome, list):
            problems.extend(outcome)
        if problems:
            raise TelemetryValidationError(plan.event, _in_model_order(plan, problems))
        return _values(plan, outcome.__dict__), (), 0
    if outcome is not _UNUSABLE and not isinstance(outcome, list):
        return _values(plan, outcome.__dict__), (), len(unknown) + extra_unknown
    return _lenient(plan, known, len(unknown) + extra_unknown, outcome)


def _in_model_order(plan: Plan, problems: list[Problem]) -> tuple[Problem, ...]:
    rank = {name: i for i, name in enumerate(plan.order)}
    return tuple(sorted(problems, key=lambda p: -1 if p.field is None else rank.get(p.field, -1)))


def _lenient(plan: Plan, known: dict[str, Any], unknown: int, first: Any) -> Checked:
    bad: set[str] = set()
    if isinstance(first, list) and all(p.field is not None for p in first):
        bad.update(p.field for p in first if p.field is not None)
    # Each round either succeeds or marks at least one more field bad, so this ends.
    for _ in range(len(plan.order) + 1):
        candidate = {k: v for k, v in known.items() if k not in bad}
        missing = [name for name in plan.required if name not in candidate]
        for name in missing:
            candidate[name] = plan.placeholders[name]
        outcome = _attempt(plan, candidate)
        if outcome is _UNUSABLE:
            outcome = _isolate(plan, candidate) or [Problem(None, "unusable_value")]
        if isinstance(outcome, list):
            newly = {p.field for p in outcome}
            if None in newly or not (newly - bad):
                break  # a model-level failure names no field: trust nothing of this call
            bad.update(n for n in newly if n is not None)
            continue
        skip = bad.union(missing)
        invalid = tuple(name for name in plan.order if name in skip)
        return _values(plan, outcome.__dict__, skip), invalid, unknown
    given = set(known).union(plan.required)
    return {}, tuple(name for name in plan.order if name in given), unknown
