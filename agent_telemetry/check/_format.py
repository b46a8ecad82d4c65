"""The three output formats of ``agent-telemetry check``: text, json, github.

A finding's message, subject and file, a stage's note and the ref compared against can
all hold outside text (paths, config reasons, lock keys, SQL parse errors): every one
leaves through ``agent_telemetry._text``, in every format.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from agent_telemetry._text import clean, clean_json, github_data, github_property
from agent_telemetry.check._findings import CheckReport, Finding

_ORDER = {"error": 0, "warning": 1, "notice": 2}


def _sorted(report: CheckReport) -> list[Finding]:
    return sorted(report.findings, key=lambda f: _ORDER[f.severity])


def _headline(report: CheckReport) -> str:
    errors = len(report.errors)
    if not errors:
        return "agent-telemetry check: ok"
    return f"agent-telemetry check: {errors} violation{'s' if errors != 1 else ''}"


def text_line(finding: Finding) -> str:
    where = clean(finding.file) if finding.file else ""
    if where and finding.line:
        where = f"{where}:{finding.line}"
    subject = f"{clean(finding.subject)}: " if finding.subject else ""
    prefix = f"{where}: " if where else ""
    return clean(f"{prefix}{finding.severity}: {finding.rule} {subject}{clean(finding.message)}")


def render_text(report: CheckReport) -> str:
    lines = [_headline(report)]
    for stage in report.stages:
        note = f"  ({clean(stage.note)})" if stage.note else ""
        lines.append(f"  {stage.name:<12}{stage.status}{note}")
    if report.capacity:
        bits = ", ".join(f"{e} {b}" for e, b in report.capacity.items())
        lines.append(f"  capacity    {bits}")
    if report.classification:
        classes = clean(", ".join(f"{e} {c}" for e, c in report.classification.items()))
        lines.append(f"  changes     {classes}")
    findings = _sorted(report)
    if findings:
        lines.append("")
        lines.extend(text_line(f) for f in findings)
    return "\n".join(lines) + "\n"


def render_json(report: CheckReport) -> str:
    data = {
        "ok": report.ok,
        "exit_code": report.exit_code,
        "against": report.against,
        "stages": [{"name": s.name, "status": s.status, "note": s.note} for s in report.stages],
        "classification": report.classification,
        "capacity": report.capacity,
        "violations": [f.as_json() for f in _sorted(report) if f.severity == "error"],
        "warnings": [f.as_json() for f in _sorted(report) if f.severity == "warning"],
        "notices": [f.as_json() for f in _sorted(report) if f.severity == "notice"],
    }
    return json.dumps(clean_json(data), indent=2) + "\n"


def render_github(report: CheckReport) -> str:
    """Workflow commands: one ``::error``/``::warning``/``::notice`` per finding."""
    lines = []
    for finding in _sorted(report):
        props = []
        if finding.file:
            props.append(f"file={github_property(finding.file)}")
            if finding.line:
                props.append(f"line={finding.line}")
        props.append(f"title={github_property(finding.rule)}")
        subject = f"{finding.subject}: " if finding.subject else ""
        message = github_data(f"{finding.rule} {subject}{finding.message}")
        lines.append(f"::{finding.severity} {','.join(props)}::{message}")
    lines.append(_headline(report))
    return "\n".join(lines) + "\n"


FORMATS: dict[str, Callable[[CheckReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}


def render(report: CheckReport, fmt: str) -> str:
    return FORMATS[fmt](report)
