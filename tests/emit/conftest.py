"""Helpers for the emitter tests: send lines to a fresh buffer, restore afterwards."""

from __future__ import annotations

import importlib.machinery
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from agent_telemetry.emit import configure, reset_counters, reset_defaults, settings
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.catalogue import default_catalogue


class HalfThenWait(io.StringIO):
    """Writes half a line, sets ``entered``, waits for ``finish``, then writes the rest:
    a fork in between would copy half a line."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.finish = threading.Event(), threading.Event()

    def write(self, text: str) -> int:
        half = len(text) // 2
        super().write(text[:half])
        self.entered.set()
        self.finish.wait(30)
        return super().write(text[half:]) + half


@contextmanager
def emitting(*, strict: bool = False) -> Iterator[io.StringIO]:
    """Lines go to a fresh StringIO in the given mode; settings and counters restored."""
    previous = settings()
    buffer = io.StringIO()
    reset_counters()
    configure(stream=buffer, strict=strict)
    try:
        yield buffer
    finally:
        reset_defaults()
        configure(
            stream=previous.stream,
            strict=previous.strict,
            clock=previous.clock,
            catalogue=previous.catalogue or default_catalogue(),
        )
        reset_counters()


def admit(*models: type[TelemetryEvent], retired: tuple[type[TelemetryEvent], ...] = ()) -> None:
    """Make the emitter's catalogue the package's events plus ``models`` (replacing an
    event of the same name) and the ``retired`` versions: the emitter writes only the
    configured catalogue's own models. ``emitting`` and ``admitted`` put it back."""
    events = {**default_catalogue().events, **{m.event_name: m for m in models}}
    # Stands for a service's catalogue module: importable by its name, as the emitter
    # requires (it takes only what a lock could hold).
    module = types.ModuleType("tests_emit_admitted")
    module.__spec__ = importlib.machinery.ModuleSpec(module.__name__, None)
    module.EVENTS = events  # type: ignore[attr-defined]
    if retired:
        versions = {(m.event_name, m.schema_version): m for m in (*events.values(), *retired)}
        module.EVENT_VERSIONS = versions  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    configure(catalogue=module.__name__)


@contextmanager
def admitted(*models: type[TelemetryEvent]) -> Iterator[None]:
    """``admit`` for the block, then the catalogue as it was."""
    previous = settings().catalogue or default_catalogue()
    admit(*models)
    try:
        yield
    finally:
        configure(catalogue=previous)


def lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    """Every line of the buffer parsed as JSON; fails on a partial or non-JSON line."""
    text = buffer.getvalue()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def lenient() -> Iterator[io.StringIO]:
    with emitting(strict=False) as buffer:
        yield buffer


@pytest.fixture
def strict() -> Iterator[io.StringIO]:
    with emitting(strict=True) as buffer:
        yield buffer


def run_python(code: str, *, timeout: float) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter and return the JSON object it prints last.

    For what could hang: a hang fails the test after ``timeout`` seconds instead of
    blocking CI, and the whole process group (forked children too) is killed.
    """
    with subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"still running after {timeout:.0f} s: it hung\n{err[-3000:]}")
    assert process.returncode == 0, err[-3000:]
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def wait_or_kill(pid: int, seconds: float) -> int | None:
    """The child's wait status, or None (after killing it) if it has not ended in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None
