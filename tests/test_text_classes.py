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


def test_each_escape_form_starts_where_python_starts_it() -> None:
    # The last code point of each form and the first of the next: \xff, \u0100, \uffff,
    # \U00010000 (U+00FF is a letter and stays; U+0100 too: their neighbours show the
    # forms through characters that are escaped).
    for char, want in (
        ("\x9f", "\\x9f"),
        ("\u00ad", "\\xad"),  # soft hyphen: a format character in the \x form
        ("\u0378", "\\u0378"),  # unassigned, just past \xff
        ("\uffff", "\\uffff"),
        ("\U00010000", "\U00010000"),  # LINEAR B SYLLABLE B008 A: a letter, shown
        ("\U0001000c", "\\U0001000c"),  # unassigned, just past \uffff
        ("\U0010ffff", "\\U0010ffff"),
    ):
        assert clean(char) == want, hex(ord(char))


def test_rich_text_is_the_clean_text_never_read_as_markup() -> None:
    from agent_telemetry._text import rich_text

    text = rich_text("[bold]x[/]\x1b[2J", style="red")
    assert (text.plain, str(text.style)) == ("[bold]x[/]\\x1b[2J", "red")
    assert rich_text("a").style == ""


def test_markup_shows_brackets_as_written() -> None:
    from rich.text import Text

    from agent_telemetry._text import markup

    assert Text.from_markup(markup("[prod]\u202e ::x")).plain == "[prod]\\u202e ::x"


def test_a_workflow_property_escapes_its_separators() -> None:
    from agent_telemetry._text import github_property

    assert github_property("a:b,c%d\n::e") == "a%3Ab%2Cc%25d\\n%3A%3Ae"
    assert github_property("::x") == "\\x3a%3Ax"


def test_clean_json_cleans_every_string_and_key_and_keeps_the_rest() -> None:
    from agent_telemetry._text import clean_json

    value = {
        "\x1bkey": ["::add-mask::x", ("##[group]", 1)],
        "n": {"deep": "\u202e"},
        3: None,
        "t": True,
        "f": 1.5,
    }
    assert clean_json(value) == {
        "\\x1bkey": ["\\x3a:add-mask::x", ["#\\x23[group]", 1]],
        "n": {"deep": "\\u202e"},
        3: None,
        "t": True,
        "f": 1.5,
    }


def test_clean_of_an_object_whose_str_fails_names_its_type() -> None:
    class Broken:
        def __str__(self) -> str:
            raise ValueError("jane.doe@example.com")

    assert clean(Broken()) == "<Broken>"
    assert clean(42) == "42"
    assert lines(Broken()) == ["<Broken>"]
    assert lines("") == [""]
    assert lines(b"a\nb") == ["b'a\\nb'"]  # str() of a non-str: one line


def test_a_double_colon_after_other_text_stays_as_written() -> None:
    # Only blanks before "::" make a workflow command; any other text keeps it plain.
    for text in ("X::y", "XX ::add-mask::z", "a::b", "std::vector"):
        assert clean(text) == text
    assert clean("\u200b::x") == "\\u200b::x"  # the runner sees "\u200b", not "::"


def test_a_str_is_cleaned_as_it_holds_whatever_its_str_says() -> None:
    class Shown(str):
        def __str__(self) -> str:
            return "\x1b[2J::add-mask::x"

    assert clean(Shown("plain")) == "plain"
