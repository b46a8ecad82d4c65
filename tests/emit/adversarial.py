"""Hypothesis strategies: values a careless service might pass, and what may leak."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from agent_telemetry.emit import REJECTED_EVENT, RejectReason
from agent_telemetry.schema import EVENTS, FieldSpec, event_spec
from agent_telemetry.schema.capacity import round_significant

emails = st.emails()
uuids = st.uuids().flatmap(lambda u: st.sampled_from([str(u), u.hex, str(u).upper()]))
sha256_hex = st.binary(min_size=1, max_size=32).map(lambda b: hashlib.sha256(b).hexdigest())
api_keys = st.one_of(
    st.from_regex(r"sk-[A-Za-z0-9]{32,48}", fullmatch=True),
    st.from_regex(r"AKIA[A-Z0-9]{16}", fullmatch=True),
    st.from_regex(r"ghp_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"AIza[0-9A-Za-z_-]{35}", fullmatch=True),
)
jwts = st.from_regex(
    r"eyJ[A-Za-z0-9_-]{10,40}\.eyJ[A-Za-z0-9_-]{10,60}\.[A-Za-z0-9_-]{16,43}", fullmatch=True
)
ips = st.ip_addresses().map(str)
ints = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([-1, 2**31, 2**63, -(2**63) - 1, 10**100, -(10**100)]),
)
floats = st.one_of(st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1.0, -0.0]))
scalars = st.one_of(emails, uuids, sha256_hex, api_keys, jwts, ips, ints, floats, st.text())
nested = st.recursive(
    scalars | st.booleans() | st.none(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=8), emails), children, max_size=4)
    ),
    max_leaves=8,
)


def spellings(member: str) -> st.SearchStrategy[str]:
    """Near misses of a valid member: case and padding."""
    return st.sampled_from(
        [
            member.upper(),
            member.title(),
            f" {member}",
            f"{member} ",
            f"\t{member}\n",
            member + "\x00",
        ]
    ).filter(lambda s: s != member)


def adversarial(spec: FieldSpec) -> st.SearchStrategy[Any]:
    """Anything but (mostly) a valid value for this field."""
    wrong_type: list[st.SearchStrategy[Any]] = [scalars, nested, st.booleans(), floats]
    if spec.kind == "enum":
        near = st.sampled_from(spec.members).flatmap(spellings)
        return st.one_of(near, *wrong_type)
    if spec.kind == "int":
        assert spec.ge is not None
        assert spec.le is not None
        lo, hi = spec.ge, spec.le
        edge = st.sampled_from([lo - 1, hi + 1, -hi, hi * 10**9])
        as_text = st.integers(lo, hi).map(lambda n: st.sampled_from([str(n), f" {n}", float(n)]))
        return st.one_of(edge, ints, as_text.flatmap(lambda s: s), *wrong_type)
    return st.one_of(st.sampled_from([0, 1, "true", "True", "false", 1.0]), *wrong_type)


def valid(spec: FieldSpec) -> st.SearchStrategy[Any]:
    if spec.kind == "enum":
        return st.sampled_from(spec.members)
    if spec.kind == "int":
        assert spec.ge is not None
        assert spec.le is not None
        return st.integers(spec.ge, spec.le)
    return st.booleans()


ABSENT = object()


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(event name, known fields given, unknown keys given); a field is absent,
    None, valid or adversarial."""
    name = draw(st.sampled_from(list(EVENTS)))
    fields: dict[str, Any] = {}
    for spec in event_spec(EVENTS[name]).fields:
        value = draw(
            st.one_of(st.just(ABSENT), st.none(), valid(spec), adversarial(spec), adversarial(spec))
        )
        if value is not ABSENT:
            fields[spec.name] = value
    names = set(event_spec(EVENTS[name]).field_names)
    unknown = draw(
        st.dictionaries(
            st.one_of(emails, uuids, st.from_regex(r"[a-z_]{1,12}", fullmatch=True)).filter(
                lambda k: k not in names
            ),
            scalars,
            max_size=3,
        )
    )
    return name, fields, unknown


# Every token a line can legitimately hold: a "leak" that is part of one is no leak.
VOCABULARY: tuple[str, ...] = tuple(
    {
        "event",
        "schema_version",
        "severity",
        "time",
        "INFO",
        "invalid_fields",
        "unknown_fields",
        "reason",
        "true",
        "false",
        "null",
        REJECTED_EVENT,
        *(r.value for r in RejectReason),
        *EVENTS,
        *(f.name for m in EVENTS.values() for f in event_spec(m).fields),
        *(x for m in EVENTS.values() for f in event_spec(m).fields for x in f.members),
    }
)
_TIMESTAMPISH = re.compile(r"[0-9:TZ.\-]*")


def leak_texts(value: Any, depth: int = 0) -> Iterator[str]:
    """Texts of ``value`` distinctive enough that finding one in output is a leak."""
    if depth > 20:
        return
    if isinstance(value, str):
        candidates = [value, value.strip()]
    elif isinstance(value, bool) or value is None:
        candidates = []
    elif isinstance(value, int):
        candidates = [str(value)] if len(str(abs(value))) >= 8 else []  # output ints < 10**7
    elif isinstance(value, float):
        candidates = [repr(value)]
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leak_texts(key, depth + 1)
            yield from leak_texts(item, depth + 1)
        return
    elif isinstance(value, list):
        for item in value:
            yield from leak_texts(item, depth + 1)
        return
    else:
        return
    for text in candidates:
        if len(text) < 8 or _TIMESTAMPISH.fullmatch(text):
            continue
        if any(text in token for token in VOCABULARY):
            continue
        yield text


def rounded(spec: FieldSpec, value: Any) -> Any:
    """The value as the emitter writes it: a measurement to its precision."""
    if spec.precision is None:
        return value
    return round_significant(value, spec.precision)
