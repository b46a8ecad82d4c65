"""JSON structure without decoding: where array elements end, how deep a value nests.

A regular expression skips strings and plain text in C; Python sees only brackets and
the commas between an array's elements, so a pretty-printed export costs a handful of
steps per element. Nothing here recurses, and nothing holds more than the caller asks:
an element longer than its limit is measured, not kept.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

# A string's body up to its closing quote, a backslash at the end of the data, or the end.
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
# Plain text and whole strings up to the next bracket (and, between an array's
# elements, comma), or up to a string that does not end in this data.
_RUN_INSIDE = re.compile(rb'[^\[\]{}"]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^\[\]{}"]*)*', re.S)
_RUN_BETWEEN = re.compile(rb'[^\[\]{}",]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^\[\]{}",]*)*', re.S)
_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE = ord('"')
_COMMA = ord(",")
_ARRAY_OPEN = ord("[")
_ARRAY_CLOSE = ord("]")
# A BOM between two arrays: files concatenated (`cat a.json b.json`), b saved with one.
_BOM = codecs.BOM_UTF8


def nesting(data: bytes, limit: int | None = None) -> tuple[int, bool]:
    """(deepest nesting of arrays and objects, whether ``data`` is one whole value:
    its brackets close exactly at its end, outside any string). Stops as soon as the
    nesting passes ``limit``."""
    depth = deepest = 0
    closed = False
    pos, size = 0, len(data)
    while pos < size:
        end = _RUN_INSIDE.match(data, pos).end()  # type: ignore[union-attr]
        if end >= size:
            break
        char = data[end]
        if char == _QUOTE:  # a string that never ends
            return deepest, False
        if closed:
            return deepest, False  # more brackets after the value closed
        if char in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
            if limit is not None and deepest > limit:
                return deepest, False
        else:
            depth -= 1
            if depth < 0:
                return deepest, False
            closed = depth == 0
        pos = end + 1
    return deepest, closed and not data[pos:].strip()


def balanced(data: bytes) -> bool:
    """Whether ``data`` is one whole JSON array or object by its brackets and strings."""
    return nesting(data)[1]


@dataclass(frozen=True, slots=True)
class Element:
    """One element of an array: its bytes (None when longer than the limit), its depth."""

    data: bytes | None
    depth: int  # deepest nesting inside the element: {} is 1, a number 0


@dataclass(frozen=True, slots=True)
class Broken:
    """Where the arrays stop making sense: an element cut off by the end of the data,
    an array never closed, or something after the last array that is not one."""

    reason: str  # "cut" (inside an element), "unclosed" or "trailing"


class ArraySplitter:
    """The elements of one or more JSON arrays fed in chunks (``[..] [..]`` as well).

    ``feed`` yields each element as soon as its separator arrives; ``finish`` yields
    what the end of the data left open. An element is kept only up to ``limit`` bytes.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.depth = 0  # 0 outside every array, 1 between an array's elements
        self.in_string = False
        self.escaped = False  # the data ended on a backslash inside a string
        self.parts: list[bytes] = []
        self.size = 0
        self.deepest = 0
        self.done = False  # after trailing garbage, nothing more is read
        self.held = b""  # the start of a BOM between arrays that the data ended in

    def _keep(self, data: bytes, start: int, end: int) -> None:
        if end <= start:
            return
        self.size += end - start
        if self.size <= self.limit:
            self.parts.append(data[start:end])
        elif self.parts:
            self.parts.clear()

    def _element(self) -> Element | None:
        size, parts, deepest = self.size, self.parts, self.deepest
        self.parts, self.size, self.deepest = [], 0, 0
        if size > self.limit:
            return Element(None, deepest)
        data = b"".join(parts).strip()
        return Element(data, deepest) if data else None

    def feed(self, data: bytes) -> Iterator[Element | Broken]:
        pos, size = 0, len(data)
        while pos < size and not self.done:
            if self.in_string:
                if self.escaped:  # this byte is escaped by the previous chunk's backslash
                    self.escaped = False
                    self._keep(data, pos, pos + 1)
                    pos += 1
                    continue
                end = _STRING_BODY.match(data, pos).end()  # type: ignore[union-attr]
                if end >= size:
                    self._keep(data, pos, size)
                    return
                self._keep(data, pos, end + 1)
                if data[end] == _QUOTE:
                    self.in_string = False
                else:
                    self.escaped = True  # a backslash ends the data
                pos = end + 1
                continue
            if self.depth == 0:
                if self.held:  # a BOM's first bytes ended the previous data
                    data, pos = self.held + data[pos:], 0
                    size, self.held = len(data), b""
                pos = _WHITESPACE.match(data, pos).end()  # type: ignore[union-attr]
                if pos >= size:
                    return
                if data.startswith(_BOM, pos):
                    pos += len(_BOM)
                    continue
                if _BOM.startswith(data[pos:]):  # the data ends inside a BOM
                    self.held = data[pos:]
                    return
                if data[pos] != _ARRAY_OPEN:
                    self.done = True
                    yield Broken("trailing")
                    return
                self.depth = 1
                pos += 1
                continue
            pattern = _RUN_BETWEEN if self.depth == 1 else _RUN_INSIDE
            end = pattern.match(data, pos).end()  # type: ignore[union-attr]
            self._keep(data, pos, end)
            if end >= size:
                return
            char = data[end]
            pos = end + 1
            if char == _QUOTE:
                self.in_string = True
                self._keep(data, end, pos)
            elif char in _OPEN:
                self.depth += 1
                self.deepest = max(self.deepest, self.depth - 1)
                self._keep(data, end, pos)
            elif self.depth == 1 and char in (_COMMA, _ARRAY_CLOSE):
                element = self._element()
                if element is not None:
                    yield element
                if char == _ARRAY_CLOSE:
                    self.depth = 0
            elif char in _CLOSE and self.depth > 1:
                self.depth -= 1
                self._keep(data, end, pos)
            else:  # "}" between elements: part of a broken element
                self._keep(data, end, pos)

    def finish(self) -> Iterator[Element | Broken]:
        """What the end of the data leaves: an element cut off, or an array never closed."""
        if self.held:  # the data ended in the first bytes of a BOM: not another array
            self.held = b""
            yield Broken("trailing")
            return
        if self.done or self.depth == 0:
            return
        if self.in_string or self.depth > 1:
            self._element()
            yield Broken("cut")
            return
        element = self._element()
        if element is not None:
            yield element
        yield Broken("unclosed")
