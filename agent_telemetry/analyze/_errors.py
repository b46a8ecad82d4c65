"""The analyzer's errors: light (no zetasql), so the CLI can catch them without the extra."""

from __future__ import annotations

from agent_telemetry.errors import AgentTelemetryError

ANALYZE_EXTRA = "analyze"
INSTALL_HINT = f"pip install 'agent-telemetry[{ANALYZE_EXTRA}]'"


class AnalyzerUnavailable(AgentTelemetryError, RuntimeError):
    """GoogleSQL's analyzer cannot start: the extra is missing, or zetasql is not the
    version whose internals ``agent_telemetry.analyze._runtime`` was written against."""


class AnalyzerRejected(AgentTelemetryError):
    """The analyzer refused a request it should not refuse (the catalog, the options).

    A rejected *statement* is not an exception: it is an ``Analysis`` with ``ok`` False.
    """
