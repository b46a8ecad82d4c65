"""Draw the manual's pictures: each ``docs/diagrams/NAME.dot`` into ``docs/img/NAME.svg``
with Graphviz's ``dot`` (Debian's ``graphviz``, installed by the Makefile's set-up).

``make diagrams`` writes them; ``--check`` (run by tests/docs/test_diagrams.py) exits 1
naming every committed picture that differs from a fresh drawing of its source.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "docs" / "diagrams"
PICTURES = REPO / "docs" / "img"


def draw(source: Path) -> bytes:
    dot = shutil.which("dot")
    if dot is None:
        raise SystemExit("Graphviz's dot is not installed: apt-get install graphviz")
    return subprocess.run([dot, "-Tsvg", str(source)], capture_output=True, check=True).stdout


def picture_of(source: Path) -> Path:
    return PICTURES / f"{source.stem}.svg"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for source in sorted(SOURCES.glob("*.dot")):
        drawn, picture = draw(source), picture_of(source)
        if args.check:
            if not picture.is_file() or picture.read_bytes() != drawn:
                stale.append(picture.relative_to(REPO).as_posix())
        else:
            PICTURES.mkdir(exist_ok=True)
            picture.write_bytes(drawn)
    for name in stale:
        print(f"{name}: differs from its source; run `make diagrams`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
