"""The one error the emitter raises, and only in strict mode.

Messages are built from names the package controls (event, field, rule). Pydantic's
own ``ValidationError`` text quotes the input, so it never leaves this package: not as
a message, not as ``__cause__``, not as ``__context__``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_telemetry.errors import AgentTelemetryError


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a line is invalid: which field (None for the event itself) and which rule.

    ``rule`` is pydantic's error type (``enum``, ``int_type``, ``less_than_equal``,
    ``missing``, ...) or one of the emitter's own: ``unknown_field`` (keys the model does
    not define, never named; ``count`` of them), ``reserved_key`` (an envelope key such as
    ``time`` passed as a field; ``field`` names it), ``unknown_event``, ``bad_event_type``,
    ``retired_version`` (a retired model of an event), ``unusable_value`` (validating the
    value raised), ``outside_domain`` (the model accepted a value outside the field's
    set or bounds: the emitter's own re-check refused it).
    """

    field: str | None
    rule: str
    hint: str | None = None  # built from model names only, never from the input
    count: int = 1  # how many keys this one problem stands for (``unknown_field x3``)

    def __str__(self) -> str:
        text = self.rule if self.field is None else f"{self.field}: {self.rule}"
        if self.count > 1:
            text = f"{text} x{self.count}"
        return text if self.hint is None else f"{text} ({self.hint})"


class TelemetryValidationError(AgentTelemetryError, ValueError):
    """Strict mode: the event or one of its fields breaks the model.

    ``event`` is the event name (None when the event itself is unknown), ``problems``
    the field/rule pairs in model order. No attribute holds the rejected value.
    """

    def __init__(self, event: str | None, problems: tuple[Problem, ...]) -> None:
        self.event = event
        self.problems = problems
        where = event if event is not None else "telemetry event"
        super().__init__(f"{where}: " + "; ".join(str(p) for p in problems))

    def __reduce__(
        self,
    ) -> tuple[type[TelemetryValidationError], tuple[str | None, tuple[Problem, ...]]]:
        return (type(self), (self.event, self.problems))
