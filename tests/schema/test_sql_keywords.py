"""A field named a BigQuery reserved keyword is refused when the model is defined.

Before the rule, `select`, `like`, `case` or `exclude` passed every definition rule and
then broke `agent-telemetry generate`: the view SQL did not parse.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field
from sqlglot.dialects.bigquery import BigQuery

from agent_telemetry.config import DeploymentConfig
from agent_telemetry.schema import SchemaRuleError, event_spec, flag
from agent_telemetry.schema.events import PipelineRun
from agent_telemetry.schema.sql_keywords import BIGQUERY_RESERVED_KEYWORDS
from agent_telemetry.views import ViewBuildError, generate_views
from tests.schema.copies import copy_model, rules_off
from tests.schema.test_rules import assert_rule

# sqlglot's copy of BigQuery's list: ours must not drift from it (the package keeps its
# own so that defining a model never imports sqlglot).
SQLGLOT_KEYWORDS = sorted(BigQuery.Generator.RESERVED_KEYWORDS)


def test_the_keyword_list_is_bigquerys_as_sqlglot_knows_it() -> None:
    assert sorted(BIGQUERY_RESERVED_KEYWORDS) == SQLGLOT_KEYWORDS


@pytest.mark.parametrize("keyword", SQLGLOT_KEYWORDS)
def test_every_reserved_keyword_is_refused_as_a_field_name(keyword: str) -> None:
    # `hash` is also an identifier word: that rule comes first and says more.
    rule = "FIELD_NAME_NO_IDENTIFIER" if keyword == "hash" else "FIELD_NAME_KEYWORD"
    assert_rule(rule, keyword, **{keyword: (bool | None, flag("A flag."))})


def _with_field(name: str) -> Any:
    return copy_model(
        PipelineRun,
        add={name: (bool | None, Field(None, strict=True, description="A flag."))},
    )


@pytest.mark.parametrize("name", ["selected", "order_count", "like_count", "is_cached"])
def test_a_name_holding_a_keyword_is_a_column_the_views_read(
    config: DeploymentConfig, name: str
) -> None:
    run, _quality = generate_views(config, "partitioned", (event_spec(_with_field(name)),))
    assert name in [c.name for c in run.columns]
    assert f"SAFE_CAST(sink.jsonPayload.{name} AS BOOL) AS {name}" in run.query


@pytest.mark.parametrize("keyword", ["select", "like", "case", "exclude"])
def test_a_keyword_field_is_refused_by_the_rule_not_by_a_broken_view(
    config: DeploymentConfig, keyword: str
) -> None:
    with pytest.raises(SchemaRuleError, match="FIELD_NAME_KEYWORD") as caught:
        _with_field(keyword)
    assert caught.value.field == keyword
    assert caught.value.detail == (
        "the name is a BigQuery reserved keyword: every query would have to quote it"
    )
    # What the rule saves the model's author from: past it, the views do not build.
    with rules_off():
        model = _with_field(keyword)
    with pytest.raises(ViewBuildError, match=r"^pipeline_run: "):
        generate_views(config, "partitioned", (event_spec(model),))
