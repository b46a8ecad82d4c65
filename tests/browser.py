"""Headless Debian chromium, driven by playwright, for every page test (the review page,
the report, the manual's pictures).

playwright's Python package drives the browser over the DevTools protocol; it is given
Debian's own ``chromium`` (``executable_path``), so nothing is downloaded. The Makefile's
set-up installs that package when it is missing; a missing browser fails these tests, it
never skips them. One browser per test session (``browser`` fixture in tests/conftest.py);
each page gets a fresh context, which records every console message, page error and
network request, so a test can assert a page is offline and quiet.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
# What a fresh, quiet, offline-friendly headless run needs: no sandbox (tests run as
# root), no GPU, and none of chromium's own background traffic, so that any request
# recorded is the page's.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_path() -> str:
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if found is None:
        raise RuntimeError(
            "Debian's chromium is not installed: `make test` installs it "
            "(apt-get install -y chromium)"
        )
    return found


@contextmanager
def launch() -> Iterator[Browser]:
    """chromium with a fresh profile: playwright gives every launch its own temporary
    ``--user-data-dir`` (it refuses one passed in ``args``) and removes it on close."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_path(),
            headless=True,
            args=list(FLAGS),
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Visit:
    """What a page did while it loaded: console messages, errors, requests."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def network_requests(self) -> list[str]:
        """Requests other than the page's own file (and data: URLs inside it)."""
        own = self.page.url
        return [url for url in self.requests if url != own and not url.startswith("data:")]


@contextmanager
def visit(browser: Browser, path: Path, *, width: int = 1200) -> Iterator[Visit]:
    """Open ``path`` from file:// in a fresh context and record what it does."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    seen = Visit(page)
    page.on("console", lambda m: seen.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.page_errors.append(str(e)))
    page.on("request", lambda r: seen.requests.append(r.url))
    try:
        page.goto(path.resolve().as_uri(), wait_until="load")
        yield seen
    finally:
        context.close()
