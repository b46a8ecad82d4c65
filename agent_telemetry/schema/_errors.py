"""Errors raised by the schema layer."""

from __future__ import annotations


class SchemaRuleError(TypeError):
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
