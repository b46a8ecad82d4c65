"""Screenshots of the built manual at 1280 px for review (``make screenshots``): the home
page, the service guide and the analyst's local-warehouse page, into docs/img/screens/.

Run after ``make docs``; reviewed by eye, committed, not compared by tests (chromium's
pixels vary between releases; tests/docs/test_site.py holds the layout itself).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import CHROMIUM_ARGS, DESKTOP, chromium_path, file_url, visit  # noqa: E402

PAGES = ("index", "service-guide", "analyst-local")
OUT = REPO / "docs" / "img" / "screens"


def main() -> int:
    from playwright.sync_api import sync_playwright

    site = REPO / "site"
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=list(CHROMIUM_ARGS)
        )
        for name in PAGES:
            with visit(browser, file_url(site / f"{name}.html"), DESKTOP) as seen:
                seen.page.screenshot(path=str(OUT / f"{name}.png"))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
