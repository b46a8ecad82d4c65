"""The sanitiser's character classes, code point by code point.

``clean`` shows a character raw only when it is printable ASCII or a visible non-ASCII
character. Every C0 and C1 control and DEL, every space other than U+0020, every format
character (bidi, zero-width, tag characters), line and paragraph separators, private use
and unassigned code points leave escaped; GitHub's runner ignores the blanks before a
workflow command, so ``::`` after them is neutralised as at column 0.

The expected escape comes from Python's own ``unicode_escape`` codec, not from the
sanitiser: ``\\x1b``, ``\\u202e``, ``\\U000e0001``, ``\\n``.
"""

from __future__ import annotations

import sys
import unicodedata
from functools import cache

import pytest

from agent_telemetry._text import clean, github_data, lines

ESCAPED_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cs", "Cn"}
# Letters, symbols and marks that draw nothing: a reader cannot see them, so they leave
# escaped. The variation selectors can smuggle a whole message after one emoji.
VARIATION_SELECTORS = "".join(
    chr(c) for c in [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)
INVISIBLE = "\u115f\u1160\u3164\uffa0\u2800\u180e\u034f\u17b4\u17b5" + VARIATION_SELECTORS


def python_escape(char: str) -> str:
    return char.encode("unicode_escape").decode("ascii")


@cache
def by_category() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        found.setdefault(unicodedata.category(char), []).append(char)
    return found


def escaped_chars() -> list[str]:
    table = by_category()
    chars = [c for cat in sorted(ESCAPED_CATEGORIES) for c in table.get(cat, []) if c != " "]
    return chars + list(INVISIBLE)


def test_every_c0_and_c1_control_and_del_leaves_escaped() -> None:
    controls = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]]
    assert len(controls) == 65
    for char in controls:
        assert clean(f"a{char}b") == f"a{python_escape(char)}b", hex(ord(char))


def test_every_space_but_the_ascii_one_leaves_escaped() -> None:
    spaces = by_category()["Zs"]
    assert {"\u00a0", "\u3000", "\u202f"} <= set(spaces)
    for char in spaces:
        want = " " if char == " " else python_escape(char)
        assert clean(f"a{char}b") == f"a{want}b", hex(ord(char))


def test_every_format_separator_private_and_unassigned_character_leaves_escaped() -> None:
    table = by_category()
    # The tag characters and the bidi isolates are format characters too.
    assert {"\U000e0041", "\u2066"} <= set(table["Cf"])
    for category in ("Cf", "Zl", "Zp", "Co", "Cn"):
        chars = table[category]
        # Private use and unassigned run to ~1M code points: their ends and every 61st.
        sample = chars if len(chars) < 1000 else [*chars[:200], *chars[::61], *chars[-200:]]
        for char in sample:
            assert clean(char) == python_escape(char), (category, hex(ord(char)))


def test_the_invisible_letters_leave_escaped() -> None:
    for char in INVISIBLE:
        assert clean(f"a{char}b") == f"a{python_escape(char)}b", hex(ord(char))


def test_a_message_hidden_in_variation_selectors_shows() -> None:
    # One selector per byte of "key", after a smiley: on screen, only the smiley.
    hidden = "\U0001f600" + "".join(chr(0xE0100 + b - 16) for b in b"key")
    out = clean(hidden)
    assert out == "\U0001f600\\U000e015b\\U000e0155\\U000e0169", out


def test_every_other_character_stays_as_written() -> None:
    escaped = set(escaped_chars())
    visible = "".join(
        chr(c) for c in range(sys.maxunicode + 1) if chr(c) not in escaped and c != 0x5C
    )
    # A sample of every block, in one string: letters, marks, digits, symbols, CJK, emoji.
    assert clean(visible[::97]) == visible[::97]
    assert clean("naïve café 日本 😀 ~!@#$%^&*()") == "naïve café 日本 😀 ~!@#$%^&*()"


def test_whatever_comes_out_holds_no_escaped_class() -> None:
    out = clean("".join(escaped_chars()))
    assert all(" " <= c <= "~" for c in out)


@pytest.mark.parametrize("blanks", ["", " ", "    ", "\t", " \t ", "\u00a0", "\u3000 "])
@pytest.mark.parametrize("command", ["::add-mask::secret", "::error title=x::forged"])
def test_a_workflow_command_after_leading_blanks_is_neutralised(blanks: str, command: str) -> None:
    out = clean(blanks + command)
    # The runner trims every blank before "::"; what is left must not start with it.
    assert not out.lstrip().startswith("::"), out
    assert out.endswith(command[1:])  # only the first colon changes: the text reads the same
    assert out.lstrip().startswith(("\\x3a:", "\\t", "\\xa0", "\\u3000")), out


@pytest.mark.parametrize("blanks", ["", " ", "   "])
def test_the_legacy_command_form_is_neutralised_anywhere(blanks: str) -> None:
    for text in (f"{blanks}##[stop-commands]t", f"x {blanks}##[group]y", "##[a##[b"):
        out = clean(text)
        assert "##[" not in out, out


def test_each_line_of_a_message_is_neutralised_on_its_own() -> None:
    got = lines("SELECT 1\n   ::add-mask::x\n\t##[group]g\n\x1b[2J")
    assert got == ["SELECT 1", "   \\x3a:add-mask::x", "\\t#\\x23[group]g", "\\x1b[2J"]
    for line in got:
        assert not line.lstrip().startswith("::")


def test_a_workflow_message_keeps_one_line() -> None:
    assert github_data("  ::warning::x\r\n%") == "  \\x3a:warning::x\\r\\n%25"
