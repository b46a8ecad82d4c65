"""The questions the demo answers, asked of the generated views (never the raw table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_telemetry._text import clean
from agent_telemetry.schema import PipelineRun, event_spec

if TYPE_CHECKING:
    from rich.console import Console

    from agent_telemetry.warehouse import Warehouse


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""


def _members(field: str) -> str:
    """A DuckDB list literal of a field's members, in the model's order (for sorting)."""
    members = event_spec(PipelineRun).field(field).members
    return "[" + ", ".join(f"'{m}'" for m in members) + "]"


STATUSES = event_spec(PipelineRun).field("status").members
LANES_TITLE = "Lanes that looked busy but finished nothing (lane_health)"

QUERIES: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    (
        "Runs by lane and status (pipeline_run)",
        ("lane", *STATUSES, "total"),
        "SELECT lane, "
        + ", ".join(f"count(*) FILTER (WHERE status = '{s}')" for s in STATUSES)
        + ", count(*) FROM pipeline_run GROUP BY lane ORDER BY lane",
        "",
    ),
    (
        "Queue wait by lane (pipeline_run)",
        ("lane", "runs", "wait p50 s", "wait p95 s", "max wait s", "max queue position"),
        "SELECT lane, count(*), round(quantile_cont(queue_wait_ms, 0.5) / 1000, 1), "
        "round(quantile_cont(queue_wait_ms, 0.95) / 1000, 1), round(max(queue_wait_ms) / 1000, 1), "
        "max(queue_position) FROM pipeline_run GROUP BY lane ORDER BY lane",
        "p50 and p95 interpolated (DuckDB quantile_cont), as in the report\n"
        "admin: 15 runs at 5 at a time, 10 s between starts; the provider outage adds the rest",
    ),
    (
        "Runs today, per run (user_runs_today bucket)",
        ("bucket", "public", "premium", "admin"),
        "SELECT user_runs_today, count(*) FILTER (WHERE lane = 'public'), "
        "count(*) FILTER (WHERE lane = 'premium'), count(*) FILTER (WHERE lane = 'admin') "
        "FROM pipeline_run WHERE user_runs_today IS NOT NULL GROUP BY user_runs_today "
        f"ORDER BY list_position({_members('user_runs_today')}, user_runs_today)",
        f"public users stop at {8} runs a day (later asks are refused with run_limit)",
    ),
    (
        "Tokens today, per run (user_tokens_today: share of the public daily budget)",
        ("bucket", "public", "premium", "admin"),
        "SELECT user_tokens_today, count(*) FILTER (WHERE lane = 'public'), "
        "count(*) FILTER (WHERE lane = 'premium'), count(*) FILTER (WHERE lane = 'admin') "
        "FROM pipeline_run WHERE user_tokens_today IS NOT NULL GROUP BY user_tokens_today "
        f"ORDER BY list_position({_members('user_tokens_today')}, user_tokens_today)",
        "",
    ),
    (
        "Refusals and errors by kind",
        ("view", "column", "kind", "count"),
        "SELECT * FROM ("
        "SELECT 'chat_turn', 'refusal', refusal, count(*) FROM chat_turn "
        "WHERE refusal IS NOT NULL GROUP BY ALL UNION ALL "
        "SELECT 'chat_turn', 'error', error, count(*) FROM chat_turn "
        "WHERE error IS NOT NULL GROUP BY ALL UNION ALL "
        "SELECT 'pipeline_run', 'reason', reason, count(*) FROM pipeline_run "
        "WHERE reason IS NOT NULL GROUP BY ALL UNION ALL "
        "SELECT 'pipeline_run', 'error_class', error_class, count(*) FROM pipeline_run "
        "WHERE error_class IS NOT NULL GROUP BY ALL) ORDER BY 1, 2, 4 DESC, 3",
        "",
    ),
    (
        "Render slots (pipeline_render)",
        ("render lane", "renders", "slot wait p50 s", "slot wait p95 s", "passed", "2nd attempts"),
        "SELECT render_lane, count(*), round(quantile_cont(slot_wait_ms, 0.5) / 1000, 1), "
        "round(quantile_cont(slot_wait_ms, 0.95) / 1000, 1), "
        "printf('%.0f%%', 100 * avg(CAST(passed AS INTEGER))), count(*) FILTER (WHERE attempt = 2) "
        "FROM pipeline_render GROUP BY ALL ORDER BY 1",
        "two render slots shared by runs and theme toggles",
    ),
    (
        "Provider states over time (provider_status)",
        ("from", "until", "provider", "state", "learned by", "lines", "retry after s", "blocked"),
        # One row per stretch of one state: a stretch starts where the state changes.
        "WITH marked AS (SELECT *, CASE WHEN state IS DISTINCT FROM lag(state) OVER w "
        "THEN 1 ELSE 0 END AS change FROM provider_status "
        "WINDOW w AS (PARTITION BY provider ORDER BY timestamp)), "
        "stretches AS (SELECT provider, any_value(state) AS state, min(timestamp) AS since, "
        "string_agg(DISTINCT probe, ', ' ORDER BY probe) AS probes, count(*) AS lines, "
        "max(retry_after_s) AS retry, max(blocked_runs) AS blocked FROM ("
        "SELECT *, sum(change) OVER (PARTITION BY provider ORDER BY timestamp) AS stretch "
        "FROM marked) GROUP BY provider, stretch) "
        "SELECT strftime(since, '%H:%M'), "
        "coalesce(strftime(lead(since) OVER (PARTITION BY provider ORDER BY since), '%H:%M'), "
        "'end'), provider, state, probes, lines, retry, blocked FROM stretches "
        "ORDER BY since, provider",
        "times UTC; retry_after and blocked runs are the stretch's maximum",
    ),
    (
        LANES_TITLE,
        ("from", "until", "provider", "windows", "state live", "runs ended", "errors", "stalled"),
        # One row per stretch of consecutive flagged 5-minute windows of one lane (none
        # of their runs ended ok: that is part of looks_dead).
        "WITH flagged AS (SELECT *, window_start - to_minutes(5 * row_number() OVER "
        "(PARTITION BY provider ORDER BY window_start)) AS stretch FROM lane_health "
        "WHERE looks_dead) "
        "SELECT strftime(min(window_start), '%H:%M'), "
        "strftime(max(window_start) + INTERVAL 5 MINUTE, '%H:%M'), provider, count(*), "
        "count(*) FILTER (WHERE state = 'live'), sum(runs_ended), "
        "sum(runs_rate_limited + runs_quota_exhausted + runs_model_overloaded), "
        "sum(runs_stalled) "
        "FROM flagged GROUP BY provider, stretch ORDER BY min(window_start), provider",
        "looks_dead: runs ended and none ok, while the lane's last known state was not live "
        "or runs were reaped stalled; state live: flagged windows whose last known state was "
        "live; errors: failed rate_limited, quota_exhausted or model_overloaded; times UTC",
    ),
    (
        "Data quality (telemetry_quality)",
        ("event", "lines", "lines with invalid fields", "invalid values", "out of domain"),
        "SELECT event, max(lines), max(lines_with_invalid_fields), sum(invalid_values), "
        "sum(out_of_domain_values) FROM telemetry_quality GROUP BY event ORDER BY event",
        "",
    ),
)


def ask(wh: Warehouse) -> list[Section]:
    return [
        Section(title, headers, tuple(wh.rows(sql)), note) for title, headers, sql, note in QUERIES
    ]


def flagged_lanes(sections: list[Section]) -> str:
    """When lane_health flags a lane, in one sentence (the demo's last word on lanes)."""
    section = next(s for s in sections if s.title == LANES_TITLE)
    if not section.rows:
        return "lane_health flags no lane: every lane that ended runs finished some."
    stretches = "; ".join(f"{row[2]} {row[0]}-{row[1]}" for row in section.rows)
    return f"lane_health flags a lane that looked busy but finished nothing: {stretches} UTC"


def render_sections(sections: list[Section], console: Console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    for section in sections:
        console.print(f"\n[bold]{section.title}[/bold]", highlight=False)
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
        # Values read back from the views: outside text, shown clean and never as markup.
        cells = [
            tuple("-" if value is None else clean(_cell(value)) for value in row)
            for row in section.rows
        ]
        for index, header in enumerate(section.headers):
            numeric = all(isinstance(row[index], int | float | None) for row in section.rows)
            # At 80 columns a header wraps at its spaces and a value keeps its whole width
            # (min_width); only if that still does not fit does a value fold, never "…":
            # a cut name (anthrop…) reads as another name.
            table.add_column(
                header,
                justify="right" if numeric and index else "left",
                overflow="fold",
                min_width=None if numeric else max((len(row[index]) for row in cells), default=1),
            )
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
        if section.note:
            console.print(section.note, style="dim", highlight=False)


def _cell(value: Any) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)
