"""What a check reports: findings with a rule ID and a place, grouped by stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "notice"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the check found. ``error`` findings fail the check; the rest inform."""

    stage: str
    rule: str
    message: str
    severity: Severity = "error"
    event: str | None = None
    field: str | None = None
    version: int | None = None
    file: str | None = None
    line: int | None = None

    @property
    def subject(self) -> str:
        name = self.event or ""
        if self.field:
            name = f"{name}.{self.field}" if name else self.field
        if self.version is not None and name:
            name = f"{name} (v{self.version})"
        return name

    def as_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "rule": self.rule,
            "severity": self.severity,
            "event": self.event,
            "field": self.field,
            "version": self.version,
            "file": self.file,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class StageResult:
    """How one stage went: ``ok``, ``failed`` or ``skipped``, and a short note."""

    name: str
    status: Literal["ok", "failed", "skipped"]
    note: str = ""


@dataclass(slots=True)
class CheckReport:
    stages: list[StageResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    classification: dict[str, str] = field(default_factory=dict)
    # Each current event's capacity, "55.7 bits" (schema.capacity), in catalogue order.
    capacity: dict[str, str] = field(default_factory=dict)
    against: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def stage(self, name: str, findings: list[Finding], note: str = "") -> None:
        """Record a finished stage and its findings."""
        failed = any(f.severity == "error" for f in findings)
        self.stages.append(StageResult(name, "failed" if failed else "ok", note))
        self.findings.extend(findings)

    def skip(self, name: str, why: str) -> None:
        self.stages.append(StageResult(name, "skipped", why))
