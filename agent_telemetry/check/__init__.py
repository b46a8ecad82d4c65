"""``agent-telemetry check``: the one command CI runs.

It runs, in order, the definition rules (importing the models), the schema-lock drift
check, the compatibility rules against the committed lock (or the lock at a git ref),
and the view stages (bindings of fields to view columns, generated-files drift), and
reports every finding as text, JSON or GitHub annotations.
"""

from agent_telemetry.check._definition import model_load_error
from agent_telemetry.check._findings import CheckReport, Finding, StageResult
from agent_telemetry.check._format import FORMATS, render
from agent_telemetry.check._run import CheckUsageError, run_check

__all__ = [
    "FORMATS",
    "CheckReport",
    "CheckUsageError",
    "Finding",
    "StageResult",
    "model_load_error",
    "render",
    "run_check",
]
