"""Helpers for the emitter tests: send lines to a fresh buffer, restore afterwards."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from agent_telemetry.emit import configure, reset_counters, reset_defaults, settings


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
        configure(stream=previous.stream, strict=previous.strict, clock=previous.clock)
        reset_counters()


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
