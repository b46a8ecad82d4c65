"""The base of every error agent-telemetry raises, and the errors every layer shares.

A leaf module (it imports nothing of the package), so any layer, and the CLI before it
loads the models, can catch errors by class: ``except AgentTelemetryError`` catches
them all.
"""

from __future__ import annotations


class AgentTelemetryError(Exception):
    """Base class of every error the package raises on purpose."""


class SchemaRuleError(AgentTelemetryError, TypeError):
    """An event model breaks a definition rule; raised when the class is defined.

    The message names the class, the field and the rule ID, so the fix is obvious
    from the traceback alone.
    """

    def __init__(self, model: str, field: str | None, rule: str, detail: str) -> None:
        self.model = model
        self.field = field
        self.rule = rule
        self.detail = detail
        where = f"{model}.{field}" if field else model
        super().__init__(f"{where}: {rule}: {detail}")


class FileRefusedError(AgentTelemetryError):
    """A generated file, a lock or an approval record that is not read or written as it
    stands: a symbolic link (never followed), not UTF-8, or not writable. The message
    names the path (made safe to print) and nothing of what the file holds or points to.
    """


class ModelLoadError(AgentTelemetryError):
    """The models module cannot be imported for a reason other than a definition rule: a
    syntax error, a model pydantic itself cannot build. The message names the file (and
    class, when known), not a traceback."""
