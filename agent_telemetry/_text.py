"""The one door for text this package did not write: paths, deployed descriptions, config
reasons, lock keys, SQL excerpts, library error messages.

Such text reaches terminals, rich tables, JSON reports and GitHub Actions logs. Anyone
who can name a file, edit a description in the BigQuery console or write a config line
could otherwise move the cursor, hide text (ANSI, OSC 8 links, bidi overrides, invisible
fillers), start a new output line with a forged finding, break rich's markup or run a
workflow command (``::add-mask::``, ``##[stop-commands]``). Every printer passes such text
through one of these functions:

- ``clean``: the text on one line, every control, format (bidi, zero-width), separator
  and invisible character shown as a Python-style escape (``\\x1b``, ``\\u202e``,
  ``\\n``), a ``::`` at its start and every ``##[`` neutralised. For plain output and JSON.
- ``markup``: ``clean``, then ``rich.markup.escape``: for a string rich reads as markup.
- ``rich_text``: ``clean`` as a ``rich.text.Text``, which rich never reads as markup.
- ``github_data`` / ``github_property``: ``clean``, then GitHub's own escapes for a
  workflow command's message and its properties.
- ``clean_json``: ``clean`` on every string of a JSON report, keys included.
- ``markdown_code``: ``clean``, as one inert code span (the pull-request comment: no
  link, image, HTML or @mention renders from it, on GitHub or anywhere).
- ``markdown_text``: ``clean``, as prose that renders as written in CommonMark, GitHub
  and Python-Markdown (mkdocs): no link (bare URLs and addresses included), image, raw
  HTML, emphasis, block (heading, list, rule, fence, admonition) or attribute list can
  form.
- HTML: jinja2 with autoescape (the pages); nothing here.

The package's own strings (rule IDs, event names from the models, numbers) need none of
this; anything that came from a file, a server, a config or an exception does. A leaf
module: it imports nothing of the package, and rich only when asked for markup.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from rich.text import Text

_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Unicode categories shown escaped: controls, format characters (bidi embeddings and
# isolates, zero-width joiners, the BOM, soft hyphen), line and paragraph separators,
# private use, surrogates and unassigned code points.
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
# Letters and symbols that render as nothing (Hangul fillers, the braille blank) and the
# Mongolian vowel separator; spaces other than U+0020 are escaped by category below.
# Also the marks that draw nothing (the combining grapheme joiner, the Khmer inherent
# vowels, every variation selector): a run of variation selectors after one visible
# character can carry any bytes unseen.
_INVISIBLE: Final = frozenset(
    "\u115f\u1160\u3164\uffa0\u2800\u180e\u034f\u17b4\u17b5"
    + "".join(map(chr, [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]))
)


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _shown(char: str) -> bool:
    if " " <= char <= "~":  # printable ASCII: the common case, decided at once
        return True
    if char in _INVISIBLE:
        return False
    category = unicodedata.category(char)
    if category == "Zs":
        return False  # U+0020 is handled above; every other space is shown escaped
    return category not in _ESCAPED_CATEGORIES


def clean(text: object) -> str:
    """``text`` (``str()`` of it) on one line, safe for any terminal and any CI log.

    Never raises; never returns a newline, a carriage return or an escape character.
    """
    try:
        value = text if isinstance(text, str) else str(text)
    except Exception:  # a library object whose __str__ fails: say so, not a traceback
        value = f"<{type(text).__name__}>"
    out = "".join(char if _shown(char) else _escape(char) for char in value)
    # GitHub's runner reads a line whose first non-blank characters are "::" as a
    # workflow command, and the legacy "##[command]" form anywhere in a line.
    out = out.replace("##[", "#\\x23[")
    stripped = out.lstrip(" ")
    if stripped.startswith("::"):
        out = out[: len(out) - len(stripped)] + "\\x3a" + stripped[1:]
    return out


def markup(text: object) -> str:
    """``clean(text)`` escaped for rich markup: ``[prod]`` stays ``[prod]`` on screen."""
    from rich.markup import escape

    return escape(clean(text))


def rich_text(text: object, style: str = "") -> Text:
    """``clean(text)`` as a rich ``Text``: never parsed as markup."""
    from rich.text import Text

    return Text(clean(text), style=style)


def github_data(text: object) -> str:
    """``clean(text)`` escaped as a workflow command's message (``%``, CR, LF)."""
    return clean(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: object) -> str:
    """``clean(text)`` escaped as a workflow command's property (also ``:`` and ``,``)."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def clean_json(value: object) -> object:
    """Every string in a JSON-ready ``value`` (keys too) through ``clean``. JSON's own
    escapes keep control characters off a terminal, but not ``##[``, a forged ``::``
    line inside a value someone greps out, or bidi overrides."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def lines(text: object) -> list[str]:
    """``text`` split on its own line breaks, each line ``clean``: for a multi-line
    library message (a SQL error with a caret line) that must keep its shape."""
    value = text if isinstance(text, str) else clean(text)
    return [clean(line) for line in value.splitlines()] or [""]


def _cell_pipes(text: str, table: bool) -> str:
    # A GFM table splits its row on "|" before reading code spans (Python-Markdown's does
    # not, and would show the backslash of a code span's: code cells are for GitHub).
    return text.replace("|", "\\|") if table else text


def markdown_code(text: object, *, table: bool = False) -> str:
    """``clean(text)`` as one Markdown code span: inert everywhere (GitHub links no
    @mention, URL or HTML inside code). The fence is longer than any backtick run inside,
    and padded when the text starts or ends with a backtick or a blank. ``table``: the
    span sits in a table cell (its pipes escaped)."""
    shown = clean(text)
    if not shown:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", shown)), default=0) + 1)
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return _cell_pipes(f"{fence}{pad}{shown}{pad}{fence}", table)


# What can start a link, an image, an attribute list ({: onclick=...}), a code span,
# emphasis or raw HTML in CommonMark, GitHub's Markdown and Python-Markdown:
# backslash-escaped (all three read these escapes) or, for the characters Python-Markdown
# has no escape for, entities ("<", and "~": GitHub's strikethrough, a tilde fence).
_MARKDOWN_ESCAPES: Final = {c: "\\" + c for c in "\\`[]{}*_"} | {
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "~": "&#126;",
}
# An "_" between two letters or digits opens and closes no emphasis in either dialect:
# left as written, so snake_case names read as such.
_MARKDOWN_SPECIAL: Final = re.compile(r"[\\`\[\]{}*<>&~]|(?<![^\W_])_|_(?![^\W_])")
# What GitHub's Markdown (and linkify) turns into a link by itself: a URL's "://", "www."
# and an address's "@". An entity splits the text it sits in, so nothing matches there,
# and it shows as the character it stands for.
_AUTOLINK: Final = re.compile(r"(?i)(?<=[a-z])(:)(?=//)|(?<=www)(\.)|(@)")
_ENTITY: Final = {":": "&#58;", ".": "&#46;", "@": "&#64;"}
# What would make a line that starts with it a block: a heading, a list, a rule, an
# admonition (a quote's ">", a rule's "_" and a fence's "~" are escaped already); "?"
# (a collapsible "??? note" in mkdocs) has no Python-Markdown escape: an entity.
_LINE_START: Final = re.compile(r"^(\d*)([#+!.)-])")
_DETAILS_START: Final = re.compile(r"^\?")


def markdown_text(text: object, *, table: bool = False) -> str:
    """``clean(text)`` on one line (runs of blanks made one space), escaped so Markdown
    shows it as written: no link, image, HTML element or attribute list forms from it."""
    value = text if isinstance(text, str) else clean(text)
    flat = clean(" ".join(value.split()))
    shown = _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_ESCAPES[m.group()], flat)
    shown = _AUTOLINK.sub(lambda m: _ENTITY[m.group()], shown)
    shown = _DETAILS_START.sub("&#63;", _LINE_START.sub(r"\1\\\2", shown))
    return _cell_pipes(shown, table)
