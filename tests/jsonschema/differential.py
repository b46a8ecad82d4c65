"""Three judges of one line: Python ``jsonschema``, ``ajv`` under Node, and check-logs.

The two JSON Schema validators read the committed document (``views build`` writes it);
check-logs (``--strict-types``, the judgement of what a service may write) reads each
line as a file of its own, so no line's verdict depends on another's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import jsonschema

from agent_telemetry.schema.catalogue import Catalogue
from agent_telemetry.schema.envelope import NOT_A_FIELD
from agent_telemetry.warehouse import check_logs
from agent_telemetry.warehouse._judging.python import Coercion
from agent_telemetry.warehouse._reading.records import Shape, _record

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "examples" / "typescript"  # package.json: ajv, ajv-formats (make test)
VALIDATE = NODE_DIR / "validate.mjs"


class Verdict(Enum):
    VALID = "valid"
    INVALID = "invalid"
    NOT_AN_EMITTER_LINE = "not an emitter line"  # a LogEntry or a row: another shape


def python_verdicts(schema: dict[str, Any], lines: list[str]) -> list[bool]:
    """Draft 2020-12 with format checking (``date-time``: rfc3339-validator)."""
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    verdicts = []
    for text in lines:
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError):  # not JSON, or deeper than Python reads
            verdicts.append(False)
            continue
        verdicts.append(validator.is_valid(value))
    return verdicts


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN, Infinity: not JSON (RFC 8259), as JSON.parse says


def ajv_verdicts(schema_path: Path, lines: list[str]) -> list[bool]:
    """Every line through one Node process (examples/typescript/validate.mjs)."""
    node = shutil.which("node")
    assert node is not None, "node is not installed (make test's set-up installs it)"
    assert (NODE_DIR / "node_modules" / "ajv").is_dir(), (
        "run `make test`: npm ci in examples/typescript"
    )
    done = subprocess.run(
        [node, str(VALIDATE), str(schema_path)],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    verdicts: list[bool] = json.loads(done.stdout)
    return verdicts


@dataclass(frozen=True)
class Judged:
    verdict: Verdict
    integral_doubles_only: bool  # lenient check-logs: clean, its only coercion 5.0


def _form_problems(report: Any, catalogue: Catalogue) -> set[tuple[str, str]] | None:
    """What check-logs found wrong with the line's form; None when it was no event of the
    catalogue (unknown or rejected). Left out: what the emitter itself reports in the
    envelope (a field it dropped, a count of unknown keys): the emitter writes those
    lines, and check-logs counts them as the service's bug the emitter caught."""
    if report.unknown_events or report.rejected:
        return None
    problems: set[tuple[str, str]] = set()
    for check in report.events.values():
        fields = {
            f
            for spec in catalogue.version_specs()
            if spec.name == check.name
            for f in spec.field_names
        }
        for (name, rule), _ in check.violations.items():
            if rule == "dropped" and name in fields and name != NOT_A_FIELD:
                continue
            if (name, rule) == ("unknown_fields", "unknown_keys"):
                continue
            problems.add((name, rule))
    return problems


def check_logs_verdict(line: str, folder: Path, catalogue: Catalogue) -> Judged:
    """check-logs --strict-types over the line alone (the Python path: one line)."""
    telemetry = _record(line.encode("utf-8"), 1).telemetry
    if telemetry is not None and telemetry.shape is not Shape.EMITTER:
        return Judged(Verdict.NOT_AN_EMITTER_LINE, False)
    path = folder / "line.jsonl"
    path.write_text(f"{line}\n", encoding="utf-8")
    strict = check_logs([path], catalogue.versions, strict_types=True)
    if strict.telemetry == 0:
        return Judged(Verdict.INVALID, False)  # not telemetry at all: no event's line
    problems = _form_problems(strict, catalogue)
    if problems == set():
        return Judged(Verdict.VALID, False)
    lenient = check_logs([path], catalogue.versions, strict_types=False)
    doubles = (
        problems is not None
        and _form_problems(lenient, catalogue) == set()
        and {c for c, n in lenient.coerced.items() if n} == {Coercion.INTEGRAL_DOUBLE}
    )
    return Judged(Verdict.INVALID, doubles)
