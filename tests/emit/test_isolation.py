"""The emitter never reconfigures structlog or logging: the service's set-up is its own."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from typing import Any

import structlog

from agent_telemetry.emit import capture, configure, emit, reset_defaults


def logging_state() -> dict[str, Any]:
    root = logging.getLogger()
    return {
        "root_handlers": list(root.handlers),
        "root_level": root.level,
        "loggers": set(logging.Logger.manager.loggerDict),
        "logger_class": logging.getLoggerClass(),
        "disable": logging.root.manager.disable,
        "last_resort": logging.lastResort,
    }


def test_structlog_and_logging_are_unchanged_in_process() -> None:
    structlog_before = structlog.get_config()
    configured_before = structlog.is_configured()
    logging_before = logging_state()

    configure(strict=False)
    with capture():
        emit("pipeline_run", lane="public", status="ok")
        emit("pipeline_run", lane="jane.doe@example.com", status="ok", extra=1)
        emit("nope")
    reset_defaults()

    assert structlog.get_config() == structlog_before
    assert structlog.is_configured() == configured_before
    assert logging_state() == logging_before


SERVICE = textwrap.dedent(
    """
    import io, json, logging, sys
    import structlog

    # The service's own set-up: stdlib logging to stderr, structlog rendering key=value.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="svc %(message)s")
    structlog.configure(
        processors=[structlog.processors.KeyValueRenderer()],
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    def state():
        root = logging.getLogger()
        return repr(structlog.get_config()), root.handlers[:], root.level

    before = state()

    from agent_telemetry.emit import emit
    emit("chat_turn", tier="public", kind="text")
    emit("chat_turn", tier="jane.doe@example.com", kind="text")

    after = state()
    structlog.get_logger().warning("service_event", n=1)
    logging.getLogger("svc").warning("stdlib line")
    print(json.dumps({"unchanged": before == after}), file=sys.stderr)
    """
)


def test_a_configured_service_keeps_its_logging_and_gets_clean_stdout() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SERVICE], capture_output=True, text=True, check=True, timeout=60
    )
    telemetry = [json.loads(line) for line in out.stdout.splitlines()]
    assert [t["event"] for t in telemetry] == ["chat_turn", "chat_turn"]
    assert telemetry[1]["invalid_fields"] == ["tier"]
    assert "jane" not in out.stdout + out.stderr
    err = out.stderr.splitlines()
    assert "n=1 event='service_event'" in err
    assert "svc stdlib line" in err
    assert json.loads(err[-1]) == {"unchanged": True}
