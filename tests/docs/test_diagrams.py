"""The manual's pictures are drawn from their Graphviz sources, never edited by hand."""

from __future__ import annotations

import subprocess
import sys

from tests.docs.blocks import REPO


def test_every_committed_picture_is_a_fresh_drawing_of_its_source() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "diagrams.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    drawn = {p.stem for p in (REPO / "docs" / "img").glob("*.svg")}
    assert drawn >= {p.stem for p in (REPO / "docs" / "diagrams").glob("*.dot")}


def test_every_picture_is_on_a_page_with_a_text_alternative() -> None:
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").glob("*.md"))
    for source in (REPO / "docs" / "diagrams").glob("*.dot"):
        marker = f'src="img/{source.stem}.svg" alt="'
        assert marker in pages, f"docs/img/{source.stem}.svg is on no page with an alt text"


def test_every_picture_opens_full_size() -> None:
    # On a phone a diagram is drawn at the column's width, its labels a few pixels high:
    # a tap on it opens the picture alone, at its own size (and zoomable).
    import re

    for page in (REPO / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for source in re.findall(r'<img class="picture" src="([^"]+)"', text):
            assert f'<a href="{source}"><img class="picture" src="{source}"' in text, (
                f"{page.name}: {source} does not open full size"
            )
