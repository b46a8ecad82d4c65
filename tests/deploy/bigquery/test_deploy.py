"""plan / approve / apply against a real BigQuery API (bqemulator), through the real client."""

from __future__ import annotations

from typing import Any

import pytest

from agent_telemetry.config import DeploymentConfig, parse_config
from agent_telemetry.deploy import BigQueryError, BigQueryWarehouse, apply_plan, approve, make_plan
from agent_telemetry.deploy._apply import apply_planned
from agent_telemetry.deploy._decide import ViewResult
from agent_telemetry.deploy._plan import META_LABEL, SQL_LABEL, sql_digest
from agent_telemetry.deploy._types import DryRun
from agent_telemetry.views import (
    LANE_VIEW,
    QUALITY_VIEW,
    generate_views,
    inlined_query,
    one_day_query,
)
from tests.deploy.bigquery.conftest import RETRY_DEADLINE_S
from tests.deploy.bigquery.emulator import Emulator
from tests.deploy.bigquery.helpers import create_sink, emitted_lines, log_entry, rows

APPROVER = "Ana Analyst"

EMITTED = [
    ("pipeline_run", {"lane": "public", "status": "ok", "queue_wait_ms": 1200, "attempts": 1}),
    ("pipeline_run", {"lane": "premium", "status": "failed", "reason": "deadline"}),
    # Out of bounds: the lenient emitter drops the value and names the field.
    ("pipeline_run", {"lane": "admin", "status": "ok", "queue_position": 61}),
    ("chat_turn", {"tier": "public", "kind": "text", "duration_ms": 900, "model_calls": 2}),
    ("pipeline_render", {"theme": "dark", "render_lane": "run", "passed": True, "attempt": 2}),
    ("provider_status", {"provider": "vertex", "state": "rate_limited", "probe": "preflight"}),
]


def sink_entries() -> list[dict[str, Any]]:
    entries = [log_entry(line) for line in emitted_lines(EMITTED)]
    # A line from an emitter that did not validate: the view must read it as NULL.
    rogue = log_entry(
        emitted_lines([("pipeline_render", {"theme": "light", "render_lane": "run"})])[0]
    )
    rogue["jsonPayload"]["attempt"] = 7
    return [*entries, rogue]


@pytest.fixture
def loaded(bq_client: Any, bq_retry: Any, deployment: DeploymentConfig) -> DeploymentConfig:
    create_sink(bq_client, bq_retry, deployment, sink_entries())
    return deployment


def event_views(config: DeploymentConfig, specs: tuple[Any, ...] | None = None) -> Any:
    """The event views without telemetry_quality and lane_health: the behaviour is per
    view, and the quality view's long SQL costs the emulator seconds per dry run."""
    return [
        v for v in generate_views(config, specs=specs) if v.name not in (QUALITY_VIEW, LANE_VIEW)
    ]


def snapshot(warehouse: BigQueryWarehouse, views: Any) -> dict[str, Any]:
    return {v.name: warehouse.get_table(v.table_id) for v in views}


def test_first_apply_creates_every_view_and_they_read_the_emitted_lines(
    warehouse: BigQueryWarehouse, bq_client: Any, bq_retry: Any, loaded: DeploymentConfig
) -> None:
    views = generate_views(loaded)
    plan = make_plan(warehouse, loaded)
    assert [(v.name, v.action) for v in plan.views] == [(v.name, "create") for v in views]
    assert not plan.dry_run_failures
    assert not plan.sink.missing
    assert plan.exit_code() == 1

    result = apply_plan(warehouse, loaded, approve(plan, APPROVER))

    assert result.ok
    assert not result.refused
    assert [(r.name, r.outcome) for r in result.results] == [(v.name, "created") for v in views]
    target = f"{loaded.target.project}.{loaded.target.dataset}"
    runs = rows(
        bq_client,
        bq_retry,
        f"SELECT lane, status, reason, queue_wait_ms, queue_position, attempts, invalid_fields"
        f" FROM `{target}.pipeline_run` ORDER BY timestamp",
    )
    assert runs == [
        {
            "lane": "public",
            "status": "ok",
            "reason": None,
            "queue_wait_ms": 1200,
            "queue_position": None,
            "attempts": 1,
            "invalid_fields": [],
        },
        {
            "lane": "premium",
            "status": "failed",
            "reason": "deadline",
            "queue_wait_ms": None,
            "queue_position": None,
            "attempts": None,
            "invalid_fields": [],
        },
        {
            "lane": "admin",
            "status": "ok",
            "reason": None,
            "queue_wait_ms": None,
            "queue_position": None,
            "attempts": None,
            "invalid_fields": ["queue_position"],
        },
    ]
    renders = rows(
        bq_client,
        bq_retry,
        f"SELECT theme, passed, attempt FROM `{target}.pipeline_render` ORDER BY timestamp",
    )
    assert renders == [
        {"theme": "dark", "passed": True, "attempt": 2},
        {"theme": "light", "passed": None, "attempt": None},
    ]
    chat = rows(
        bq_client,
        bq_retry,
        f"SELECT tier, kind, duration_ms, model_calls FROM `{target}.chat_turn`",
    )
    assert chat == [{"tier": "public", "kind": "text", "duration_ms": 900, "model_calls": 2}]
    status = rows(
        bq_client, bq_retry, f"SELECT provider, state, probe FROM `{target}.provider_status`"
    )
    assert status == [{"provider": "vertex", "state": "rate_limited", "probe": "preflight"}]
    # lane_health, created after the views it reads, reads them (these runs name no lane).
    lanes = rows(
        bq_client,
        bq_retry,
        f"SELECT provider, state, runs_ended, looks_dead FROM `{target}.lane_health`",
    )
    assert lanes == [
        {"provider": "vertex", "state": "rate_limited", "runs_ended": 0, "looks_dead": False}
    ]
    quality = rows(
        bq_client,
        bq_retry,
        f"SELECT event, field, lines, lines_with_invalid_fields, out_of_domain_values"
        f" FROM `{target}.telemetry_quality` WHERE field IN ('queue_position', 'attempt')"
        " ORDER BY event, field",
    )
    assert quality == [
        {
            "event": "pipeline_render",
            "field": "attempt",
            "lines": 2,
            "lines_with_invalid_fields": 0,
            "out_of_domain_values": 1,
        },
        {
            "event": "pipeline_run",
            "field": "queue_position",
            "lines": 3,
            "lines_with_invalid_fields": 1,
            "out_of_domain_values": 0,
        },
    ]

    for view in views:
        state = warehouse.get_table(view.table_id)
        assert state is not None
        assert state.kind == "VIEW"
        assert state.description == view.description
        assert [(f.name, f.description) for f in state.schema] == [
            (c.name, c.description) for c in view.columns
        ]
        assert state.labels.items() >= view.labels.items()
        assert state.labels[SQL_LABEL] == sql_digest(view.query)[:32] == view.sql_sha256[:32]
        assert len(state.labels[META_LABEL]) == 32


class RecordingWarehouse(BigQueryWarehouse):
    """The real client against the emulator, keeping the SQL of every dry run it asks."""

    def __init__(self, client: Any, endpoint: str) -> None:
        super().__init__(client, endpoint=endpoint, retry_deadline_s=RETRY_DEADLINE_S)
        self.dry_runs: list[str] = []

    def dry_run(self, sql: str) -> DryRun:
        self.dry_runs.append(sql)
        return super().dry_run(sql)


def test_a_view_that_scans_nothing_is_dry_run_once_and_each_days_query_is_accepted(
    warehouse: BigQueryWarehouse, bq_client: Any, emulator: Emulator, loaded: DeploymentConfig
) -> None:
    """The emulator reports 0 bytes for every dry run, as BigQuery does on an empty sink:
    a day of a view scans no more than the whole, so the plan says 0 for one day without
    asking (one dry run per view, not two). The query of one day is still the server's to
    accept: each view's is dry-run here once, as a plan of a sink with bytes would."""
    views = generate_views(loaded)
    recording = RecordingWarehouse(bq_client, emulator.endpoint)
    plan = make_plan(recording, loaded)
    assert recording.dry_runs == [inlined_query(v, views) for v in views]
    assert [(v.name, v.dry_run.bytes_processed, v.dry_run.one_day_bytes) for v in plan.views] == [
        (v.name, 0, 0) for v in views
    ]
    for view in views:
        day = warehouse.dry_run(one_day_query(view, views))
        assert (view.name, day.error) == (view.name, None)


def test_plan_after_apply_is_unchanged_and_a_second_apply_is_a_no_op(
    warehouse: BigQueryWarehouse, loaded: DeploymentConfig
) -> None:
    views = event_views(loaded)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    assert apply_plan(warehouse, loaded, approval, views=views).ok
    before = snapshot(warehouse, views)

    after = make_plan(warehouse, loaded, views)
    assert {v.action for v in after.views} == {"unchanged"}
    assert not after.pending
    assert after.exit_code() == 0
    again = apply_plan(warehouse, loaded, approval, views=views)
    fresh = apply_plan(warehouse, loaded, approve(after, APPROVER), views=views)

    for result in (again, fresh):
        assert result.ok
        assert not result.wrote
        assert {r.outcome for r in result.results} == {"unchanged"}
    assert snapshot(warehouse, views) == before


def with_lane_members(*extra: str) -> tuple[Any, ...]:
    """The catalogue with members added to pipeline_run.lane: a model change."""
    from dataclasses import replace

    from agent_telemetry.schema import catalogue

    specs = []
    for spec in catalogue():
        if spec.name == "pipeline_run":
            fields = tuple(
                replace(f, members=(*f.members, *extra)) if f.name == "lane" else f
                for f in spec.fields
            )
            spec = replace(spec, fields=fields)
        specs.append(spec)
    return tuple(specs)


def test_a_model_change_plans_an_update_and_an_older_approval_writes_nothing(
    warehouse: BigQueryWarehouse, loaded: DeploymentConfig
) -> None:
    v1 = event_views(loaded)
    first = approve(make_plan(warehouse, loaded, v1), APPROVER)
    assert apply_plan(warehouse, loaded, first, views=v1).ok

    v2 = event_views(loaded, with_lane_members("batch"))
    plan = make_plan(warehouse, loaded, v2)
    actions = {v.name: v.action for v in plan.views}
    assert actions == {
        "pipeline_run": "update",
        "chat_turn": "unchanged",
        "pipeline_render": "unchanged",
        "provider_status": "unchanged",
    }
    update = plan.views[0]
    assert "SQL changed" in update.verdict.reasons
    changed = [line for line in update.diff.splitlines() if line[:1] in "+-"]
    assert changed[2:] == [
        "-# column lane STRING: Queue lane the run used. One of: public, admin, premium.",
        "+# column lane STRING: Queue lane the run used. One of: public, admin, premium, batch.",
        f"-# sql-sha256: {v1[0].sql_sha256[:32]}",
        f"+# sql-sha256: {v2[0].sql_sha256[:32]}",
    ]
    assert plan.exit_code() == 1
    approved_v2 = approve(plan, APPROVER)

    # The model changes again before apply: the approval no longer covers the plan.
    v3 = event_views(loaded, with_lane_members("batch", "bulk"))
    before = snapshot(warehouse, v3)
    refused = apply_plan(warehouse, loaded, approved_v2, views=v3)
    assert not refused.ok
    assert not refused.wrote
    assert refused.refused == ("pipeline_run: its generated definition changed since approval",)
    assert snapshot(warehouse, v3) == before

    applied = apply_plan(warehouse, loaded, approved_v2, views=v2)
    assert [(r.name, r.outcome) for r in applied.results] == [
        ("pipeline_run", "updated"),
        ("chat_turn", "unchanged"),
        ("pipeline_render", "unchanged"),
        ("provider_status", "unchanged"),
    ]
    assert {v.action for v in make_plan(warehouse, loaded, v2).views} == {"unchanged"}


def test_a_view_edited_outside_the_tool_is_drifted_and_not_overwritten_without_adopt(
    warehouse: BigQueryWarehouse, bq_client: Any, bq_retry: Any, loaded: DeploymentConfig
) -> None:
    views = event_views(loaded)
    assert apply_plan(
        warehouse, loaded, approve(make_plan(warehouse, loaded, views), APPROVER), views=views
    ).ok
    chat, render = views[1], views[2]
    # Someone edits chat_turn's description in the console ...
    table = bq_client.get_table(chat.table_id, retry=bq_retry)
    table.description = "Chat turns (edited by hand)"
    bq_client.update_table(table, ["description"], retry=bq_retry)
    # ... and pipeline_render's SQL: a column added, labels untouched.
    table = bq_client.get_table(render.table_id, retry=bq_retry)
    table.view_query = render.query.replace(
        "lines.timestamp AS timestamp,", "lines.timestamp AS timestamp, 1 AS hand_made,", 1
    )
    bq_client.update_table(table, ["view_query"], retry=bq_retry)

    plan = make_plan(warehouse, loaded, views)
    verdicts = {v.name: (v.action, v.verdict.reasons) for v in plan.views}
    assert verdicts == {
        "pipeline_run": ("unchanged", ()),
        "chat_turn": (
            "drifted",
            ("its description or column descriptions differ from what was applied",),
        ),
        "pipeline_render": (
            "drifted",
            ("its output columns differ from the schema agent-telemetry applied",),
        ),
        "provider_status": ("unchanged", ()),
    }
    assert plan.exit_code() == 1
    assert "+# description: " + chat.description in plan.views[1].diff.splitlines()
    approval = approve(plan, APPROVER)
    before = snapshot(warehouse, views)

    refused = apply_plan(warehouse, loaded, approval, views=views)

    assert not refused.ok
    assert not refused.wrote
    assert [r.split(":")[0] for r in refused.refused] == ["chat_turn", "pipeline_render"]
    assert all(r.endswith("rerun with --adopt to overwrite it") for r in refused.refused)
    assert snapshot(warehouse, views) == before
    assert warehouse.get_table(chat.table_id).description == "Chat turns (edited by hand)"

    adopted = apply_plan(warehouse, loaded, approval, views=views, adopt=True)
    assert [(r.name, r.outcome) for r in adopted.results] == [
        ("pipeline_run", "unchanged"),
        ("chat_turn", "adopted"),
        ("pipeline_render", "adopted"),
        ("provider_status", "unchanged"),
    ]
    assert {v.action for v in make_plan(warehouse, loaded, views).views} == {"unchanged"}
    assert (
        "hand_made"
        not in rows(bq_client, bq_retry, f"SELECT * FROM `{render.table_id}` LIMIT 1")[0]
    )


def test_a_view_or_table_this_tool_did_not_create_is_not_overwritten(
    warehouse: BigQueryWarehouse, bq_client: Any, bq_retry: Any, loaded: DeploymentConfig
) -> None:
    from google.cloud import bigquery

    views = event_views(loaded)
    chat, status = views[1], views[3]
    theirs = bigquery.Table(status.table_id)
    theirs.view_query = "SELECT 'theirs' AS owner"
    theirs.labels = {"team": "growth"}
    bq_client.create_table(theirs, retry=bq_retry)
    bq_client.create_table(
        bigquery.Table(chat.table_id, schema=[bigquery.SchemaField("x", "STRING")]), retry=bq_retry
    )

    plan = make_plan(warehouse, loaded, views)
    assert [(v.name, v.action) for v in plan.views] == [
        ("pipeline_run", "create"),
        ("chat_turn", "unmanaged"),
        ("pipeline_render", "create"),
        ("provider_status", "unmanaged"),
    ]
    assert plan.views[1].verdict.reasons == (
        "a table of this name exists; agent-telemetry only writes views",
    )
    assert plan.views[3].verdict.reasons == ("exists without the label managed-by=agent-telemetry",)
    approval = approve(plan, APPROVER)

    for adopt in (False, True):
        result = apply_plan(warehouse, loaded, approval, views=views, adopt=adopt)
        assert not result.ok
        assert not result.wrote
        reasons = [r.split(":")[0] for r in result.refused]
        # --adopt may take over a view, never replace a table.
        assert reasons == (["chat_turn"] if adopt else ["chat_turn", "provider_status"])
        assert warehouse.get_table(views[0].table_id) is None
        assert rows(bq_client, bq_retry, f"SELECT * FROM `{status.table_id}`") == [
            {"owner": "theirs"}
        ]
        assert warehouse.get_table(chat.table_id).kind == "TABLE"

    # Without the table in the way, --adopt takes the view over and keeps its labels.
    bq_client.delete_table(chat.table_id, retry=bq_retry)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    result = apply_plan(warehouse, loaded, approval, views=views, adopt=True)
    assert [(r.name, r.outcome) for r in result.results] == [
        ("pipeline_run", "created"),
        ("chat_turn", "created"),
        ("pipeline_render", "created"),
        ("provider_status", "adopted"),
    ]
    assert warehouse.get_table(status.table_id).labels["team"] == "growth"


def self_made_sink_schema() -> list[dict[str, Any]]:
    """The sink as Cloud Logging creates it: numbers typed FLOAT, and no column for the
    keys never logged yet (here ``attempts`` and ``model_calls``)."""
    from agent_telemetry.views import sink_schema

    schema = sink_schema()
    for field in schema:
        if field["name"] == "jsonPayload":
            field["fields"] = [
                {**f, "type": "FLOAT"} if f["type"] == "INTEGER" else f
                for f in field["fields"]
                if f["name"] not in ("attempts", "model_calls")
            ]
    return schema


def test_a_dry_run_failure_blocks_apply_and_patch_sink_fixes_it(
    warehouse: BigQueryWarehouse, bq_client: Any, bq_retry: Any, deployment: DeploymentConfig
) -> None:
    from tests.deploy.bigquery.helpers import resync_emulator_storage, sink_id

    lines = emitted_lines(
        [
            ("pipeline_run", {"lane": "public", "status": "ok", "queue_wait_ms": 5}),
            ("chat_turn", {"tier": "admin", "kind": "action", "duration_ms": 40}),
        ]
    )
    create_sink(
        bq_client, bq_retry, deployment, [log_entry(x) for x in lines], self_made_sink_schema()
    )
    original = warehouse.get_table(sink_id(deployment)).schema
    views = event_views(deployment)

    plan = make_plan(warehouse, deployment, views)
    assert plan.sink.missing_paths == (
        "jsonPayload.attempts INTEGER",
        "jsonPayload.model_calls INTEGER",
    )
    # A view reads only its own event's columns and the envelope (docs/design.md, "One
    # row per log entry"), so a sink that lacks a field fails the dry runs of the views
    # of the events that have it (attempts: pipeline_run; model_calls: both), no other.
    assert [v.name for v in plan.dry_run_failures] == ["pipeline_run", "chat_turn"]
    assert len(plan.views) == 4
    assert "attempts" in plan.views[0].dry_run.error
    assert plan.exit_code() == 1
    approval = approve(plan, APPROVER)

    blocked = apply_plan(warehouse, deployment, approval, views=views)
    assert not blocked.ok
    assert not blocked.wrote
    assert [r.split(":")[0] for r in blocked.refused[:2]] == ["pipeline_run", "chat_turn"]
    assert blocked.refused[-1].startswith("the sink lacks 2 payload field(s); --patch-sink adds")
    assert all(warehouse.get_table(v.table_id) is None for v in views)
    assert warehouse.get_table(sink_id(deployment)).schema == original

    patched = apply_plan(warehouse, deployment, approval, views=views, patch_sink=True)
    assert patched.sink_patched == plan.sink.missing_paths
    schema = warehouse.get_table(sink_id(deployment)).schema
    payload_before = next(f for f in original if f.name == "jsonPayload")
    payload_after = next(f for f in schema if f.name == "jsonPayload")
    # Appended, NULLABLE, typed from the models; nothing removed, reordered or retyped.
    assert [f for f in schema if f.name != "jsonPayload"] == [
        f for f in original if f.name != "jsonPayload"
    ]
    assert payload_after.fields[: len(payload_before.fields)] == payload_before.fields
    assert [
        (f.name, f.type, f.mode) for f in payload_after.fields[len(payload_before.fields) :]
    ] == [
        ("attempts", "INTEGER", "NULLABLE"),
        ("model_calls", "INTEGER", "NULLABLE"),
    ]

    # The emulator stores the patch in its catalog only; BigQuery applies it to the table.
    resync_emulator_storage(bq_client, bq_retry, sink_id(deployment))
    finished = apply_plan(warehouse, deployment, approval, views=views, patch_sink=True)
    assert finished.ok
    assert finished.sink_patched == ()
    final = make_plan(warehouse, deployment, views)
    assert {v.action for v in final.views} == {"unchanged"}
    assert final.sink.missing == ()
    assert final.exit_code() == 0
    target = f"{deployment.target.project}.{deployment.target.dataset}"
    assert rows(
        bq_client, bq_retry, f"SELECT lane, queue_wait_ms, attempts FROM `{target}.pipeline_run`"
    ) == [{"lane": "public", "queue_wait_ms": 5, "attempts": None}]


class DroppedConnection(BigQueryWarehouse):
    """The real client and server, with one call failing as a dropped connection would."""

    def __init__(self, inner: BigQueryWarehouse, fail: dict[str, str]) -> None:
        super().__init__(inner._client, retry_deadline_s=20)
        self.fail = dict(fail)  # view name -> the call that fails for it

    def _maybe_fail(self, call: str, table_id: str) -> None:
        name = table_id.rsplit(".", 1)[-1]
        if self.fail.get(name) == call:
            del self.fail[name]
            raise BigQueryError(f"{call} {table_id}: connection reset by peer")

    def create_view(self, table_id: str, **kwargs: Any) -> None:
        self._maybe_fail("create_view", table_id)
        super().create_view(table_id, **kwargs)

    def set_metadata(self, table_id: str, **kwargs: Any) -> None:
        self._maybe_fail("set_metadata", table_id)
        super().set_metadata(table_id, **kwargs)


def test_a_failure_part_way_is_reported_per_view_and_a_rerun_converges(
    warehouse: BigQueryWarehouse, loaded: DeploymentConfig
) -> None:
    views = event_views(loaded)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    flaky = DroppedConnection(
        warehouse, {"chat_turn": "create_view", "pipeline_render": "set_metadata"}
    )

    first = apply_plan(flaky, loaded, approval, views=views)

    assert not first.ok
    assert [(r.name, r.outcome, r.detail) for r in first.results] == [
        ("pipeline_run", "created", ""),
        ("chat_turn", "failed", f"create_view {views[1].table_id}: connection reset by peer"),
        (
            "pipeline_render",
            "failed",
            f"set_metadata {views[2].table_id}: connection reset by peer",
        ),
        ("provider_status", "created", ""),
    ]
    halfway = make_plan(warehouse, loaded, views)
    assert [(v.name, v.action) for v in halfway.views] == [
        ("pipeline_run", "unchanged"),
        ("chat_turn", "create"),
        ("pipeline_render", "update"),
        ("provider_status", "unchanged"),
    ]
    assert halfway.views[2].verdict.reasons == (
        "an earlier apply stopped before it set descriptions and labels",
    )

    rerun = apply_plan(warehouse, loaded, approval, views=views)

    assert rerun.ok
    assert [(r.name, r.outcome) for r in rerun.results] == [
        ("pipeline_run", "unchanged"),
        ("chat_turn", "created"),
        ("pipeline_render", "updated"),
        ("provider_status", "unchanged"),
    ]
    assert {v.action for v in make_plan(warehouse, loaded, views).views} == {"unchanged"}


def _elsewhere(config: DeploymentConfig, section: str, **changes: str) -> DeploymentConfig:
    data = config.model_dump()
    data[section] = {**data[section], **changes}
    return parse_config(data)


@pytest.mark.parametrize(
    ("section", "changes", "named"),
    [
        # "{own}": this test's dataset in that section (unique per test and process)
        ("target", {"dataset": "{own}_other"}, "target is"),
        ("source", {"dataset": "{own}_other"}, "source is"),
        ("source", {"layout": "sharded"}, "layout is sharded, the approval is for partitioned"),
    ],
)
def test_an_approval_for_another_target_source_or_layout_writes_nothing(
    warehouse: BigQueryWarehouse,
    bq_client: Any,
    bq_retry: Any,
    loaded: DeploymentConfig,
    section: str,
    changes: dict[str, str],
    named: str,
) -> None:
    views = event_views(loaded)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    own = getattr(loaded, section).dataset
    moved = _elsewhere(loaded, section, **{k: v.format(own=own) for k, v in changes.items()})
    if "dataset" in changes:
        dataset = getattr(moved, section).dataset
        bq_client.create_dataset(f"{loaded.target.project}.{dataset}", retry=bq_retry)
    if section == "source" and "dataset" in changes:
        create_sink(bq_client, bq_retry, moved, sink_entries())
    moved_views = event_views(moved)
    before = snapshot(warehouse, moved_views)

    refused = apply_plan(warehouse, moved, approval, views=moved_views)

    assert not refused.ok
    assert not refused.wrote
    assert any(named in reason for reason in refused.refused), refused.refused
    assert snapshot(warehouse, moved_views) == before


@pytest.mark.parametrize("adopt", [False, True])
def test_a_view_changed_between_approve_and_apply_is_not_overwritten(
    warehouse: BigQueryWarehouse,
    bq_client: Any,
    bq_retry: Any,
    loaded: DeploymentConfig,
    adopt: bool,
) -> None:
    """Approved as `create`; someone creates the view by hand before apply: even --adopt
    refuses, since the approval never saw that view."""
    views = event_views(loaded)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    chat = views[1]
    bq_client.query(
        f"CREATE VIEW `{chat.table_id}` AS SELECT 1 AS hand_made", retry=bq_retry
    ).result()

    refused = apply_plan(warehouse, loaded, approval, views=views, adopt=adopt)

    assert not refused.ok
    assert not refused.wrote
    assert refused.refused == (
        f"{chat.name}: the deployed view changed since approval (now: unmanaged)",
    )
    assert rows(bq_client, bq_retry, f"SELECT * FROM `{chat.table_id}`") == [{"hand_made": 1}]


def test_a_sink_table_changed_between_approve_and_apply_writes_nothing(
    warehouse: BigQueryWarehouse, bq_client: Any, bq_retry: Any, loaded: DeploymentConfig
) -> None:
    views = event_views(loaded)
    approval = approve(make_plan(warehouse, loaded, views), APPROVER)
    moved = _elsewhere(loaded, "source", table="other_sink")
    create_sink(bq_client, bq_retry, moved, sink_entries())
    before = snapshot(warehouse, views)

    refused = apply_plan(warehouse, moved, approval, views=event_views(moved))

    assert not refused.ok
    assert not refused.wrote
    assert "the sink table differs from the approved one" in refused.refused
    assert snapshot(warehouse, views) == before


@pytest.mark.parametrize("edit", ["description", "delete"])
def test_a_console_edit_between_plan_and_write_is_refused_by_name_not_overwritten(
    warehouse: BigQueryWarehouse,
    bq_client: Any,
    bq_retry: Any,
    loaded: DeploymentConfig,
    edit: str,
) -> None:
    """The plan is read, then someone edits (or deletes) the view in the console before
    apply writes it. BigQuery would refuse the stale etag; this emulator ignores etags, so
    what holds here is apply's re-read just before the write (docs/analyst-bigquery.md)."""
    v1 = event_views(loaded)
    first = approve(make_plan(warehouse, loaded, v1), APPROVER)
    assert apply_plan(warehouse, loaded, first, views=v1).ok
    v2 = event_views(loaded, with_lane_members("batch"))
    plan = make_plan(warehouse, loaded, v2)
    approval = approve(plan, APPROVER)
    run = v2[0]
    if edit == "description":
        table = bq_client.get_table(run.table_id, retry=bq_retry)
        table.description = "edited in the console"
        bq_client.update_table(table, ["description"], retry=bq_retry)
    else:
        bq_client.delete_table(run.table_id, retry=bq_retry)
    before = snapshot(warehouse, v2)

    result = apply_planned(warehouse, plan, approval)

    assert not result.ok
    why = (
        "it changed since the plan (not overwritten)"
        if edit == "description"
        else ("it was deleted since the plan")
    )
    assert result.results[0] == ViewResult(
        "pipeline_run", "failed", f"pipeline_run: {why}; run views plan again"
    )
    assert snapshot(warehouse, v2) == before
