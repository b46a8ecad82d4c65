"""What every page test asserts in the browser, and the screenshots the manual shows."""

from __future__ import annotations

import os
from pathlib import Path

from tests.browser import Visit
from tests.conftest import REPO

SCREENSHOTS = REPO / "docs" / "img"
UPDATE_ENV = "AGENT_TELEMETRY_SCREENSHOTS_UPDATE"
PNG = b"\x89PNG\r\n\x1a\n"


def assert_quiet_and_offline(seen: Visit) -> None:
    assert seen.console_errors == []
    assert seen.page_errors == []
    assert seen.remote_requests() == []


# What makes a whole page scroll sideways: wider than the window it is read in. A code
# block or table may scroll inside itself; the page itself must not.
PAGE_WIDTH_JS = """
() => ({scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth})
"""


def assert_no_page_scroll(seen: Visit) -> None:
    width = seen.page.evaluate(PAGE_WIDTH_JS)
    assert width["scroll"] <= width["client"], f"the page scrolls sideways: {width}"


def screenshot(seen: Visit, name: str, tmp_path: Path) -> Path:
    """Take a full-page screenshot; with AGENT_TELEMETRY_SCREENSHOTS_UPDATE=1 it replaces
    the manual's copy (docs/img/NAME), which must exist and be a PNG either way."""
    shot = tmp_path / name
    seen.page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(PNG)
    committed = SCREENSHOTS / name
    if os.environ.get(UPDATE_ENV) == "1":
        committed.write_bytes(shot.read_bytes())
    assert committed.read_bytes().startswith(PNG), f"docs/img/{name}: not a PNG"
    return shot
