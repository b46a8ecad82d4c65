"""The compatibility rules: what may change between the committed lock and the models.

A table of stable rule IDs, each with a one-line purpose and a check function, so the
catalogue in docs/evolving-the-schema.md and the code are the same list (``COMPAT_RULES``). Checks
compare one event version of a base lock with the same version of the current lock
(a ``VersionPair``), or, for rules about the shared sink table, the two locks whole.
Each yields ``Change`` records classified ``addition`` (old rows, views and saved
queries keep working) or ``breaking``; a version that yields nothing is ``none``.

A breaking change passes only two ways:
- a new event version: bump ``schema_version`` and keep the old class as a retired
  model (``agent_telemetry/schema/retired.py``); the lock keeps the old version's entry
  (and the views its view), and the new version is compared with nothing, like a new event;
- a reviewed exception in the deployment config naming the rule, the event, the field
  (for field rules) and a reason (``CompatException``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.schema.capacity import (
    EventCapacity,
    event_capacity,
    review_tenths,
    show_bits,
)
from agent_telemetry.schema.grid import significant_digits
from agent_telemetry.schema.lock import LockedEvent, LockedField, LockedReview, SchemaLock
from agent_telemetry.schema.rules import sanitise_column

Classification = Literal["none", "addition", "breaking"]
_RANK: dict[Classification, int] = {"none": 0, "addition": 1, "breaking": 2}


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the base lock and the current one, and what it breaks."""

    rule: str
    classification: Literal["addition", "breaking"]
    event: str
    version: int
    field: str | None
    detail: str


@dataclass(frozen=True, slots=True)
class VersionPair:
    """One event version as the base lock and the current lock have it (None: absent)."""

    event: str
    version: int
    base: LockedEvent | None
    current: LockedEvent | None
    kept_versions: frozenset[int] = field(default_factory=frozenset)  # other versions, in both


@dataclass(frozen=True, slots=True)
class CompatRule:
    id: str
    scope: Literal["event", "field", "lock"]
    purpose: str
    check: Callable[..., Iterator[Change]]


def _change(
    pair: VersionPair,
    rule: str,
    classification: Literal["addition", "breaking"],
    field_name: str | None,
    detail: str,
) -> Change:
    return Change(rule, classification, pair.event, pair.version, field_name, detail)


def _both(pair: VersionPair) -> tuple[LockedEvent, LockedEvent] | None:
    if pair.base is None or pair.current is None:
        return None
    return pair.base, pair.current


def _common(pair: VersionPair) -> Iterator[tuple[LockedField, LockedField]]:
    """(base, current) for each field both versions have, in base order."""
    both = _both(pair)
    if both is None:
        return
    base, current = both
    for old in base.fields:
        new = current.field(old.name)
        if new is not None:
            yield old, new


def _same_type(old: LockedField, new: LockedField) -> bool:
    return old.kind == new.kind and old.type == new.type


# --- spelling: when is a removed member "the same" as an added one -----------------------


def _fold(member: str) -> str:
    return member.casefold().replace("_", "").replace("-", "")


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of adjacent characters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diffs) == 1:
            return True
        if len(diffs) != 2:
            return False
        i, j = diffs
        return j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def near_identical(old: str, new: str) -> bool:
    """Whether ``new`` reads as a respelling of ``old``.

    Equal after case-folding and dropping ``_`` and ``-`` (``rate_limited`` ->
    ``ratelimited``), or one edit apart when both are at least 4 characters long
    (``cancelled`` -> ``canceled``). Shorter members are too short to call a one-letter
    difference a respelling (``ok`` / ``no``).
    """
    if old == new:
        return False
    a, b = _fold(old), _fold(new)
    if a == b:
        return True
    return min(len(old), len(new)) >= 4 and _one_edit_apart(a, b)


def respellings(removed: Iterable[str], added: Iterable[str]) -> list[tuple[str, str]]:
    """Pair each removed member with the first unpaired added member that respells it."""
    free = sorted(added)
    pairs: list[tuple[str, str]] = []
    for old in sorted(removed):
        for new in free:
            if near_identical(old, new):
                pairs.append((old, new))
                free.remove(new)
                break
    return pairs


def _member_diff(
    old: LockedField, new: LockedField
) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(removed, added, respelled) members; respelled pairs are in neither list."""
    before, after = set(old.members or ()), set(new.members or ())
    pairs = respellings(before - after, after - before)
    paired_old = {a for a, _ in pairs}
    paired_new = {b for _, b in pairs}
    removed = sorted(before - after - paired_old)
    added = sorted(after - before - paired_new)
    return removed, added, pairs


# --- the checks --------------------------------------------------------------------------


def _event_no_delete(pair: VersionPair) -> Iterator[Change]:
    if pair.base is not None and pair.current is None:
        yield _change(
            pair,
            "EVENT_NO_DELETE",
            "breaking",
            None,
            f"version {pair.version} was deleted; its view, stored rows and the services "
            "still emitting it lose their definition",
        )
    elif pair.base is None and pair.current is not None:
        if pair.kept_versions:
            older = ", ".join(str(v) for v in sorted(pair.kept_versions))
            detail = f"new version {pair.version} (a new view; version {older} kept)"
        else:
            detail = "new event"
        yield _change(pair, "EVENT_NO_DELETE", "addition", None, detail)


def _field_no_delete(pair: VersionPair) -> Iterator[Change]:
    both = _both(pair)
    if both is None:
        return
    base, current = both
    for old in base.fields:
        if current.field(old.name) is None:
            yield _change(
                pair,
                "FIELD_NO_DELETE",
                "breaking",
                old.name,
                "field deleted; its view column and every query that reads it break",
            )


def _field_same_type(pair: VersionPair) -> Iterator[Change]:
    for old, new in _common(pair):
        if not _same_type(old, new):
            yield _change(
                pair,
                "FIELD_SAME_TYPE",
                "breaking",
                old.name,
                f"type changed from {old.type} ({old.kind}) to {new.type} ({new.kind}); "
                "the sink column keeps its type",
            )


def _field_no_required_add(pair: VersionPair) -> Iterator[Change]:
    both = _both(pair)
    if both is None:
        return
    base, current = both
    for new in current.fields:
        if base.field(new.name) is not None:
            continue
        if new.required:
            yield _change(
                pair,
                "FIELD_NO_REQUIRED_ADD",
                "breaking",
                new.name,
                "new field is required; rows already stored and services not yet "
                "upgraded do not have it (add it as optional)",
            )
        else:
            yield _change(
                pair, "FIELD_NO_REQUIRED_ADD", "addition", new.name, "optional field added"
            )


def _field_same_requiredness(pair: VersionPair) -> Iterator[Change]:
    for old, new in _common(pair):
        if old.required and not new.required:
            yield _change(
                pair,
                "FIELD_SAME_REQUIREDNESS",
                "breaking",
                old.name,
                "required field became optional; queries that rely on it never being "
                "NULL (group-bys, joins, counts) change meaning",
            )
        elif new.required and not old.required:
            yield _change(
                pair,
                "FIELD_SAME_REQUIREDNESS",
                "breaking",
                old.name,
                "optional field became required; stored rows and services not yet "
                "upgraded may not have it",
            )


def _enum_value_no_delete(pair: VersionPair) -> Iterator[Change]:
    for old, new in _common(pair):
        if not (_same_type(old, new) and old.kind == "enum"):
            continue
        removed, added, _ = _member_diff(old, new)
        if removed:
            yield _change(
                pair,
                "ENUM_VALUE_NO_DELETE",
                "breaking",
                old.name,
                f"member(s) {', '.join(removed)} deleted; stored rows keep them and the "
                "view would turn them into NULL",
            )
        if added:
            yield _change(
                pair,
                "ENUM_VALUE_NO_DELETE",
                "addition",
                old.name,
                f"member(s) {', '.join(added)} added",
            )


def _enum_value_same_spelling(pair: VersionPair) -> Iterator[Change]:
    for old, new in _common(pair):
        if not (_same_type(old, new) and old.kind == "enum"):
            continue
        _, _, pairs = _member_diff(old, new)
        for before, after in pairs:
            yield _change(
                pair,
                "ENUM_VALUE_SAME_SPELLING",
                "breaking",
                old.name,
                f"member {before} respelled as {after}: a delete plus an add; stored rows "
                f"keep {before} and queries filtering on it find nothing new",
            )


def _bound_no_narrow(pair: VersionPair) -> Iterator[Change]:
    for old, new in _common(pair):
        if not (_same_type(old, new) and old.kind == "int"):
            continue
        narrowed: list[str] = []
        widened: list[str] = []
        if old.ge is not None and new.ge is not None and new.ge != old.ge:
            (narrowed if new.ge > old.ge else widened).append(f"ge {old.ge} -> {new.ge}")
        if old.le is not None and new.le is not None and new.le != old.le:
            (narrowed if new.le < old.le else widened).append(f"le {old.le} -> {new.le}")
        if narrowed:
            yield _change(
                pair,
                "BOUND_NO_NARROW",
                "breaking",
                old.name,
                f"bound narrowed ({', '.join(narrowed)}); stored values outside it would "
                "read as NULL",
            )
        elif widened:
            yield _change(
                pair,
                "BOUND_NO_NARROW",
                "addition",
                old.name,
                f"bound widened ({', '.join(widened)})",
            )


def _describe_precision(digits: int | None) -> str:
    return "exact" if digits is None else significant_digits(digits)


def _field_precision(pair: VersionPair) -> Iterator[Change]:
    """A precision change keeps every stored row valid and every query working: an
    addition. Fewer digits only removes information; more digits (or none) is a
    capacity growth, which CAPACITY_GROWTH judges."""
    for old, new in _common(pair):
        if not (_same_type(old, new) and old.kind == "int") or old.precision == new.precision:
            continue
        fewer = new.precision is not None and (
            old.precision is None or new.precision < old.precision
        )
        effect = "new lines are rounded" if fewer else "new lines say more"
        yield _change(
            pair,
            "FIELD_PRECISION",
            "addition",
            old.name,
            f"precision {_describe_precision(old.precision)} -> "
            f"{_describe_precision(new.precision)}; {effect}",
        )


def _lcs(a: Sequence[str], b: Sequence[str]) -> set[str]:
    """Names in a longest common subsequence of ``a`` and ``b`` (both duplicate-free)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
            )
    kept: set[str] = set()
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            kept.add(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return kept


def _column_order_append_only(pair: VersionPair) -> Iterator[Change]:
    both = _both(pair)
    if both is None:
        return
    base, current = both
    old_order = [n for n in base.field_names if current.field(n) is not None]
    new_order = list(current.field_names)
    kept_order = [n for n in new_order if base.field(n) is not None]
    in_place = _lcs(old_order, kept_order)
    for name in kept_order:
        if name not in in_place:
            yield _change(
                pair,
                "COLUMN_ORDER_APPEND_ONLY",
                "breaking",
                name,
                f"field moved (lock position {old_order.index(name) + 1}, now "
                f"{new_order.index(name) + 1}); view columns keep their order",
            )
    last_kept = max((new_order.index(n) for n in kept_order), default=-1)
    for position, name in enumerate(new_order):
        if base.field(name) is None and position < last_kept:
            yield _change(
                pair,
                "COLUMN_ORDER_APPEND_ONLY",
                "breaking",
                name,
                f"new field inserted at position {position + 1}, before existing fields; "
                "new fields go at the end",
            )


def _description_edit(pair: VersionPair) -> Iterator[Change]:
    both = _both(pair)
    if both is None:
        return
    base, current = both
    if base.description_sha256 != current.description_sha256:
        yield _change(pair, "DESCRIPTION_EDIT", "addition", None, "event description edited")
    for old, new in _common(pair):
        if old.description_sha256 != new.description_sha256:
            yield _change(pair, "DESCRIPTION_EDIT", "addition", old.name, "description edited")


def _sink_column_same_type(base: SchemaLock, current: SchemaLock) -> Iterator[Change]:
    """Every event and version writes into one sink table: one column, one type.

    Only fields that are new or retyped in ``current`` are judged, against every field
    of the base lock (rows of deleted versions are still in the table) and the fields
    judged before them; a field's own entry in the base is FIELD_SAME_TYPE's business.
    """
    columns: dict[str, list[tuple[str, str, int, str]]] = {}  # column -> (type, event, v, field)
    for name, version, entry in base.versions():
        for f in entry.fields:
            columns.setdefault(sanitise_column(f.name), []).append((f.type, name, version, f.name))
    for name, version, entry in current.versions():
        before = base.events.get(name, {}).get(version)
        for f in entry.fields:
            old = before.field(f.name) if before is not None else None
            if old is not None and old.type == f.type:
                continue
            column = sanitise_column(f.name)
            clash = next(
                (
                    o
                    for o in columns.get(column, [])
                    if o[0] != f.type and o[1:] != (name, version, f.name)
                ),
                None,
            )
            if clash is not None:
                yield Change(
                    "SINK_COLUMN_SAME_TYPE",
                    "breaking",
                    name,
                    version,
                    f.name,
                    f"sink column {column} is {clash[0]} (from {clash[1]}.{clash[3]} "
                    f"v{clash[2]}); a {f.type} field cannot share it, even in a new version",
                )
            columns.setdefault(column, []).append((f.type, name, version, f.name))


def _capacity(name: str, version: int, entry: LockedEvent) -> EventCapacity:
    return event_capacity(entry.spec(name, version))


def _baseline(base: SchemaLock, name: str, version: int) -> tuple[int, LockedEvent] | None:
    """What a version's capacity is measured against: its own entry in the base lock,
    or, for a new version, the newest version the base has of that event."""
    versions = base.events.get(name, {})
    if version in versions:
        return version, versions[version]
    older = [v for v in versions if v < version] or list(versions)
    return (max(older), versions[max(older)]) if older else None


def _grown_fields(before: EventCapacity | None, after: EventCapacity) -> list[str]:
    """``name a -> b bits`` for every field that can say more than it could (new ones too)."""
    grown = []
    for new in after.fields:
        old = before.field(new.name) if before is not None else None
        old_values = old.values if old is not None else 1  # a field that was not there: 1 value
        if new.values > old_values:
            was = old.bits if old is not None else "new, 0.0"
            grown.append(f"{new.name} {was} -> {new.bits}")
    return grown


def _base_references(base: SchemaLock) -> frozenset[str]:
    """Every review reference the base lock has, on any event: none approves again."""
    return frozenset(r.reference for _, _, entry in base.versions() for r in entry.data_reviews)


def _covering_review(
    known: frozenset[str], name: str, version: int, after: LockedEvent, needed: int
) -> tuple[LockedReview | None, list[str]]:
    """A review that approves this growth, and why each other review did not: it must
    name this event and version, be new (its reference on no event of the base lock),
    and approve at least ``needed`` tenths."""
    refused = []
    for review in after.data_reviews:
        if (review.event, review.schema_version) != (name, version):
            named = (
                "no event" if review.event is None else (f"{review.event} v{review.schema_version}")
            )
            refused.append(f"data review {review.reference} names {named}, not this event")
        elif review.reference in known:
            refused.append(f"data review {review.reference} is in the base lock already")
        elif review_tenths(review.bits) >= needed:
            return review, []
        else:
            approved = show_bits(review_tenths(review.bits))
            refused.append(f"data review {review.reference} approves only {approved} bits")
    return None, refused


def _capacity_growth(base: SchemaLock, current: SchemaLock) -> Iterator[Change]:
    """A version that can say more than the base lock's is a finding; a data review
    naming that event version, whose reference the base lock has on no event, for at
    least the new capacity, clears it.

    Against no lock at all (a catalogue's first lock) there is nothing to grow from: the
    first lock is the baseline, and every event's capacity shows in ``check``.
    """
    if not base.events:
        return
    known = _base_references(base)
    for name, version, entry in current.versions():
        after = _capacity(name, version, entry)
        found = _baseline(base, name, version)
        before = _capacity(name, found[0], found[1]) if found is not None else None
        grown = _grown_fields(before, after)
        if before is not None and not grown:
            continue
        was = "nothing (a new event)" if before is None else f"{before.bits} bits"
        if before is not None and found is not None and found[0] != version:
            was += f" (version {found[0]})"
        what = ", ".join(grown) if grown else "no fields"
        detail = f"capacity grew from {was} to {after.bits} bits per line ({what})"
        if before is not None and after.tenths <= before.tenths:
            # One field widened while others narrowed: a new channel all the same.
            detail = (
                f"capacity changed from {was} to {after.bits} bits per line, "
                f"a field can say more ({what})"
            )
        reviewed, refused = _covering_review(known, name, version, entry, after.tenths)
        if reviewed is None:
            detail += "".join(f"; {why}" for why in refused)
            yield Change("CAPACITY_GROWTH", "breaking", name, version, None, detail)
        else:
            approved = show_bits(review_tenths(reviewed.bits))
            detail += (
                f"; data review {reviewed.reference} approves {approved} bits "
                f"(reason: {reviewed.reason})"
            )
            yield Change("CAPACITY_GROWTH", "addition", name, version, None, detail)


COMPAT_RULES: tuple[CompatRule, ...] = (
    CompatRule(
        "EVENT_NO_DELETE",
        "event",
        "an event version, once locked, is never deleted",
        _event_no_delete,
    ),
    CompatRule("FIELD_NO_DELETE", "field", "a locked field is never deleted", _field_no_delete),
    CompatRule(
        "FIELD_SAME_TYPE", "field", "a field keeps its kind and sink type", _field_same_type
    ),
    CompatRule("FIELD_NO_REQUIRED_ADD", "field", "a new field is optional", _field_no_required_add),
    CompatRule(
        "FIELD_SAME_REQUIREDNESS",
        "field",
        "a field stays required or optional",
        _field_same_requiredness,
    ),
    CompatRule(
        "ENUM_VALUE_NO_DELETE",
        "field",
        "a member, once locked, is never deleted",
        _enum_value_no_delete,
    ),
    CompatRule(
        "ENUM_VALUE_SAME_SPELLING",
        "field",
        "a member is never respelled (case, underscores, one-letter edits)",
        _enum_value_same_spelling,
    ),
    CompatRule("BOUND_NO_NARROW", "field", "int bounds only ever widen", _bound_no_narrow),
    CompatRule(
        "FIELD_PRECISION",
        "field",
        "a measurement's precision may change (an addition: stored rows stay valid)",
        _field_precision,
    ),
    CompatRule(
        "COLUMN_ORDER_APPEND_ONLY",
        "field",
        "fields keep their order; new fields go at the end",
        _column_order_append_only,
    ),
    CompatRule(
        "SINK_COLUMN_SAME_TYPE",
        "lock",
        "one field name has one sink type across every event and version",
        _sink_column_same_type,
    ),
    CompatRule(
        "CAPACITY_GROWTH",
        "lock",
        "an event version says no more than the base lock's unless a new data review covers it",
        _capacity_growth,
    ),
    CompatRule(
        "DESCRIPTION_EDIT", "field", "descriptions may change (an addition)", _description_edit
    ),
)


def compare(base: SchemaLock, current: SchemaLock) -> tuple[Change, ...]:
    """Every change from ``base`` to ``current``, by rule, in lock order."""
    keys = sorted(
        {(n, v) for n, v, _ in base.versions()} | {(n, v) for n, v, _ in current.versions()}
    )
    pairs = [
        VersionPair(
            event,
            version,
            base.events.get(event, {}).get(version),
            current.events.get(event, {}).get(version),
            frozenset(base.events.get(event, {}).keys() & current.events.get(event, {}).keys())
            - {version},
        )
        for event, version in keys
    ]
    changes: list[Change] = []
    for pair in pairs:
        for rule in COMPAT_RULES:
            if rule.scope != "lock":
                changes.extend(rule.check(pair))
    for rule in COMPAT_RULES:
        if rule.scope == "lock":
            changes.extend(rule.check(base, current))
    return tuple(changes)


def classify_changes(changes: Iterable[Change], event: str | None = None) -> Classification:
    """The worst classification among ``changes`` (of one event, if given)."""
    worst: Classification = "none"
    for change in changes:
        mine = event is None or change.event == event
        if mine and _RANK[change.classification] > _RANK[worst]:
            worst = change.classification
    return worst


# --- reviewed exceptions ----------------------------------------------------------------


class ExceptionEntryError(AgentTelemetryError, ValueError):
    """An ``[[exceptions]]`` entry is malformed; the message names the key, not its value."""


# A capacity growth is cleared by a data review next to the model, never by the config.
_EXCEPTABLE = tuple(
    r.id
    for r in COMPAT_RULES
    if r.id not in ("DESCRIPTION_EDIT", "FIELD_PRECISION", "CAPACITY_GROWTH")
)


class CompatException(BaseModel):
    """A reviewed breaking change: an ``[[exceptions]]`` entry in the deployment config.

    It lets exactly one rule pass for one event (and one field, for field rules), in
    every version, for as long as it stays in the config.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    rule: str
    event: str
    field: str | None = None
    reason: str

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, rule: str) -> str:
        if rule not in _EXCEPTABLE:
            raise ExceptionEntryError(
                f"not a compatibility rule that can be excepted; one of: {', '.join(_EXCEPTABLE)}"
            )
        return rule

    @field_validator("reason")
    @classmethod
    def _has_reason(cls, reason: str) -> str:
        if not reason.strip():
            raise ExceptionEntryError("empty: say why breaking readers is acceptable")
        return reason.strip()

    @model_validator(mode="after")
    def _field_matches_scope(self) -> CompatException:
        scope = next(r.scope for r in COMPAT_RULES if r.id == self.rule)
        if scope == "event" and self.field is not None:
            raise ExceptionEntryError(f"{self.rule} is about whole events: leave out field")
        if scope != "event" and self.field is None:
            raise ExceptionEntryError(f"{self.rule} is about one field: name it in field")
        return self

    def covers(self, change: Change) -> bool:
        return (self.rule, self.event, self.field) == (change.rule, change.event, change.field)


@dataclass(frozen=True, slots=True)
class CompatOutcome:
    """Changes sorted into what fails the check, what an exception let pass, and the rest."""

    breaking: tuple[Change, ...]
    excepted: tuple[tuple[Change, CompatException], ...]
    additions: tuple[Change, ...]
    unused_exceptions: tuple[CompatException, ...]

    @property
    def ok(self) -> bool:
        return not self.breaking


def apply_exceptions(
    changes: Iterable[Change], exceptions: Iterable[CompatException] = ()
) -> CompatOutcome:
    exceptions = tuple(exceptions)
    breaking: list[Change] = []
    excepted: list[tuple[Change, CompatException]] = []
    additions: list[Change] = []
    used: set[int] = set()
    for change in changes:
        if change.classification == "addition":
            additions.append(change)
            continue
        match = next((i for i, e in enumerate(exceptions) if e.covers(change)), None)
        if match is None:
            breaking.append(change)
        else:
            used.add(match)
            excepted.append((change, exceptions[match]))
    unused = tuple(e for i, e in enumerate(exceptions) if i not in used)
    return CompatOutcome(tuple(breaking), tuple(excepted), tuple(additions), unused)
