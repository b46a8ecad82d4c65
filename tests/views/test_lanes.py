"""lane_health as built and as proven, in-process: the committed SQL is what the build
writes, the build refuses what it must, and the binding proof names each way a hand-edited
lane_health fails it, line for line (what `agent-telemetry check` prints under VIEW_BINDING).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from agent_telemetry.config import LAYOUTS, DeploymentConfig, Layout
from agent_telemetry.schema import EventSpec, version_catalogue
from agent_telemetry.views import LANE_VIEW, ViewBuildError, lane_violations
from agent_telemetry.views._lanes import (
    compile_lane_query,
    event_view_columns,
    lane_health_view,
    lane_plan,
    read_views_schema,
)

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "agent_telemetry" / "views" / "generated"
RUN = "`acme-agents-prod.agent_telemetry.pipeline_run`"
STATUS = "`acme-agents-prod.agent_telemetry.provider_status`"


def _lanes(config: DeploymentConfig, layout: Layout = "partitioned") -> str:
    """The committed query (what the build writes is held by the first test)."""
    ddl = (GENERATED / layout / "lane_health.sql").read_text(encoding="utf-8")
    return ddl.split("\n) AS\n", 1)[1]


def _problems(query: str, config: DeploymentConfig) -> list[str]:
    return [str(p) for p in lane_violations(query, config, version_catalogue())]


def _select(query: str) -> exp.Select:
    tree = sqlglot.parse_one(query, dialect="bigquery")
    assert isinstance(tree, exp.Select)
    return tree


def _with_columns(query: str, columns: list[exp.Expr]) -> str:
    tree = _select(query)
    tree.set("expressions", columns)
    return tree.sql(dialect="bigquery")


def _outer(query: str) -> list[exp.Expr]:
    return list(_select(query).expressions)


def _replaced(query: str, name: str, sql: str) -> str:
    columns = [
        sqlglot.parse_one(f"{sql} AS {name}", dialect="bigquery") if c.alias == name else c
        for c in _outer(query)
    ]
    return _with_columns(query, columns)


def _without(spec: EventSpec, field: str) -> EventSpec:
    return dataclasses.replace(spec, fields=tuple(f for f in spec.fields if f.name != field))


def _without_member(spec: EventSpec, field: str, member: str) -> EventSpec:
    fields = tuple(
        dataclasses.replace(f, members=tuple(m for m in f.members if m != member))
        if f.name == field
        else f
        for f in spec.fields
    )
    return dataclasses.replace(spec, fields=fields)


def _swap(specs: tuple[EventSpec, ...], new: EventSpec) -> tuple[EventSpec, ...]:
    return tuple(new if s.name == new.name else s for s in specs)


def _spec(name: str) -> EventSpec:
    return next(s for s in version_catalogue() if s.name == name)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_committed_lane_health_is_what_the_build_writes(
    config: DeploymentConfig, layout: Layout
) -> None:
    """Every word a user deploys: columns, their descriptions, the view's, labels, query."""
    view = lane_health_view(config, layout, version_catalogue())
    assert view is not None
    assert view.ddl == (GENERATED / layout / "lane_health.sql").read_text(encoding="utf-8")
    assert view.labels == {
        "managed-by": "agent-telemetry",
        "schema-version": "1",
        "layout": layout,
        "view-kind": "lanes",
    }
    assert (view.name, view.event, view.schema_version) == (LANE_VIEW, None, 1)
    assert view.reads == ("pipeline_run", "provider_status")
    assert _problems(view.query, config) == []
    assert _problems(view.ddl, config) == []  # the whole CREATE VIEW reads the same


def test_a_bumped_event_is_read_through_its_newest_view(config: DeploymentConfig) -> None:
    run_v2 = dataclasses.replace(_spec("pipeline_run"), schema_version=2)
    specs = (*version_catalogue(), run_v2)
    plan = lane_plan(specs)
    assert plan is not None
    assert (plan.run_view, plan.status_view) == ("pipeline_run_v2", "provider_status")
    assert {c.name: sorted(c.reads) for c in plan.columns}["runs_stalled"] == [
        "pipeline_run_v2.reason"
    ]
    view = lane_health_view(config, "partitioned", specs)
    assert view is not None
    assert view.reads == ("pipeline_run_v2", "provider_status")
    assert view.schema_version == 2
    assert view.labels["schema-version"] == "2"
    assert "`acme-agents-prod.agent_telemetry.pipeline_run_v2` AS run" in view.query
    assert lane_violations(view.query, config, specs) == []
    # The committed SQL reads version 1, which is no longer the newest.
    assert [str(p) for p in lane_violations(_lanes(config), config, specs)] == [
        "lane_health.*: reads acme-agents-prod.agent_telemetry.pipeline_run, "
        "not only the event views"
    ]


def test_a_newer_version_listed_first_is_still_the_newest() -> None:
    status_v3 = dataclasses.replace(_spec("provider_status"), schema_version=3)
    plan = lane_plan((status_v3, *version_catalogue()))
    assert plan is not None
    assert plan.status_view == "provider_status_v3"


@pytest.mark.parametrize(
    "change",
    [
        "no pipeline_run",
        "no provider_status",
        "pipeline_run without provider",
        "pipeline_run without queue_wait_ms",
        "pipeline_run without the stalled reason",
        "pipeline_run without quota_exhausted",
        "pipeline_run without status ok",
        "provider_status without state",
        "provider_status without live",
        "provider_status without provider",
    ],
)
def test_a_catalogue_without_what_the_view_reads_has_no_lane_health(
    config: DeploymentConfig, change: str
) -> None:
    run, status = _spec("pipeline_run"), _spec("provider_status")
    specs = version_catalogue()
    changed = {
        "no pipeline_run": tuple(s for s in specs if s.name != "pipeline_run"),
        "no provider_status": tuple(s for s in specs if s.name != "provider_status"),
        "pipeline_run without provider": _swap(specs, _without(run, "provider")),
        "pipeline_run without queue_wait_ms": _swap(specs, _without(run, "queue_wait_ms")),
        "pipeline_run without the stalled reason": _swap(
            specs, _without_member(run, "reason", "stalled")
        ),
        "pipeline_run without quota_exhausted": _swap(
            specs, _without_member(run, "error_class", "quota_exhausted")
        ),
        "pipeline_run without status ok": _swap(specs, _without_member(run, "status", "ok")),
        "provider_status without state": _swap(specs, _without(status, "state")),
        "provider_status without live": _swap(specs, _without_member(status, "state", "live")),
        "provider_status without provider": _swap(specs, _without(status, "provider")),
    }[change]
    assert lane_plan(changed) is None
    assert lane_health_view(config, "partitioned", changed) is None
    assert [str(p) for p in lane_violations(_lanes(config), config, changed)] == [
        "lane_health.*: the catalogue has no events it can read"
    ]


def test_the_views_read_have_the_event_views_columns_and_types(config: DeploymentConfig) -> None:
    status = _spec("provider_status")
    assert event_view_columns(status) == {
        "timestamp": "TIMESTAMP",
        "schema_version": "INT64",
        **{f.name: "INT64" if f.kind == "int" else "STRING" for f in status.fields},
        "invalid_fields": "ARRAY<STRING>",
    }
    columns = event_view_columns(_spec("pipeline_run"))
    assert list(columns)[:2] == ["timestamp", "schema_version"]
    assert list(columns)[-1] == "invalid_fields"
    assert columns["queue_wait_ms"] == "INT64"
    plan = lane_plan(version_catalogue())
    assert plan is not None
    schema = read_views_schema(config, plan, version_catalogue())
    assert schema == {
        "acme-agents-prod": {
            "agent_telemetry": {
                "pipeline_run": columns,
                "provider_status": event_view_columns(status),
            }
        }
    }


@pytest.mark.parametrize("event", ["pipeline_run", "provider_status"])
def test_a_plan_without_its_events_in_the_catalogue_is_a_build_error(
    config: DeploymentConfig, event: str
) -> None:
    plan = lane_plan(version_catalogue())
    assert plan is not None
    specs = tuple(s for s in version_catalogue() if s.name != event)
    with pytest.raises(ViewBuildError) as raised:
        read_views_schema(config, plan, specs)
    assert str(raised.value) == "lane_health: the catalogue lacks an event it reads"


@pytest.mark.parametrize(
    "column",
    # Unqualified, only sqlglot's column validation catches it; BigQuery would fail only
    # at create.
    ["run.nope", "nope"],
    ids=["qualified", "unqualified"],
)
def test_an_unknown_column_fails_the_build(config: DeploymentConfig, column: str) -> None:
    specs = version_catalogue()
    plan = lane_plan(specs)
    assert plan is not None
    with pytest.raises(ViewBuildError) as raised:
        compile_lane_query(f"SELECT {column} AS x FROM {RUN} AS run", config, plan, specs)
    assert str(raised.value).startswith("lane_health: ")
    assert "nope" in str(raised.value)


def test_the_build_refuses_a_query_it_cannot_parse_and_a_foreign_table(
    config: DeploymentConfig,
) -> None:
    specs = version_catalogue()
    plan = lane_plan(specs)
    assert plan is not None
    with pytest.raises(ViewBuildError) as raised:
        compile_lane_query("SELECT FROM WHERE (", config, plan, specs)
    assert str(raised.value).startswith("lane_health: ")
    other = "`acme-agents-prod.agent_logs.run_googleapis_com_stdout`"
    with pytest.raises(ViewBuildError) as raised:
        compile_lane_query(f"SELECT sink.x AS x FROM {other} AS sink", config, plan, specs)
    assert str(raised.value) == "lane_health: reads a table other than the event views"
    # A CTE is read by its name: not a table of its own.
    ok = compile_lane_query(
        f"WITH r AS (SELECT run.provider AS p FROM {RUN} AS run) SELECT r.p AS p FROM r AS r",
        config,
        plan,
        specs,
    )
    assert ok == (
        "WITH r AS (\n  SELECT\n    run.provider AS p\n  FROM "
        f"{RUN} AS run\n)\nSELECT\n  r.p AS p\nFROM r AS r\n"
    )


def test_a_hand_edit_that_reads_another_table_is_named(config: DeploymentConfig) -> None:
    lanes = _lanes(config)
    other = lanes.replace(STATUS, "`acme-agents-prod.agent_logs.provider_status`")
    assert _problems(other, config) == [
        "lane_health.*: reads acme-agents-prod.agent_logs.provider_status, not only the event views"
    ]
    # Two foreign tables, each named once, in order; a table with no dataset is foreign too.
    both = lanes.replace(STATUS, "`x.y.b`").replace(RUN, "a")
    assert _problems(both, config) == ["lane_health.*: reads a, x.y.b, not only the event views"]


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("SELECT FROM WHERE (", "does not parse as a BigQuery query"),
        ("DROP TABLE t", "does not parse as a BigQuery query (not a query)"),
    ],
)
def test_what_is_not_a_query_is_named(config: DeploymentConfig, query: str, problem: str) -> None:
    (only,) = _problems(query, config)
    assert only.startswith(f"lane_health.*: {problem}")


def test_a_column_the_event_views_do_not_have_is_named(config: DeploymentConfig) -> None:
    lanes = _lanes(config).replace("status.state AS state", "status.mood AS state")
    (only,) = _problems(lanes, config)
    assert only.startswith("lane_health.*: reads a column the event views do not have (")
    assert "mood" in only


def test_each_column_must_be_there_once_in_order(config: DeploymentConfig) -> None:
    columns = _outer(_lanes(config))
    extra = sqlglot.parse_one("lanes.runs_ok AS runs_fine", dialect="bigquery")
    assert _problems(_with_columns(_lanes(config), [*columns, extra]), config) == [
        "lane_health.runs_fine: is not a lane_health column"
    ]
    twice = [*columns, columns[4]]
    assert _problems(_with_columns(_lanes(config), twice), config) == [
        "lane_health.runs_ok: appears 2 times",
        "lane_health.*: columns are not in the declared order",
    ]
    assert _problems(_with_columns(_lanes(config), columns[:-1]), config) == [
        "lane_health.looks_dead: has no column in the view"
    ]
    # A missing column does not stop the proof: the columns after it are still read.
    first_gone = _replaced(_with_columns(_lanes(config), columns[1:]), "runs_ok", "0")
    assert _problems(first_gone, config) == [
        "lane_health.window_start: has no column in the view",
        "lane_health.runs_ok: lineage reaches no event-view column; "
        "expected exactly pipeline_run.status",
    ]
    swapped = [columns[1], columns[0], *columns[2:]]
    assert _problems(_with_columns(_lanes(config), swapped), config) == [
        "lane_health.*: columns are not in the declared order"
    ]


def test_a_column_computed_from_the_wrong_columns_is_named(config: DeploymentConfig) -> None:
    lanes = _lanes(config)
    limited = lanes.replace(
        "run_lines.error_class = 'rate_limited') AS runs_rate_limited",
        "run_lines.reason = 'rate_limited') AS runs_rate_limited",
    )
    assert _problems(limited, config) == [
        "lane_health.runs_rate_limited: lineage reaches pipeline_run.reason, "
        "pipeline_run.status; expected exactly pipeline_run.error_class, pipeline_run.status"
    ]
    assert _problems(_replaced(lanes, "runs_ok", "0"), config) == [
        "lane_health.runs_ok: lineage reaches no event-view column; "
        "expected exactly pipeline_run.status"
    ]
    assert _problems(_replaced(lanes, "runs_ended", "lanes.runs_ok"), config) == [
        "lane_health.runs_ended: lineage reaches pipeline_run.status; "
        "expected exactly no event-view column"
    ]
    # Upper-case output names are the same columns.
    upper = lanes.replace("AS runs_ok,", "AS RUNS_OK,")
    assert _problems(upper, config) == []


def test_the_views_schema_gives_each_column_its_bigquery_type(config: DeploymentConfig) -> None:
    view = lane_health_view(config, "partitioned", version_catalogue())
    assert view is not None
    # As the data dictionary (docs/telemetry.md) and the deploy plan print them.
    assert [c.type for c in view.columns] == [
        *("TIMESTAMP", "STRING", "STRING"),
        *("INT64",) * 7,
        "BOOL",
    ]
    types = {c.name: c.schema_field().to_api()["type"] for c in view.columns}
    assert types == {
        "window_start": "TIMESTAMP",
        "provider": "STRING",
        "state": "STRING",
        **dict.fromkeys(
            (
                "runs_ended",
                "runs_ok",
                "runs_rate_limited",
                "runs_quota_exhausted",
                "runs_model_overloaded",
                "runs_stalled",
                "queue_wait_p95_ms",
            ),
            "INTEGER",
        ),
        "looks_dead": "BOOLEAN",
    }


def test_a_bumped_provider_status_alone_versions_the_view(config: DeploymentConfig) -> None:
    status_v2 = dataclasses.replace(_spec("provider_status"), schema_version=2)
    view = lane_health_view(config, "partitioned", (*version_catalogue(), status_v2))
    assert view is not None
    assert view.schema_version == 2
    assert view.labels["schema-version"] == "2"


def test_a_column_name_in_another_case_is_the_same_column(config: DeploymentConfig) -> None:
    """BigQuery's column names are case-insensitive, quoted or not (its dialect, not the
    default one, which keeps a quoted name's case and would refuse a real column)."""
    specs = version_catalogue()
    plan = lane_plan(specs)
    assert plan is not None
    sql = f"SELECT run.`PROVIDER` AS p FROM {RUN} AS run"
    assert compile_lane_query(sql, config, plan, specs) == (
        f"SELECT\n  run.`provider` AS p\nFROM {RUN} AS run\n"
    )


def test_the_proof_reads_a_parsed_tree_as_it_reads_text(config: DeploymentConfig) -> None:
    """The check hands the proof the parsed CREATE VIEW, not its text."""
    view = lane_health_view(config, "partitioned", version_catalogue())
    assert view is not None
    tree = sqlglot.parse_one(view.ddl, dialect="bigquery")
    assert lane_violations(tree, config, version_catalogue()) == []
    bad = sqlglot.parse_one(_replaced(view.query, "runs_ok", "0"), dialect="bigquery")
    assert [str(p) for p in lane_violations(bad, config, version_catalogue())] == [
        "lane_health.runs_ok: lineage reaches no event-view column; "
        "expected exactly pipeline_run.status"
    ]


def test_an_unqualified_column_the_views_lack_is_named(config: DeploymentConfig) -> None:
    lanes = _lanes(config)
    unknown = lanes.replace("status.state AS state", "mood AS state")
    (only,) = _problems(unknown, config)
    assert only.startswith("lane_health.*: reads a column the event views do not have (")
    assert "mood" in only


def test_a_quoted_column_alias_in_another_case_is_the_same_column(config: DeploymentConfig) -> None:
    """BigQuery's column names are case-insensitive, quoted or not: the proof qualifies in
    its dialect (the default one keeps `STATE` apart from state, and would call the
    view's later reads of it unknown)."""
    lanes = _lanes(config)
    quoted = lanes.replace("status.state AS state", "status.state AS `STATE`")
    assert quoted != lanes
    assert _problems(quoted, config) == []


def test_a_column_lineage_cannot_follow_is_named_with_the_reason(config: DeploymentConfig) -> None:
    """A hand edit BigQuery would refuse (a UNION ALL branch with fewer columns) is still
    read whole: every column lineage cannot follow is named, each with sqlglot's reason,
    the branch shown as BigQuery SQL, and the proof goes on to the next column."""
    plan = lane_plan(version_catalogue())
    assert plan is not None
    names = [c.name for c in plan.columns]
    full = ", ".join(f"NULL AS {name}" for name in names)
    branch = f"SELECT NULL AS window_start, NULL AS provider, NULL AS state FROM {RUN} AS r2"
    assert names[:3] == ["window_start", "provider", "state"]
    problems = _problems(f"SELECT {full} FROM {RUN} AS run UNION ALL {branch}", config)
    assert [p.split(":", 1)[1] for p in problems[:3]] == [
        f" lineage reaches no event-view column; expected exactly {', '.join(sorted(want))}"
        for want in (c.reads for c in plan.columns[:3])
    ]
    assert problems[3:] == [
        f"lane_health.{name}: lineage failed "
        f"(Cannot find column's source with index {index} in query: {branch})"
        for index, name in enumerate(names)
        if index >= 3
    ]


def test_a_column_renamed_by_a_pivots_column_list_is_named_by_what_it_reads(
    config: DeploymentConfig,
) -> None:
    """A PIVOT's column aliases are positional: a hand edit can swap two names and read
    user_runs_today as `reason`. The proof maps the aliases onto the event view's columns
    and names the column read, not the alias."""
    pivoted = ("queue_position", "attempts")
    passed = [c for c in event_view_columns(_spec("pipeline_run")) if c not in pivoted]
    swap = {"reason": "user_runs_today", "user_runs_today": "reason"}
    aliases = ", ".join([swap.get(c, c) for c in passed] + ["y"])
    lanes = _lanes(config)
    hidden = lanes.replace(
        f"FROM {RUN} AS run\n",
        f"FROM {RUN} PIVOT(COUNT(queue_position) FOR attempts IN (99 AS y)) AS run({aliases})\n",
    )
    assert hidden != lanes
    stalled, dead = _problems(hidden, config)
    assert stalled == (
        "lane_health.runs_stalled: lineage reaches pipeline_run.user_runs_today; "
        "expected exactly pipeline_run.reason"
    )
    assert dead.startswith("lane_health.looks_dead: lineage reaches ")
    assert "pipeline_run.user_runs_today" in dead.split(";")[0]
