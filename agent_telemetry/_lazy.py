"""Names a package exports from modules it imports only on first use.

views, warehouse, deploy and analyze export this way, so importing a package (and the
CLI, which imports them all) does not pay for sqlglot, duckdb or google-cloud-bigquery.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_getattr(
    namespace: MutableMapping[str, Any], table: Mapping[str, str]
) -> Callable[[str], Any]:
    """A module ``__getattr__``: ``table`` maps a name to the submodule defining it; the
    value is cached in ``namespace`` (the package's globals), so each loads once."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
