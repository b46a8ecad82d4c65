"""``preview``: every view run on the local warehouse, summarised per column.

Event views: rows, time span, and per field the value counts (closed sets, booleans)
or min / p50 / p95 / max (bounded integers), plus the lines with invalid fields.
``telemetry_quality``: lines per event and every field with invalid or out-of-domain
values. The summaries are queries over the views, so they show what analysts will see.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.table import Table

from agent_telemetry._text import markup, rich_text
from agent_telemetry.schema import FieldSpec, event_spec
from agent_telemetry.schema.envelope import NOT_A_FIELD
from agent_telemetry.views import LANE_VIEW
from agent_telemetry.warehouse._sink.duckdb_types import quote_identifier

if TYPE_CHECKING:
    from rich.console import Console

    from agent_telemetry.views import ViewDefinition
    from agent_telemetry.warehouse import Warehouse

TOP_VALUES = 8


@dataclass(frozen=True, slots=True)
class ColumnSummary:
    name: str
    non_null: int
    summary: str


@dataclass(frozen=True, slots=True)
class ViewSummary:
    name: str
    rows: int
    span: str
    columns: tuple[ColumnSummary, ...]
    quality: tuple[tuple[Any, ...], ...] = ()


def _counts(pairs: list[tuple[Any, int]]) -> str:
    shown = [f"{_fmt(value)} {count:,}" for value, count in pairs[:TOP_VALUES]]
    if len(pairs) > TOP_VALUES:
        shown.append(f"+{len(pairs) - TOP_VALUES} more")
    return " · ".join(shown) or "-"


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{value:,.0f}"
    return str(value)


def _field_summary(wh: Warehouse, view: str, spec: FieldSpec) -> ColumnSummary:
    column = quote_identifier(spec.name)
    (non_null,) = wh.one(f"SELECT count({column}) FROM {view}")
    if spec.kind == "int":
        row = wh.one(
            f"SELECT min({column}), quantile_disc({column}, 0.5), quantile_disc({column}, 0.95), "
            f"max({column}) FROM {view}"
        )
        if row[0] is None:
            return ColumnSummary(spec.name, 0, "-")
        text = " · ".join(
            f"{label} {_fmt(v)}" for label, v in zip(("min", "p50", "p95", "max"), row, strict=True)
        )
        return ColumnSummary(spec.name, non_null, text)
    pairs = wh.rows(
        f"SELECT {column}, count(*) AS n FROM {view} WHERE {column} IS NOT NULL GROUP BY ALL"
    )
    # In the model's order (buckets read low to high), booleans false first.
    order = list(spec.members) if spec.kind == "enum" else [False, True]
    pairs.sort(key=lambda pair: order.index(pair[0]) if pair[0] in order else len(order))
    return ColumnSummary(spec.name, non_null, _counts(pairs))


def _span(rows: int, first: datetime | None, last: datetime | None) -> str:
    if not rows:
        return "no rows"
    if first is None or last is None:  # every row's timestamp is NULL
        return "no timestamps"
    return f"{first:%Y-%m-%d %H:%M:%S} .. {last:%Y-%m-%d %H:%M:%S} UTC"


def summarize_event_view(wh: Warehouse, view: ViewDefinition) -> ViewSummary:
    assert view.event is not None
    model = wh.catalogue.model(view.event, view.schema_version)
    assert model is not None  # the view was generated from this catalogue
    spec = event_spec(model)
    name = quote_identifier(view.name)
    rows, first, last = wh.one(f"SELECT count(*), min(timestamp), max(timestamp) FROM {name}")
    span = _span(rows, first, last)
    columns = [_field_summary(wh, name, field) for field in spec.fields]
    # The view keeps only field names; never print anything else, whatever the view holds.
    named: Counter[str] = Counter()
    for value, count in wh.rows(
        f"SELECT f, count(*) FROM (SELECT unnest(invalid_fields) AS f FROM {name}) GROUP BY ALL"
    ):
        named[value if value in spec.field_names else NOT_A_FIELD] += int(count)
    invalid = sorted(named.items(), key=lambda pair: (-pair[1], pair[0]))
    (with_invalid,) = wh.one(f"SELECT count(*) FROM {name} WHERE len(invalid_fields) > 0")
    columns.append(ColumnSummary("invalid_fields", with_invalid, _counts(invalid)))
    return ViewSummary(view.name, int(rows), span, tuple(columns))


def summarize_quality_view(wh: Warehouse, view: ViewDefinition) -> ViewSummary:
    name = quote_identifier(view.name)
    (rows,) = wh.one(f"SELECT count(*) FROM {name}")
    per_event = wh.rows(
        "SELECT event, sum(lines), sum(lines_with_invalid_fields), sum(lines_with_unknown_fields) "
        f"FROM (SELECT DISTINCT day, event, schema_version, lines, lines_with_invalid_fields, "
        f"lines_with_unknown_fields FROM {name}) GROUP BY event ORDER BY event"
    )
    problems = wh.rows(
        "SELECT event, field, sum(invalid_values), sum(out_of_domain_values) FROM "
        f"{name} GROUP BY event, field "
        "HAVING sum(invalid_values) > 0 OR sum(out_of_domain_values) > 0 ORDER BY event, field"
    )
    columns = tuple(
        ColumnSummary(
            str(event),
            int(lines),
            f"lines with invalid fields {int(invalid):,} · with unknown fields {int(unknown):,}",
        )
        for event, lines, invalid, unknown in per_event
    )
    return ViewSummary(
        view.name, int(rows), "per UTC day, event and field", columns, tuple(problems)
    )


def summarize_lane_view(wh: Warehouse, view: ViewDefinition) -> ViewSummary:
    """lane_health: per provider lane, its windows, the runs that ended, and how many
    windows looked dead."""
    name = quote_identifier(view.name)
    rows, first, last = wh.one(f"SELECT count(*), min(window_start), max(window_start) FROM {name}")
    per_lane = wh.rows(
        "SELECT provider, count(*), sum(runs_ended), sum(runs_stalled), "
        f"count(*) FILTER (WHERE looks_dead) FROM {name} GROUP BY provider ORDER BY provider"
    )
    columns = tuple(
        ColumnSummary(
            str(provider),
            int(windows),
            f"runs ended {int(ended):,} · stalled {int(stalled):,} · "
            f"windows looking dead {int(dead):,}",
        )
        for provider, windows, ended, stalled, dead in per_lane
    )
    return ViewSummary(view.name, int(rows), _span(int(rows), first, last), columns)


def summarize(wh: Warehouse) -> list[ViewSummary]:
    summaries = []
    for view in wh.views():
        if view.event is not None:
            summaries.append(summarize_event_view(wh, view))
        elif view.reads:
            summaries.append(summarize_lane_view(wh, view))
        else:
            summaries.append(summarize_quality_view(wh, view))
    return summaries


def render_preview(summaries: list[ViewSummary], console: Console) -> None:
    for summary in summaries:
        console.print(
            f"[bold]{markup(summary.name)}[/bold]: {summary.rows:,} rows, {markup(summary.span)}"
        )
        table = Table()
        is_quality = summary.name == "telemetry_quality"
        is_lanes = summary.name == LANE_VIEW
        key, count = ("event", "lines") if is_quality else ("column", "non-null")
        key, count = ("provider", "windows") if is_lanes else (key, count)
        table.add_column(key)
        table.add_column(count, justify="right")
        table.add_column("summary", overflow="fold")
        for column in summary.columns:
            table.add_row(rich_text(column.name), f"{column.non_null:,}", rich_text(column.summary))
        console.print(table)
        if is_quality and summary.quality:
            console.print("fields with rejected or out-of-domain values:")
            problems = Table()
            problems.add_column("event")
            problems.add_column("field")
            problems.add_column("invalid (dropped)", justify="right")
            problems.add_column("out of domain", justify="right")
            for event, field, invalid, out in summary.quality:
                # Names read from the logs' invalid_fields: outside text.
                problems.add_row(
                    rich_text(event), rich_text(field), f"{int(invalid):,}", f"{int(out):,}"
                )
            console.print(problems)
        elif is_quality:
            console.print("no invalid or out-of-domain values")
