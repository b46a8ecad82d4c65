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
