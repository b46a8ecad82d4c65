"""The built manual, read in headless chromium as a newcomer reads it.

The site is built once per session (``mkdocs build --strict``, as ``make docs`` does) and
opened as files, which is how ``site/index.html`` is read without a server, and once over a
local server for search. Every page: no console error; no code block or table wider than
the column unless it scrolls (and at 1280 px, none of the example blocks that were clipped
before); identifiers in table cells on one line; every internal link and anchor resolves.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.browser import DESKTOP, PHONE, Visit, file_url, visit, visits
from tests.docs.blocks import REPO

# Boxes wider than their column that do not scroll: what a reader cannot see. Run in the
# page, so it measures what chromium laid out.
CLIPPED_JS = """
() => {
  // The content area: Material lets table scrollers reach into its padding on purpose.
  const column = document.querySelector('.md-content').getBoundingClientRect();
  const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const found = [];
  for (const el of document.querySelectorAll('.md-typeset pre > code, .md-typeset__scrollwrap')) {
    const box = el.getBoundingClientRect();
    if (box.right > column.right + 1) found.push('sticks out: ' + el.textContent.slice(0, 40));
    if (el.scrollWidth > el.clientWidth + 1 && !scrolls(el))
      found.push('clipped: ' + el.textContent.slice(0, 40));
  }
  return found;
}
"""
# An identifier in a table cell broken over two lines (`pipeline_ru` / `n`).
BROKEN_JS = """
() => Array.from(document.querySelectorAll('.md-typeset table code'))
  .filter((el) => el.getClientRects().length > 1)
  .map((el) => el.textContent)
"""
# At 1280 px a code block of up to 100 characters a line (this repository's line length)
# fits the column without scrolling; 73 of 111 were cut at the old 680 px column.
MUST_FIT_CHARS = 100
SIDE_BY_SIDE = 8  # pages loading at once: their idle waits overlap, memory stays small
SCROLLING_JS = """
(limit) => Array.from(document.querySelectorAll('.md-typeset pre > code'))
  .filter((el) => Math.max(...el.textContent.split('\\n').map((l) => l.length)) <= limit)
  .filter((el) => el.scrollWidth > el.clientWidth + 1)
  .map((el) => el.textContent.slice(0, 60))
"""
LINKS_JS = "() => Array.from(document.querySelectorAll('a[href]')).map((a) => a.href)"
# The page itself wider than the window: the whole page scrolls sideways (a code block or
# table may scroll inside itself). The widest element names the culprit.
PAGE_SCROLL_JS = """
() => {
  const root = document.documentElement;
  if (root.scrollWidth <= root.clientWidth) return [];
  let widest = null;
  for (const el of document.querySelectorAll('body *')) {
    const right = el.getBoundingClientRect().right;
    if (right > root.clientWidth + 1 && (!widest || right > widest.right))
      widest = {right, what: el.tagName + ' ' + (el.textContent || '').slice(0, 40)};
  }
  return [`${root.scrollWidth} > ${root.clientWidth}: ${widest ? widest.what : '?'}`];
}
"""


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    subprocess.run(
        [str(mkdocs), "build", "--strict", "-q", "-d", str(out)],
        cwd=REPO,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.glob("*.html") if p.name != "404.html")


def test_the_site_has_a_page_for_every_page_of_the_manual(site: Path) -> None:
    sources = {p.stem for p in (REPO / "docs").glob("*.md")}
    assert {p.stem for p in _pages(site)} == sources


@dataclass(frozen=True)
class Reading:
    """One page at one width, as chromium laid it out; each test asserts one aspect."""

    problems: list[str]  # console errors, page errors, requests leaving the machine
    clipped: list[str]
    broken: list[str]
    scrolling: list[str]
    links: list[str]
    page_scroll: list[str]


def _reading(seen: Visit) -> Reading:
    return Reading(
        problems=seen.console_errors + seen.page_errors + seen.remote_requests(),
        clipped=seen.page.evaluate(CLIPPED_JS),
        broken=seen.page.evaluate(BROKEN_JS),
        scrolling=seen.page.evaluate(SCROLLING_JS, MUST_FIT_CHARS),
        links=seen.page.evaluate(LINKS_JS),
        page_scroll=seen.page.evaluate(PAGE_SCROLL_JS),
    )


@pytest.fixture(scope="session")
def readings(site: Path, browser: Any) -> dict[str, dict[str, Reading]]:
    """Every page read once per width (one pass each: the site has ~25 pages), a few
    pages side by side."""
    widths = {"1280px": DESKTOP, "phone": PHONE}
    return {width: _read_all(browser, _pages(site), viewport) for width, viewport in widths.items()}


def _read_all(browser: Any, pages: list[Path], viewport: dict[str, int]) -> dict[str, Reading]:
    found: dict[str, Reading] = {}
    for start in range(0, len(pages), SIDE_BY_SIDE):
        chunk = pages[start : start + SIDE_BY_SIDE]
        with visits(browser, [file_url(page) for page in chunk], viewport) as seen:
            found |= {page.name: _reading(one) for page, one in zip(chunk, seen, strict=True)}
    return found


def _found(readings: dict[str, Reading], aspect: str) -> dict[str, list[str]]:
    return {name: getattr(r, aspect) for name, r in readings.items() if getattr(r, aspect)}


def test_every_page_opens_as_a_file_with_no_console_error_and_no_request_out(
    readings: dict[str, dict[str, Reading]],
) -> None:
    assert _found(readings["1280px"], "problems") == {}
    assert _found(readings["phone"], "problems") == {}


@pytest.mark.parametrize("width", ["1280px", "phone"])
def test_no_code_block_or_table_is_clipped_and_no_identifier_breaks(
    readings: dict[str, dict[str, Reading]], width: str
) -> None:
    assert _found(readings[width], "clipped") == {}
    assert _found(readings[width], "broken") == {}


@pytest.mark.parametrize("width", ["1280px", "phone"])
def test_no_page_scrolls_sideways(readings: dict[str, dict[str, Reading]], width: str) -> None:
    # scrollWidth <= clientWidth on every page of the manual, at 390 px too.
    assert _found(readings[width], "page_scroll") == {}


def test_at_1280px_every_block_of_up_to_100_characters_a_line_fits(
    readings: dict[str, dict[str, Reading]],
) -> None:
    assert _found(readings["1280px"], "scrolling") == {}


def _anchors(page: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))


def test_every_internal_link_and_anchor_resolves(
    readings: dict[str, dict[str, Reading]],
) -> None:
    anchors = functools.cache(_anchors)
    dead = []
    for name, reading in readings["1280px"].items():
        for link in reading.links:
            parts = urlsplit(link)
            if parts.scheme != "file":
                continue
            target = Path(unquote(parts.path))
            if target.is_dir():
                dead.append(f"{name} -> {link} (a folder: a file:// reader gets a listing)")
            elif not target.is_file():
                dead.append(f"{name} -> {link}")
            elif (
                parts.fragment
                and target.suffix == ".html"
                and unquote(parts.fragment) not in anchors(target)
            ):
                dead.append(f"{name} -> {link} (no such anchor)")
    assert dead == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.mark.parametrize("how", ["served", "file"])
def test_search_finds_dedupe(site: Path, served: str, browser: Any, how: str) -> None:
    url = f"{served}/index.html" if how == "served" else file_url(site / "index.html")
    with visit(browser, url) as seen:
        seen.page.click("input.md-search__input")
        seen.page.keyboard.type("dedupe", delay=20)
        seen.page.wait_for_function(
            "() => /[0-9]+ matching/.test("
            "document.querySelector('.md-search-result__meta').textContent)",
            timeout=30_000,
        )
        titles = seen.page.locator(".md-search-result__item").all_inner_texts()
        assert any("dedupe" in title for title in titles)
        assert seen.console_errors == []
        assert seen.remote_requests(served) == []
