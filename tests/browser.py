"""Headless Debian ``chromium`` for the page tests (the manual, the review page, the report).

Playwright drives the system browser (``executable_path``): it downloads nothing, and
``make test``'s set-up installs Debian's chromium when it is missing, so these tests never
skip. One browser per test session (``tests/conftest.py``: the ``browser`` fixture); each
test opens its own page through ``visit``, which records what a reader would not see:
console errors, uncaught exceptions and every request that leaves the machine.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

# The flags a closed network needs: without the background-networking ones chromium keeps
# calling Google's hosts, and each refused connection is noise or a console error.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError(
            "Debian's chromium is not installed: `make test` installs it (apt-get install "
            "chromium); the page tests need it and never skip"
        )
    return found


@dataclass
class Visit:
    """One page as a reader saw it, and what went wrong on the way."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def remote_requests(self, allowed_origin: str | None = None) -> list[str]:
        """Requests to anywhere but local files (and ``allowed_origin``, a test server)."""
        return [
            url
            for url in self.requests
            if not url.startswith(LOCAL_SCHEMES)
            and not (allowed_origin and url.startswith(allowed_origin))
        ]


@contextmanager
def _opened(browser: Browser, viewport: dict[str, int]) -> Iterator[Visit]:
    """A fresh page in its own context, recording what a reader would not see."""
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    seen = Visit(page)
    page.on(
        "console",
        lambda message: (
            seen.console_errors.append(message.text) if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
    page.on("request", lambda request: seen.requests.append(request.url))
    try:
        yield seen
    finally:
        context.close()


@contextmanager
def visit(browser: Browser, url: str, viewport: dict[str, int] = DESKTOP) -> Iterator[Visit]:
    """Open ``url`` in a fresh page and wait until the network is idle."""
    with _opened(browser, viewport) as seen:
        seen.page.goto(url, wait_until="networkidle")
        yield seen


@contextmanager
def visits(
    browser: Browser, urls: list[str], viewport: dict[str, int] = DESKTOP
) -> Iterator[list[Visit]]:
    """``visit`` for several pages side by side: each loads in its own fresh page, then
    each waits until its network is idle. The idle waits (half a second of silence a
    page) overlap instead of adding up: one at a time, the manual's 50 readings spent
    25 s waiting."""
    with ExitStack() as stack:
        seen = [stack.enter_context(_opened(browser, viewport)) for _ in urls]
        for one, url in zip(seen, urls, strict=True):
            one.page.goto(url, wait_until="load")
        for one in seen:
            one.page.wait_for_load_state("networkidle")
        yield seen


def file_url(path: Path) -> str:
    return path.resolve().as_uri()
