"""Parsing the documents the commands read: telemetry.toml, the schema lock, approval
records. The one place that calls a TOML or JSON parser on a whole file.

Parsers recurse once per level of nesting, and so does whatever walks what they return
(pydantic, ``repr`` in an error, ``pickle``): a file nested 100,000 levels deep would end
in a ``RecursionError`` traceback. Here a document nested deeper than ``MAX_NESTING``
is refused with one line naming the file, whether the parser itself gave up (a
``RecursionError``) or returned it (TOML's dotted keys nest without recursing). The log
reader (``warehouse._reading.records``) applies the same limit to each record, and counts a
deeper one as ``too_deep`` rather than failing the command.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable
from typing import Any, Final

# Far beyond what a real document holds (a lock nests 7 levels, a LogEntry about 5,
# BigQuery's STRUCT at most 15) and far within what Python's recursion limit allows
# (1,000 frames) for anything that walks the value afterwards.
MAX_NESTING: Final = 128

Refusal = Callable[[str], Exception]
# A dotted key (``a.b.c = 1`` or a table header ``[a.b.c]``) of more than MAX_NESTING
# parts: tomllib takes time quadratic in the parts (100,000 take half a minute), so such
# a key is refused before it parses. A part is a bare key or a quoted one; a match starts
# only where a bare key starts, and parts are taken possessively: linear time.
_KEY_PART = r"""(?:[A-Za-z0-9_-]++|"[^"\\\n]*+"|'[^'\n]*+')"""
_DEEP_DOTTED_KEY = re.compile(
    rf"(?<![A-Za-z0-9_-])(?:{_KEY_PART}[ \t]*+\.[ \t]*+){{{MAX_NESTING}}}{_KEY_PART}"
)
_CONTAINERS = (dict, list, tuple)


def too_deep(origin: str) -> str:
    return f"{origin}: nested deeper than {MAX_NESTING} levels"


def depth_exceeds(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether lists and dicts nest in ``value`` deeper than ``limit`` (``{}`` is 1).
    Walks level by level without recursing, and stops at the first level past it."""
    level: list[object] = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[object] = []
        for item in level:
            children: Iterable[object] = (
                item.values()
                if isinstance(item, dict)
                else item
                if isinstance(item, list | tuple)
                else ()
            )
            below.extend(child for child in children if isinstance(child, _CONTAINERS))
        level = below
    return False


def json_document(text: str, origin: str, refuse: Refusal) -> Any:
    """The JSON value of ``text``; ``refuse(message)`` is raised when it nests too deep.
    A syntax error raises ``json.JSONDecodeError``, for the caller to word."""
    return _bounded(lambda: json.loads(text), origin, refuse)


def toml_document(text: str, origin: str, refuse: Refusal) -> dict[str, Any]:
    """The TOML table of ``text``; ``refuse(message)`` is raised when it nests too deep
    (nested arrays and inline tables recurse in the parser; dotted keys and table headers
    nest without it). A syntax error raises ``tomllib.TOMLDecodeError``."""
    if _DEEP_DOTTED_KEY.search(text):
        raise refuse(too_deep(origin))
    table: dict[str, Any] = _bounded(lambda: tomllib.loads(text), origin, refuse)
    return table


def _bounded(parse: Callable[[], Any], origin: str, refuse: Refusal) -> Any:
    """What ``parse()`` returns, refused when the parser recursed too deep or what it
    returned nests past MAX_NESTING."""
    try:
        value = parse()
    except RecursionError:
        raise refuse(too_deep(origin)) from None
    if depth_exceeds(value):
        raise refuse(too_deep(origin))
    return value
