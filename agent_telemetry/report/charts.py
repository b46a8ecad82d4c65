"""The report's charts: one query over the views each, and its rows as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agent_telemetry.schema import ChatTurn, PipelineRun, ProviderStatus, event_spec
from agent_telemetry.views import LANE_WINDOW_MINUTES

if TYPE_CHECKING:
    from agent_telemetry.warehouse import Warehouse

Kind = Literal["stacked_time", "grouped_bars", "timeline"]


def _members(model: type, field: str) -> tuple[str, ...]:
    return event_spec(model).field(field).members


def _order(model: type, field: str, column: str) -> str:
    """ORDER BY the model's own order of an enum field's members."""
    members = "[" + ", ".join(f"'{m}'" for m in _members(model, field)) + "]"
    return f"list_position({members}, {column})"


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart: what it shows, the query giving its rows, how to draw them.

    Rows are (x, series, value) for bars and stacked bars; (row, state, start, end) for a
    timeline. ``series`` lists the series in the order to draw them (all of them, so a
    state that never happened still shows in the legend).
    """

    key: str
    title: str
    caption: str
    sql: str
    kind: Kind
    x_label: str
    y_label: str
    series: tuple[str, ...]
    panels_by: str | None = None  # grouped_bars/stacked_time: one panel per distinct x[0]


CHART_WINDOW_MINUTES = 15
STATUSES = _members(PipelineRun, "status")
LANES = _members(PipelineRun, "lane")
STATES = _members(ProviderStatus, "state")
# What the lane_health chart calls each window.
LANE_VERDICTS = ("finishing work", "no run ended", "looks dead")

CHARTS: tuple[Chart, ...] = (
    Chart(
        key="runs_over_time",
        title="Runs per lane and status over time",
        caption=(
            f"pipeline_run, per {CHART_WINDOW_MINUTES}-minute window (UTC); one panel per lane."
        ),
        sql=(
            f"SELECT lane, time_bucket(INTERVAL {CHART_WINDOW_MINUTES} MINUTE, timestamp) "
            "AS window_start, status, count(*) AS runs FROM pipeline_run WHERE lane IS NOT NULL "
            f"GROUP BY 1, 2, 3 ORDER BY {_order(PipelineRun, 'lane', 'lane')}, window_start, "
            f"{_order(PipelineRun, 'status', 'status')}"
        ),
        kind="stacked_time",
        x_label="time (UTC)",
        y_label="runs",
        series=STATUSES,
        panels_by="lane",
    ),
    Chart(
        key="queue_wait",
        title="Queue wait per lane: p50 and p95",
        caption="pipeline_run.queue_wait_ms, enqueue to start, in seconds; p50 and p95 "
        "interpolated between the two nearest waits (DuckDB quantile_cont), as in the demo.",
        sql=(
            "SELECT * FROM (SELECT lane, 'p50' AS percentile, "
            "quantile_cont(queue_wait_ms, 0.5) / 1000 AS s "
            "FROM pipeline_run WHERE lane IS NOT NULL AND queue_wait_ms IS NOT NULL GROUP BY lane "
            "UNION ALL SELECT lane, 'p95', quantile_cont(queue_wait_ms, 0.95) / 1000 "
            "FROM pipeline_run WHERE lane IS NOT NULL AND queue_wait_ms IS NOT NULL GROUP BY lane) "
            f"ORDER BY {_order(PipelineRun, 'lane', 'lane')}, 2"
        ),
        kind="grouped_bars",
        x_label="lane",
        y_label="seconds",
        series=("p50", "p95"),
    ),
    Chart(
        key="render_slots",
        title="Render slot waits",
        caption="pipeline_render.slot_wait_ms per render lane, in seconds; p50 and p95 "
        "interpolated (DuckDB quantile_cont).",
        sql=(
            "SELECT render_lane, stat, s FROM (SELECT render_lane, "
            "quantile_cont(slot_wait_ms, 0.5) / 1000 AS p50, "
            "quantile_cont(slot_wait_ms, 0.95) / 1000 AS p95, max(slot_wait_ms) / 1000 AS max "
            "FROM pipeline_render WHERE render_lane IS NOT NULL AND slot_wait_ms IS NOT NULL "
            "GROUP BY render_lane) UNPIVOT (s FOR stat IN (p50, p95, max)) "
            "ORDER BY render_lane, list_position(['p50', 'p95', 'max'], stat)"
        ),
        kind="grouped_bars",
        x_label="render lane",
        y_label="seconds",
        series=("p50", "p95", "max"),
    ),
    Chart(
        key="runs_today",
        title="Runs today per run (user_runs_today bucket)",
        caption="pipeline_run: each run's ordinal among its caller's runs that UTC day.",
        sql=(
            "SELECT user_runs_today, lane, count(*) AS runs FROM pipeline_run "
            "WHERE user_runs_today IS NOT NULL AND lane IS NOT NULL GROUP BY 1, 2 "
            f"ORDER BY {_order(PipelineRun, 'user_runs_today', 'user_runs_today')}, "
            f"{_order(PipelineRun, 'lane', 'lane')}"
        ),
        kind="grouped_bars",
        x_label="runs today",
        y_label="runs",
        series=LANES,
    ),
    Chart(
        key="tokens_today",
        title="Tokens today per run (user_tokens_today bucket)",
        caption="pipeline_run: the caller's tokens that day as a share of the public budget (%).",
        sql=(
            "SELECT user_tokens_today, lane, count(*) AS runs FROM pipeline_run "
            "WHERE user_tokens_today IS NOT NULL AND lane IS NOT NULL GROUP BY 1, 2 "
            f"ORDER BY {_order(PipelineRun, 'user_tokens_today', 'user_tokens_today')}, "
            f"{_order(PipelineRun, 'lane', 'lane')}"
        ),
        kind="grouped_bars",
        x_label="share of the daily budget",
        y_label="runs",
        series=LANES,
    ),
    Chart(
        key="provider_states",
        title="Provider lane state over time",
        caption=(
            "provider_status: each stretch of one state, from the line that reported it to "
            "the next change (or the log's last line). A lane that answers 429 shows "
            "rate_limited, not live."
        ),
        sql=(
            "WITH marked AS (SELECT provider, state, timestamp, CASE WHEN state IS DISTINCT "
            "FROM lag(state) OVER w THEN 1 ELSE 0 END AS change FROM provider_status "
            "WHERE provider IS NOT NULL AND state IS NOT NULL "
            "WINDOW w AS (PARTITION BY provider ORDER BY timestamp)), "
            "stretches AS (SELECT provider, any_value(state) AS state, min(timestamp) AS since "
            "FROM (SELECT *, sum(change) OVER (PARTITION BY provider ORDER BY timestamp) AS n "
            "FROM marked) GROUP BY provider, n), "
            "log_end AS (SELECT max(t) AS t FROM (SELECT max(timestamp) AS t FROM pipeline_run "
            "UNION ALL SELECT max(timestamp) FROM chat_turn UNION ALL SELECT max(timestamp) "
            "FROM pipeline_render UNION ALL SELECT max(timestamp) FROM provider_status)) "
            "SELECT provider, state, since, coalesce(lead(since) OVER (PARTITION BY provider "
            "ORDER BY since), (SELECT t FROM log_end)) AS until FROM stretches "
            f"ORDER BY {_order(ProviderStatus, 'provider', 'provider')}, since"
        ),
        kind="timeline",
        x_label="time (UTC)",
        y_label="provider",
        series=STATES,
    ),
    Chart(
        key="lane_health",
        title="Provider lanes that look dead",
        caption=(
            "lane_health, per provider lane and 5-minute window: runs ended and none ok while "
            "the lane's state is not live or runs were reaped stalled (looks dead), runs "
            "ended with some ok (finishing work), or only a status line (no run ended). A lane "
            "that looks busy but finishes nothing shows red even while its probe says live."
        ),
        sql=(
            "SELECT provider, CASE WHEN looks_dead THEN 'looks dead' WHEN runs_ended > 0 "
            f"THEN 'finishing work' ELSE 'no run ended' END AS verdict, window_start, "
            f"window_start + INTERVAL {LANE_WINDOW_MINUTES} MINUTE AS window_end "
            f"FROM lane_health ORDER BY {_order(ProviderStatus, 'provider', 'provider')}, "
            "window_start"
        ),
        kind="timeline",
        x_label="time (UTC)",
        y_label="provider",
        series=LANE_VERDICTS,
    ),
    Chart(
        key="refusals_errors",
        title="Chat refusals and errors",
        caption="chat_turn.refusal and chat_turn.error, by kind.",
        sql=(
            "SELECT kind, what, turns FROM (SELECT refusal AS kind, 'refusal' AS what, "
            "count(*) AS turns FROM chat_turn WHERE refusal IS NOT NULL GROUP BY ALL "
            "UNION ALL SELECT error, 'error', count(*) FROM chat_turn WHERE error IS NOT NULL "
            "GROUP BY ALL) ORDER BY what DESC, turns DESC, kind"
        ),
        kind="grouped_bars",
        x_label="kind",
        y_label="chat turns",
        series=("refusal", "error"),
    ),
    Chart(
        key="data_quality",
        title="Data quality over time",
        caption=(
            "telemetry_quality per UTC day: values the emitter rejected, values outside a "
            "field's set or bounds, lines with unknown fields, log entries delivered twice."
        ),
        sql=(
            "WITH per_event AS (SELECT day, event, sum(invalid_values) AS invalid, "
            "sum(out_of_domain_values) AS ood, max(lines_with_unknown_fields) AS unknown, "
            "max(coalesce(duplicate_entries, 0)) AS dup FROM telemetry_quality GROUP BY ALL) "
            "SELECT strftime(day, '%Y-%m-%d') AS day, measure, n FROM (SELECT day, "
            'sum(invalid) AS "invalid values", sum(ood) AS "out of domain", '
            'sum(unknown) AS "unknown fields", sum(dup) AS duplicates FROM per_event '
            "GROUP BY day) UNPIVOT (n FOR measure IN "
            '("invalid values", "out of domain", "unknown fields", duplicates)) '
            "ORDER BY day, list_position(['invalid values', 'out of domain', 'unknown fields', "
            "'duplicates'], measure)"
        ),
        kind="grouped_bars",
        x_label="UTC day",
        y_label="count",
        series=("invalid values", "out of domain", "unknown fields", "duplicates"),
    ),
)


@dataclass(frozen=True, slots=True)
class ChartData:
    chart: Chart
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    @property
    def empty(self) -> bool:
        return not self.rows


def chart_data(wh: Warehouse, charts: tuple[Chart, ...] = CHARTS) -> list[ChartData]:
    """Run every chart's query on the warehouse's views."""
    out = []
    for chart in charts:
        relation = wh.sql(chart.sql)
        out.append(ChartData(chart, tuple(relation.columns), tuple(relation.fetchall())))
    return out


__all__ = ["CHARTS", "STATES", "Chart", "ChartData", "chart_data"]
_ = ChatTurn  # the chat chart reads chat_turn; imported so a rename fails here, loudly
