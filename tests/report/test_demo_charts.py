"""The manual's pictures of the demo's morning are the report's own charts of the demo's
log, drawn fresh: never a hand-made or outdated picture (scripts/demo_charts.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.docs.blocks import REPO

_spec = importlib.util.spec_from_file_location("demo_charts", REPO / "scripts" / "demo_charts.py")
assert _spec is not None
assert _spec.loader is not None
demo_charts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo_charts)


def test_the_demo_pictures_in_the_manual_are_fresh_drawings_of_the_demo(
    demo_report: tuple[Path, Path],
) -> None:
    log, _page = demo_report
    assert demo_charts.stale(log) == []
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").glob("*.md"))
    for name in demo_charts.CHARTS.values():
        assert f'src="img/{name}" alt="' in pages, f"docs/img/{name} is on no page with alt text"
