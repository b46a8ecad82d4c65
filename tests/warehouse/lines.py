"""Hand-written log lines in the emitter's format and in Cloud Logging's, for tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson

TIME = "2026-05-09T07:35:25.123456Z"


def payload(event: str, **fields: Any) -> dict[str, Any]:
    return {"event": event, "schema_version": 1, **fields}


def line(event: str, *, time: str = TIME, **fields: Any) -> str:
    """One line as the emitter writes it (envelope first, then fields)."""
    record = {"event": event, "schema_version": 1, "severity": "INFO", "time": time, **fields}
    return orjson.dumps(record).decode()


_INSERT_IDS = itertools.count(1)


def entry(
    event: str, *, timestamp: str = TIME, insert_id: str | None = None, **fields: Any
) -> dict[str, Any]:
    """The LogEntry Cloud Logging makes of that line (time and severity lifted). Each
    gets its own insertId, as Cloud Logging gives it: the views keep one row per id and
    timestamp, so only an entry built with the same ``insert_id`` is a duplicate."""
    return {
        "insertId": insert_id or f"e{next(_INSERT_IDS):08x}",
        "jsonPayload": payload(event, **fields),
        "logName": "projects/p/logs/run.googleapis.com%2Fstdout",
        "receiveTimestamp": timestamp,
        "resource": {"type": "cloud_run_revision", "labels": {"service_name": "agent"}},
        "severity": "INFO",
        "timestamp": timestamp,
    }


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return path
