"""Outside text in Markdown reads as written: ``markdown_text`` and ``markdown_code``.

The data dictionary (docs/telemetry.md, on GitHub and on the mkdocs site) puts model
docstrings, descriptions and reasons through ``markdown_text``, as a paragraph of its own
and in table cells; the pull-request comment puts server text through ``markdown_code``.
What a reader sees is what a renderer makes of it, so every hostile string is rendered by
markdown-it-py (CommonMark with GitHub's tables, strikethrough and bare-URL links) and by
Python-Markdown with mkdocs.yml's extensions, and the HTML must hold exactly the blocks
the page wrote (no link, image, raw HTML, emphasis, heading, list, rule, quote, code
block, admonition, attribute or broken table) with the text shown as written, and the
paragraph or cell after it still there.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

import pytest

from agent_telemetry._text import clean, markdown_code, markdown_text

MKDOCS_EXTENSIONS = ["admonition", "attr_list", "tables", "toc", "md_in_html"]
MKDOCS_EXTENSIONS += ["pymdownx.highlight", "pymdownx.superfences", "pymdownx.details"]

HOSTILE = {
    # links, images, raw HTML, attribute lists
    "link": "[Approve now](javascript:alert(1))",
    "reference_link": "[x][ref]\n\n[ref]: http://evil.example/",
    "image": "![img](http://x.example/i.png)",
    "angle_autolink": "<https://evil.example/approve>",
    "bare_url": "see https://evil.example/a now",
    "upper_url": "HTTPS://EVIL.EXAMPLE/A",
    "other_scheme": "ftp://evil.example/x",
    "www": "www.evil.example",
    "upper_www": "WWW.EVIL.EXAMPLE",
    "email": "mail ana@evil.example",
    "mailto": "mailto:ana@evil.example",
    "mention": "@team please approve",
    "script": "<script>alert(1)</script>",
    "img_tag": "<img src=x onerror=alert(1)>",
    "comment": "<!-- hidden --> shown",
    "entities": "&lt;b&gt; &amp; &#64; &copy;",
    "attr_list": '*x*{: onclick="alert(1)"}',
    "attr_list_block": "x\n{: .cls }",
    "toc": "[TOC]",
    "footnote": "a[^1]\n[^1]: note",
    # emphasis and other inline formatting
    "stars": "*em* **strong**",
    "underscores": "_em_ __strong__ _",
    "intraword_underscores": "snake_case_name and é_x",
    "strikethrough": "~one~ ~~two~~",
    "inline_code": "`code` and `` ` ``",
    # blocks that a line start would open
    "heading": "# heading",
    "heading_2": "## heading",
    "dash_list": "- item",
    "plus_list": "+ item",
    "star_list": "* item",
    "ordered_list": "1. item",
    "ordered_paren": "12) item",
    "quote": "> quote",
    "dash_rule": "---",
    "underscore_rule": "___",
    "spaced_rule": "_ _ _",
    "star_rule": "* * *",
    "backtick_fence": "```python",
    "tilde_fence": "~~~",
    "tilde_fence_info": "~~~ x",
    "admonition": "!!! note",
    "details": "??? note x",
    "details_open": "???+ note x",
    "indented_code": "    indented",
    "tab_code": "\tcode",
    "table": "| a | b |\n|---|---|\n| c | d |",
    "pipe": "a | b |",
    "setext": "title\n===",
    # backslashes, controls, lines
    "trailing_backslash": "a\\",
    "backslash": "\\",
    "backslash_pipe": "a\\|b",
    "backslash_star": "\\*x\\*",
    "backslash_backtick": "\\`x`",
    "controls": "a\x1b[2Jb\u202ec",
    "lines": "line one\r\nline two\u2028three",
    "workflow": "::add-mask::x ##[group]",
}


@dataclass
class _Block:
    tag: str
    text: str = ""


class _Shown(HTMLParser):
    """Every element of an HTML fragment, in order (with its attributes), and the text
    each top-level block or table cell shows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.blocks: list[_Block] = []
        self.open: list[_Block | None] = []  # per open element: the block it starts

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(f"{tag}{sorted(attrs)}" if attrs else tag)
        block = _Block(tag) if tag in ("p", "td", "th") or not self.open else None
        self.blocks += [block] if block else []
        self.open.append(block)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(f"{tag}{sorted(attrs)}" if attrs else tag)

    def handle_endtag(self, tag: str) -> None:
        self.open.pop()

    def handle_data(self, data: str) -> None:
        inside = [block for block in self.open if block is not None]
        if inside:  # not the line breaks between blocks and cells
            inside[-1].text += data


def rendered(source: str) -> dict[str, _Shown]:
    import markdown
    from markdown_it import MarkdownIt

    out = {}
    for name, html in (
        ("commonmark", MarkdownIt("gfm-like", {"html": True}).render(source)),
        ("mkdocs", markdown.markdown(source, extensions=MKDOCS_EXTENSIONS)),
    ):
        shown = _Shown()
        shown.feed(html)
        out[name] = shown
    return out


def prose(text: object) -> str:
    """What the reader must see of ``text`` as prose: one line, cleaned, blanks as one."""
    value = text if isinstance(text, str) else clean(text)
    return clean(" ".join(value.split()))


TABLE_TAGS = ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"]


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_prose_paragraph_shows_as_written(text: str) -> None:
    source = f"before\n\n{markdown_text(text)}\n\nafter\n"
    for renderer, shown in rendered(source).items():
        assert shown.tags == ["p", "p", "p"], (renderer, source, shown.tags)
        texts = [block.text for block in shown.blocks]
        assert texts == ["before", prose(text), "after"], (renderer, source)


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_prose_in_a_table_cell_stays_in_its_cell(text: str) -> None:
    source = f"| a | b |\n|---|---|\n| {markdown_text(text, table=True)} | after |\n"
    for renderer, shown in rendered(source).items():
        assert shown.tags == TABLE_TAGS, (renderer, source, shown.tags)
        cells = [block.text.strip() for block in shown.blocks if block.tag == "td"]
        assert cells == [prose(text).strip(), "after"], (renderer, source)


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_code_span_shows_the_clean_text_and_nothing_else(text: str) -> None:
    source = f"before {markdown_code(text)} after\n"
    shown_text = clean(text)
    for renderer, shown in rendered(source).items():
        assert shown.tags == ["p", "code"], (renderer, source, shown.tags)
        # Python-Markdown trims a code span's blanks; CommonMark keeps them.
        inner = shown_text if renderer == "commonmark" else shown_text.strip()
        assert [b.text for b in shown.blocks] == [f"before {inner} after"], (renderer, source)


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_code_span_in_a_table_cell_stays_in_its_cell(text: str) -> None:
    # Only the pull-request comment puts code spans in cells: GitHub (CommonMark) reads
    # it. Python-Markdown does not split on a pipe inside a code span, and would show the
    # escape's backslash.
    source = f"| a | b |\n|---|---|\n| {markdown_code(text, table=True)} | after |\n"
    shown = rendered(source)["commonmark"]
    assert shown.tags == [*TABLE_TAGS[:-1], "code", "td"], (source, shown.tags)
    cells = [block.text for block in shown.blocks if block.tag == "td"]
    assert cells == [clean(text), "after"], source


def test_the_markdown_source_reads_as_the_text() -> None:
    """docs/telemetry.md is read raw in diffs too: plain text stays as written, a code
    span takes the shortest fence that holds and a pad only where a backtick or a blank
    at an end needs one."""
    assert markdown_text("plain words, a | b and a_b") == "plain words, a | b and a_b"
    assert markdown_text("a | b", table=True) == "a \\| b"
    assert markdown_text("  two\n\tlines  ") == "two lines"
    assert markdown_code("plain") == "`plain`"
    assert [markdown_code("X-ray"), markdown_code("max X")] == ["`X-ray`", "`max X`"]
    assert markdown_code("a | b") == "`a | b`"
    assert markdown_code("a | b", table=True) == "`a \\| b`"
    assert markdown_code("a `b` c") == "``a `b` c``"
    assert markdown_code("``x") == "``` ``x ```"
    assert markdown_code("x`") == "`` x` ``"
    assert markdown_code(" x") == "`  x `"
    assert markdown_code("`") == "`` ` ``"


@pytest.mark.parametrize("render", [markdown_text, markdown_code])
def test_nothing_gives_nothing_and_a_non_string_its_clean_str(render: object) -> None:
    assert callable(render)
    assert render("") == ""
    assert render(None) == ("None" if render is markdown_text else "`None`")

    class Shown:
        def __str__(self) -> str:
            return "two\nlines [x](y)"

    expected = "two\\\\nlines \\[x\\](y)" if render is markdown_text else "`two\\nlines [x](y)`"
    assert render(Shown()) == expected
