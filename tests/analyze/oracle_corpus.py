"""The oracle's corpus: every JSON spelling of every field's interesting values.

- ``differential()``: the payloads of the preview / check-logs differential corpus
  (tests/warehouse/corpus.py), in each of its styles;
- ``spellings()``: per event, rows whose every field holds the same kind of spelling of
  an interesting value (the bounds, one past them, the largest integers doubles and
  INT64 hold), as ints, doubles, strings with spaces, signs, hex, exponents or
  separators, booleans, nulls, arrays and objects; enum members written as numbers, in
  other cases, padded; booleans in every case;
- ``dedupe()``: the same insert id and timestamp, a NULL insert id, conflicting copies;
- ``spelled_conflicts()``: conflicting copies that differ only in a refused spelling;
- ``entries()``: the hypothesis strategy drawing the same kinds of values at random.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from agent_telemetry.schema import EventSpec, FieldSpec, catalogue
from tests.analyze.oracle import Entry
from tests.warehouse.corpus import DOUBLES, INT_STRINGS, MIXED, NATIVE, STRINGS, make_event

SPECS: tuple[EventSpec, ...] = catalogue()
START = datetime(2026, 5, 9, 23, 59, 30, tzinfo=UTC)  # rows fall on two UTC days
EXACT = 2**53 - 1  # the largest integer every double between it and 0 holds exactly
INT64_MAX = 2**63 - 1
SPELLINGS_FROM = 10_000  # seconds after START


def _when(index: int) -> datetime:
    return START + timedelta(seconds=index, microseconds=(index * 7919) % 1_000_000)


def int_spellings(value: int) -> list[object]:
    """How an integer field's value reaches a payload: natively, as Cloud Logging's
    double, as BigQuery read-backs' string, and the many strings SAFE_CAST reads."""
    text = str(value)
    spellings: list[object] = [
        value,
        float(value),
        text,
        f" {text}",
        f"{text} ",
        f"+{text}" if value >= 0 else f"- {text[1:]}",
        hex(value),
        f"{text}e0",
        f"{text}E+0",
        f"{text}.0",
        f"{text}.",
        f"{text}.5",
        value + 0.5,
        value - 0.25,
        f"{value:,}",
        f"{value:_}",
        f"0{text}" if value >= 0 else f"-0{text[1:]}",
        f"{value / 10}e1" if abs(value) < 2**50 else f"{text}e-0",
        [value],
        {"value": value},
        value != 0,
        "true",
        None,
        "",
        "NaN",
        "inf",
    ]
    return spellings


def enum_spellings(spec: FieldSpec, index: int) -> list[object]:
    member = spec.members[index % len(spec.members)]
    spellings: list[object] = [
        member,
        member.upper(),
        f" {member}",
        f"{member} ",
        [member],
        {"value": member},
        True,
        0,
        None,
        "",
        "zz_not_a_member",
    ]
    if member.isdigit():  # a member written as a number: 1, 1.0, "1.0"
        spellings += [int(member), float(member), f"{member}.0"]
    return spellings


BOOL_SPELLINGS: list[object] = [
    True,
    False,
    "true",
    "false",
    "TRUE",
    "False",
    " true",
    "1",
    "0",
    1,
    0,
    1.0,
    "yes",
    [True],
    {"value": True},
    None,
]


def _interesting(spec: FieldSpec) -> list[int]:
    assert spec.ge is not None
    assert spec.le is not None
    values = [spec.ge, spec.le, spec.ge - 1, spec.le + 1, EXACT, -EXACT - 2, INT64_MAX, 2**64]
    if spec.precision is not None:  # one step either side of the grid's first coarse band
        values += [10**spec.precision + 1, 10**spec.precision + 10]
    return values


def _field_spellings(spec: FieldSpec, index: int) -> list[object]:
    if spec.kind == "enum":
        return enum_spellings(spec, index)
    if spec.kind == "bool":
        return BOOL_SPELLINGS
    values = _interesting(spec)
    return int_spellings(values[index % len(values)])


def _payload(event: EventSpec, pick: Callable[[FieldSpec], object]) -> dict[str, Any]:
    payload: dict[str, Any] = {"event": event.name, "schema_version": 1}
    for spec in event.fields:
        payload[spec.name] = pick(spec)
    return payload


def spellings() -> list[Entry]:
    """Per event, row ``i`` holds spelling ``i`` of an interesting value in every field
    (the value changes every round, so each spelling meets each value)."""
    found: list[Entry] = []
    for event in SPECS:
        for round_ in range(4):
            width = max(len(_field_spellings(f, round_)) for f in event.fields)
            for i in range(width):

                def pick(spec: FieldSpec, i: int = i, round_: int = round_) -> object:
                    options = _field_spellings(spec, round_ + i)
                    return options[i % len(options)]

                payload = _payload(event, pick)
                payload["unknown_fields"] = pick_count(i)
                payload["invalid_fields"] = invalid_fields_spelling(event, i)
                when = _when(SPELLINGS_FROM + len(found))  # apart from the other parts' times
                found.append(Entry.of(payload, when, f"s-{len(found)}"))
    return found


def pick_count(index: int) -> object:
    return int_spellings([0, 1, 3, EXACT + 1][index % 4])[index % 26]


def invalid_fields_spelling(event: EventSpec, index: int) -> object:
    name = event.fields[index % len(event.fields)].name
    options: list[object] = [
        [name],
        [name, "not_a_field"],
        [name, 1, {"x": name}, [name], None, True],
        [1],
        [{"x": 1}],
        name,
        [],
        None,
        {"name": name},
        [name, name],
    ]
    return options[index % len(options)]


def differential(count: int = 200, seed: int = 20260509) -> list[Entry]:
    """The differential corpus's payloads, in each of its styles."""
    rnd = random.Random(seed)
    styles = [NATIVE, DOUBLES, MIXED, STRINGS, INT_STRINGS]
    found = []
    for i in range(count):
        event = make_event(styles[i % len(styles)], rnd, _when(i))
        found.append(Entry.of(event.payload, _when(i), f"d-{i}"))
    return found


def _valid(event: EventSpec) -> dict[str, Any]:
    def pick(spec: FieldSpec) -> object:
        if spec.kind == "enum":
            return spec.members[0]
        if spec.kind == "bool":
            return True
        return spec.ge

    return _payload(event, pick)


def dedupe() -> list[Entry]:
    """The copies a sink export holds: the same entry twice and thrice, entries without
    an insert id (never merged), one insert id at two times, and conflicting copies (one
    insert id and timestamp, different payloads)."""
    event = SPECS[0]
    one = _valid(event)
    when, later = _when(1000), _when(1001)
    return [
        Entry.of(one, when, "dup-2"),
        Entry.of(one, when, "dup-2"),
        Entry.of(one, when, "dup-3"),
        Entry.of(one, when, "dup-3"),
        Entry.of(one, when, "dup-3"),
        Entry.of(one, when, None),
        Entry.of(one, when, None),
        Entry.of(one, when, "twice"),
        Entry.of(one, later, "twice"),
        Entry.of(one, later, "dup-other-day"),
        Entry.of(one, later + timedelta(days=1), "dup-other-day"),
    ]


def conflicting() -> list[Entry]:
    """Copies of one entry (insert id and timestamp) whose payloads differ."""
    event = SPECS[0]
    one = _valid(event)
    other = dict(one, **{event.fields[0].name: event.fields[0].members[-1]})
    when = _when(2000)
    return [Entry.of(one, when, "conflict"), Entry.of(other, when, "conflict")]


# Copies of one entry that differ only in a spelling the judgement refuses (read as
# absent, so ranked first) but a lax read (SAFE_CAST, JSON_VALUE, JSON_VALUE_ARRAY) takes
# as a value ranked after the other copy's: (event, key, refused spelling, other value).
SPELLED_CONFLICTS: list[tuple[str, str, object, object]] = [
    ("pipeline_run", "queue_wait_ms", " 5", 3),
    ("pipeline_run", "queue_wait_ms", "0x10", 9),
    ("pipeline_run", "queue_wait_ms", "+5", 3),
    ("pipeline_run", "queue_wait_ms", 5.5, 3),
    ("pipeline_run", "user_runs_today", 2, "1"),
    ("pipeline_render", "passed", "TRUE", False),
    ("pipeline_run", "invalid_fields", [7, "status"], ["lane"]),
    ("pipeline_run", "invalid_fields", [{"x": 1}, "status"], ["lane"]),
]


def spelled_conflicts() -> list[Entry]:
    """Each ``SPELLED_CONFLICTS`` pair as two copies of one entry (consecutive), in both
    orders: the copy kept must not depend on which the export holds first."""
    by_name = {spec.name: spec for spec in SPECS}
    entries = []
    for index, (event, key, refused, other) in enumerate(SPELLED_CONFLICTS):
        base = _valid(by_name[event])
        copies = [dict(base, **{key: refused}), dict(base, **{key: other})]
        for order, pair in enumerate((copies, copies[::-1])):
            when = _when(3000 + 2 * index + order)
            entries += [Entry.of(copy, when, f"spelled-{index}-{order}") for copy in pair]
    return entries


# -- hypothesis: the same kinds of values, drawn at random ---------------------------------

_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_ANY_JSON = st.recursive(
    _JSON_SCALARS | st.just([]) | st.just({}),
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, min_size=1, max_size=3)
    ),
    max_leaves=5,
)


def _int_values(spec: FieldSpec) -> st.SearchStrategy[object]:
    assert spec.ge is not None
    assert spec.le is not None
    near = st.sampled_from(_interesting(spec)) | st.integers(spec.ge - 2, spec.le + 2)
    spelled = near.flatmap(lambda v: st.sampled_from(int_spellings(v)))
    doubles = st.floats(min_value=spec.ge - 2, max_value=spec.le + 2)
    return st.one_of(spelled, doubles, st.integers(-(2**70), 2**70), _ANY_JSON)


def _values(spec: FieldSpec) -> st.SearchStrategy[object]:
    if spec.kind == "enum":
        members = st.sampled_from(spec.members)
        return st.one_of(
            members,
            members.flatmap(lambda m: st.sampled_from(enum_spellings(spec, spec.members.index(m)))),
            _ANY_JSON,
        )
    if spec.kind == "bool":
        return st.one_of(st.sampled_from(BOOL_SPELLINGS), _ANY_JSON)
    return _int_values(spec)


@st.composite
def _payload_strategy(draw: st.DrawFn) -> dict[str, Any]:
    event = draw(st.sampled_from(SPECS))
    version = draw(st.sampled_from([1, 1.0, "1", "1.0", " 1", "+1", "0x1", 2, None]))
    payload: dict[str, Any] = {"event": event.name, "schema_version": version}
    for spec in event.fields:
        if draw(st.booleans()):
            payload[spec.name] = draw(_values(spec))
    if draw(st.booleans()):
        payload["unknown_fields"] = draw(
            st.sampled_from(int_spellings(draw(st.sampled_from([0, 2, EXACT + 1]))))
        )
    if draw(st.booleans()):
        names = st.sampled_from([f.name for f in event.fields] + ["not_a_field"])
        payload["invalid_fields"] = draw(st.lists(names | _JSON_SCALARS, max_size=3))
    return payload


@st.composite
def entries(draw: st.DrawFn, size: int) -> list[Entry]:
    """``size`` entries with random payloads; some repeat an earlier insert id and time."""
    found: list[Entry] = []
    for index in range(size):
        payload = draw(_payload_strategy())
        if found and draw(st.integers(0, 9)) == 0:  # an exported copy of an earlier entry
            earlier = found[draw(st.integers(0, len(found) - 1))]
            found.append(Entry(earlier.payload, earlier.when, earlier.insert_id))
            continue
        insert_id = None if draw(st.integers(0, 9)) == 0 else f"h-{index}"
        found.append(Entry.of(payload, _when(index), insert_id))
    return found
