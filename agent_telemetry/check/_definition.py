"""Stage 1: the definition rules. Importing the models runs them; a model that breaks
one raises ``SchemaRuleError`` at class definition, which becomes a finding here.

Nothing in this module imports ``agent_telemetry.schema`` at top level: when a model
breaks a rule that import is exactly what fails. ``SchemaRuleError`` lives in the leaf
``agent_telemetry.errors``, so it is caught by class.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_telemetry.check._findings import Finding
from agent_telemetry.check._paths import display_path
from agent_telemetry.errors import ModelLoadError, SchemaRuleError

if TYPE_CHECKING:
    from agent_telemetry.schema.lock import SchemaLock

STAGE = "definition"


def reviewed_notices(
    versions: Mapping[tuple[str, int], Any], landed: SchemaLock | None = None
) -> list[Finding]:
    """A notice for every reviewed exception to the definition rules (a cardinality
    waiver, a reviewed name, a data review), with its reason: never a silent exception.
    With ``landed`` (the lock at the base a change is checked against), an exception that
    lock already records, word for word, is not announced again: it was announced in the
    change that brought it. Call once the models have loaded."""
    from agent_telemetry.check._locate import model_location
    from agent_telemetry.schema import event_spec
    from agent_telemetry.schema.lock import lock_review

    notices: list[Finding] = []
    for model in versions.values():
        spec = event_spec(model)
        base = None if landed is None else landed.events.get(spec.name, {}).get(spec.schema_version)
        for field in spec.fields:
            waived = "ENUM_SIZE" if field.kind == "enum" else "INT_CARDINALITY"
            reviewed = (
                (waived, field.waiver, f"{field.domain} waived"),
                ("FIELD_NAME_NO_IDENTIFIER", field.name_review, "name reviewed"),
            )
            was = None if base is None else base.field(field.name)
            before = {
                "FIELD_NAME_NO_IDENTIFIER": None if was is None else was.name_review,
                waived: None if was is None else was.cardinality_waiver,
            }
            for rule, reason, what in reviewed:
                if reason is None or (was is not None and before[rule] == reason):
                    continue
                file, line = model_location(model, field.name)
                notices.append(
                    Finding(
                        stage=STAGE,
                        rule=rule,
                        message=f"{what} (reason: {reason})",
                        severity="notice",
                        event=spec.name,
                        field=field.name,
                        version=spec.schema_version,
                        file=file,
                        line=line,
                    )
                )
        file, line = model_location(model, None)
        for review in spec.reviews:
            if base is not None and lock_review(review) in base.data_reviews:
                continue
            notices.append(
                Finding(
                    stage=STAGE,
                    rule="DATA_REVIEW",
                    message=(
                        f"data review {review.reference} approves {review.bits:.1f} bits "
                        f"(reason: {review.reason})"
                    ),
                    severity="notice",
                    event=spec.name,
                    version=spec.schema_version,
                    file=file,
                    line=line,
                )
            )
    return notices


def capacities(models: Mapping[str, Any]) -> dict[str, str]:
    """Each current event's capacity as ``check`` prints it (``55.7 bits``)."""
    from agent_telemetry.schema import event_spec
    from agent_telemetry.schema.capacity import EVENT_BUDGET_BITS, event_capacity

    return {
        name: f"{event_capacity(event_spec(model)).bits}/{EVENT_BUDGET_BITS} bits"
        for name, model in models.items()
    }


def _field_line(file: str, class_line: int, field: str) -> int:
    try:
        lines = Path(file).read_text(encoding="utf-8").splitlines()
    except OSError:
        return class_line
    pattern = re.compile(rf"^\s+{re.escape(field)}\s*:")
    for number in range(class_line, len(lines)):
        if pattern.match(lines[number]):
            return number + 1
        if number > class_line and re.match(r"^\S", lines[number]):
            break  # left the class body
    return class_line


def _class_site(exc: BaseException) -> tuple[str, int] | None:
    """(file, line) of the class a registry rule names (``VersionRuleError.model_class``):
    the registry is checked after its classes were defined, so no frame points at them.
    Their module may have failed to import with the registry, so it is found by name in
    ``sys.modules`` or among the traceback's frames."""
    model = getattr(exc, "model_class", None)
    if model is None:
        return None
    file: str | None = getattr(sys.modules.get(model.__module__), "__file__", None)
    tb = exc.__traceback__
    while file is None and tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == model.__module__:
            file = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if file is None or not Path(file).is_file():
        return None
    pattern = re.compile(rf"^\s*class\s+{re.escape(model.__name__)}\b")
    lines = Path(file).read_text(encoding="utf-8").splitlines()
    line = next((i for i, text in enumerate(lines, start=1) if pattern.match(text)), 1)
    return file, line


def definition_finding(exc: SchemaRuleError) -> Finding:
    """A finding for a ``SchemaRuleError``: rule, model, field and the line to fix."""
    model = exc.model
    field = exc.field
    file: str | None = None
    line: int | None = None
    from agent_telemetry._loader import definition_site

    site = definition_site(exc.__traceback__) or _class_site(exc)
    if site is not None and Path(site[0]).exists():
        file = display_path(site[0])
        line = _field_line(site[0], site[1], field) if field else site[1]
    return Finding(
        stage=STAGE,
        rule=exc.rule,
        message=exc.detail,
        event=model,
        field=field,
        file=file,
        line=line,
    )


def model_load_error(exc: BaseException) -> ModelLoadError:
    """One line for this package's own models failing to import for another reason than a
    definition rule (a syntax error, a model pydantic cannot build), as the catalogue
    loader says it for a service's module: never a traceback."""
    from agent_telemetry._loader import describe

    return ModelLoadError(describe("agent_telemetry.schema", exc))
