"""``views analyze --run``'s settings, importable without zetasql (the command's options)."""

from agent_telemetry.config import Layout

RUN_LAYOUT: Layout = "partitioned"  # the layout the local warehouse's sink table mirrors
DEFAULT_SAMPLE = 1000
MAX_SAMPLE = 10_000  # the reference implementation takes milliseconds per row
