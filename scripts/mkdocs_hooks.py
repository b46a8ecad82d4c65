"""mkdocs hooks (mkdocs.yml ``hooks:``): put the iframe-worker shim into the built site.

Chromium refuses web workers from ``file://`` pages, so Material's search needs the
iframe-worker shim to work in ``site/index.html`` opened as a file. Material's offline
plugin would load it from unpkg.com at read time; the manual loads nothing from the
network, so ``make docs`` fetches the pinned npm package once (``$(DOCS_SHIM)`` in the
Makefile) and this hook copies it into the site, where ``extra.polyfills`` points.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

SHIM = Path(".venv") / "iframe-worker-shim.js"
PUBLISHED = Path("assets") / "javascripts" / "iframe-worker-shim.js"


def on_post_build(config: Any, **_: Any) -> None:
    source = Path(config.config_file_path).parent / SHIM
    if not source.is_file():
        raise PluginError(f"{SHIM} is missing: `make docs` fetches it (make {SHIM})")
    target = Path(config.site_dir) / PUBLISHED
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
