"""sqlglot's error text as our messages show it: without terminal escape codes.

A ParseError underlines the offending token with ANSI codes (``\\x1b[4m...\\x1b[0m``),
which a log, a CI page or a JSON report shows as garbage.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sql_error_text(exc: Exception) -> str:
    return _ANSI.sub("", str(exc))
