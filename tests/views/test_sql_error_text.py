"""sqlglot's parse errors reach our messages without terminal escape codes.

sqlglot underlines the offending token with ANSI codes; a CI page, a log or the JSON
report of `check` would show them as garbage. The position (line, column) stays.
"""

from __future__ import annotations

import re

import pytest
from pydantic import Field

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.schema import event_spec
from agent_telemetry.schema.events import PipelineRun
from agent_telemetry.views import (
    ViewBuildError,
    binding_violations,
    dedupe_violations,
    generate_views,
)
from tests.schema.copies import copy_model, rules_off

# A keyword where a payload key belongs: sqlglot refuses it with an underlined token.
BROKEN = "SELECT sink.jsonPayload.select FROM `p.d.t` AS sink"


def _plain(message: str) -> None:
    assert "\x1b" not in message
    assert re.search(r"Line \d+, Col: \d+\.", message)


def test_the_binding_proof_names_the_position_in_plain_text() -> None:
    (violation,) = binding_violations(BROKEN, event_spec(PipelineRun), "partitioned")
    assert violation.problem.startswith("does not parse as a BigQuery query (")
    _plain(violation.problem)


def test_the_dedupe_proof_names_the_position_in_plain_text() -> None:
    (problem,) = dedupe_violations(BROKEN, "partitioned", True)
    assert problem.startswith("does not parse as a BigQuery query (")
    _plain(problem)


def test_a_view_that_does_not_build_names_the_position_in_plain_text(
    config: DeploymentConfig,
) -> None:
    with rules_off():  # the rules refuse a field named `select`; the build must say why too
        model = copy_model(
            PipelineRun,
            add={"select": (bool | None, Field(None, strict=True, description="A flag."))},
        )
    with pytest.raises(ViewBuildError, match=r"^pipeline_run: ") as caught:
        generate_views(config, "partitioned", (event_spec(model),))
    _plain(str(caught.value))
