"""The ``agent-telemetry`` console script: a one-line hint, not a traceback, for a missing extra.

A plain ``pip install agent-telemetry`` installs only what services need to emit
(pydantic, structlog, orjson); the command line and what its commands use come with the
``[cli]`` extra (docs/install.md). This module imports nothing beyond the standard library
until the command line itself loads, so it can say which extra to install.
"""

from __future__ import annotations

import importlib.util
import sys

CLI_EXTRA = "cli"
# Top-level modules the `[cli]` extra installs. google-cloud-bigquery (`[bigquery]`) is not
# here: the deploy commands name their own extra when it is missing.
CLI_EXTRA_MODULES = frozenset({"click", "rich", "jinja2", "sqlglot", "duckdb"})


def missing_cli_module(exc: ImportError) -> str | None:
    """The `[cli]` module whose absence raised ``exc``, or None when ``exc`` is another error.

    Only a module that is really not installed counts: a broken install of one raises an
    ImportError too, and telling its user to install it again would hide the real error.
    """
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    if top not in CLI_EXTRA_MODULES or importlib.util.find_spec(top) is not None:
        return None
    return top


def main() -> None:
    try:
        from agent_telemetry.cli import main as cli_main

        cli_main()
    except ImportError as exc:
        module = missing_cli_module(exc)
        if module is None:
            raise
        print(
            f"agent-telemetry: this command needs {module}, from the [{CLI_EXTRA}] extra: "
            f"pip install 'agent-telemetry[{CLI_EXTRA}]'",
            file=sys.stderr,
        )
        sys.exit(2)  # an error (exit 1 is for violations)


if __name__ == "__main__":
    main()
