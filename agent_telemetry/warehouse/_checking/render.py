"""How a ``check-logs`` report reads: rich tables for people, JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent_telemetry._text import clean, clean_json, rich_text
from agent_telemetry.schema.coverage import Coverage
from agent_telemetry.warehouse._checking.check_logs import COERCIONS, LINE_RULES, LogCheckReport
from agent_telemetry.warehouse._checking.rare import RareCombinations
from agent_telemetry.warehouse._reading.inputs import Repeat, repeat_warning


def render_json(report: LogCheckReport, covered: Coverage | None = None) -> str:
    document = report.as_dict()
    if covered is not None:
        document["telemetry_coverage"] = covered.as_dict()
    return json.dumps(clean_json(document), indent=2)


# What check-logs, preview and report print when no line was telemetry (then exit 1).
NO_TELEMETRY = "[yellow]warning[/yellow]: no telemetry lines found"
NUMERIC = frozenset(
    {"records", "telemetry", "non-telemetry", "truncated", "lines", "valid", "invalid"}
    | {"oversized", "too deep", "undecodable", "duplicates", "combinations", "rare lines"}
)
# Event-days the rare-combination table lists (those with the most rare lines first).
MAX_RARE_ROWS = 20
# Columns shown only when some file has such records, so the usual report stays narrow.
OPTIONAL_COUNTS = (
    ("oversized", "oversized"),
    ("too deep", "too_deep"),
    ("undecodable", "undecodable"),
    ("duplicates", "duplicates"),
)


def _table(console: Console, title: str, *columns: str) -> Table:
    console.print(f"[bold]{title}[/bold]", highlight=False)
    table = Table()
    for column in columns:
        table.add_column(column, justify="right" if column in NUMERIC else "left", overflow="fold")
    return table


def render_text(report: LogCheckReport, console: Console) -> None:
    extra = [
        (header, name)
        for header, name in OPTIONAL_COUNTS
        if any(getattr(checked, name) for checked in report.files)
    ]
    files = _table(
        console,
        "files",
        "file",
        "layout",
        "records",
        "telemetry",
        "non-telemetry",
        "truncated",
        *(header for header, _name in extra),
    )
    for checked in report.files:
        truncated = f"{checked.truncated:,}"
        if checked.truncated_at:
            where = "line" if checked.layout == "lines" else "element"
            truncated += f" ({where} {', '.join(str(p) for p in checked.truncated_at)})"
        layout = (
            checked.layout
            if checked.encoding == "utf-8"
            else (f"{checked.layout}, {checked.encoding}")
        )
        files.add_row(
            rich_text(checked.path),  # a file name: outside text, never markup
            layout,
            f"{checked.records:,}",
            f"{checked.telemetry:,}",
            f"{checked.non_telemetry:,}",
            truncated,
            *(f"{getattr(checked, name):,}" for _header, name in extra),
        )
    console.print(files)

    events = _table(console, "events", "event", "lines", "valid", "invalid")
    for check in report.events.values():
        style = "red" if check.invalid else None
        events.add_row(
            rich_text(check.name),
            f"{check.lines:,}",
            f"{check.valid:,}",
            f"{check.invalid:,}",
            style=style,
        )
    console.print(events)

    if any(check.violations for check in report.events.values()):
        violations = _table(
            console, "violations (values are never shown)", "event", "field", "rule", "lines"
        )
        for check in report.events.values():
            for (name, rule), count in sorted(check.violations.items()):
                violations.add_row(
                    rich_text(check.name), rich_text(name), rich_text(rule), f"{count:,}"
                )
        console.print(violations)
        broken = {rule for check in report.events.values() for _name, rule in check.violations}
        for rule, text in LINE_RULES.items():
            if rule in broken:
                console.print(f"  [bold]{rule}[/bold]: {text}")
    for title, counter in (
        ("unknown events", report.unknown_events),
        ("rejected by the emitter (telemetry_rejected)", report.rejected),
    ):
        if counter:
            table = _table(console, title, "name", "lines")
            for name, count in sorted(counter.items()):
                table.add_row(rich_text(name), f"{count:,}")
            console.print(table)

    rows = [
        (check.name, name, *_coverage_cells(cov.as_dict()))
        for check in report.events.values()
        if check.lines
        for name, cov in check.coverage.items()
    ]
    if rows:
        coverage = _table(console, "coverage of valid values", "event", "field", "seen", "not seen")
        for row in rows:
            coverage.add_row(*(rich_text(cell) for cell in row))
        console.print(coverage)

    render_rare(report.rare, console)

    for coercion, label in COERCIONS.items():
        if report.coerced[coercion]:
            console.print(
                f"{label}: {report.coerced[coercion]:,} lines "
                "(read as the views read them; --strict-types makes them violations)",
                highlight=False,
            )
    print_input_warnings(
        console, report.repeated, [(f.path, f.stopped or "") for f in report.stopped]
    )
    if report.duplicates:
        console.print(
            f"duplicates: {report.duplicates:,} LogEntries seen before (same insertId and "
            "timestamp), checked once as the views count them once",
            highlight=False,
        )
    if report.conflicting:
        console.print(
            f"[red]conflicting[/red]: {report.conflicting:,} copies of LogEntries hold another "
            "payload than the copy checked (the one the views keep); both cannot be true",
            highlight=False,
        )
    if report.hostile:
        console.print(
            f"[yellow]warning[/yellow]: {report.hostile:,} record(s) oversized, too deep or "
            "undecodable were skipped (see files)",
            highlight=False,
        )
    if not report.telemetry:
        console.print(NO_TELEMETRY)
    elif report.clean:
        console.print("[green]clean[/green]: every telemetry line matches its model")
    elif report.stopped and not report.violations:
        console.print("[red]not clean: a file was not read to its end[/red]")
    elif report.conflicting and not report.violations:
        console.print("[red]not clean: copies of one log entry disagree[/red]")
    else:
        console.print(f"[red]{report.violations:,} line(s) with violations[/red]")


def render_rare(rare: RareCombinations, console: Console) -> None:
    """Per event and UTC day: how many valid lines carry a combination of closed-set
    values that fewer than k lines share. Counts only: a small combination's values
    would single out whoever made it."""
    days = rare.days()
    if not days:
        return
    shown = days
    if len(days) > MAX_RARE_ROWS:
        shown = sorted(days, key=lambda d: -d.rare_lines)[:MAX_RARE_ROWS]
        shown.sort(key=lambda d: (d.event, d.day))
    table = _table(
        console,
        f"rare combinations (k={rare.k}, values are never shown)",
        "event",
        "day (UTC)",
        "lines",
        "combinations",
        "rare lines",
        "rarest",
    )
    for day in shown:
        table.add_row(
            rich_text(day.event),
            day.day,
            f"{day.lines:,}",
            f"{day.combinations:,}",
            f"{day.rare_lines:,}",
            ", ".join(f"{n:,}" for n in day.rarest),
            style="yellow" if day.rare_lines else None,
        )
    console.print(table)
    console.print(
        f"  rare lines: valid lines whose closed-set values, together, fewer than {rare.k} "
        "lines of that day share; rarest: the smallest combinations' sizes, in lines",
        highlight=False,
    )
    if len(days) > len(shown):
        console.print(
            f"  {len(days) - len(shown):,} more event-days (--format json lists every one)",
            highlight=False,
        )


def print_input_warnings(
    console: Console, repeated: Iterable[Repeat], stopped: Iterable[tuple[str, str]]
) -> None:
    """One line per input named twice, and per gzip file stopped at a limit."""
    for repeat in repeated:
        line = Text("warning", style="yellow")
        line.append(f": {clean(repeat_warning(repeat))}")
        console.print(line, soft_wrap=True, highlight=False)
    for path, why in stopped:
        line = Text("error", style="red")
        line.append(
            f": {clean(path)}: stopped reading, {clean(why)}; the records before it are counted"
        )
        console.print(line, soft_wrap=True, highlight=False)


def _coverage_cells(cov: dict[str, Any]) -> tuple[str, str]:
    if cov["kind"] in ("enum", "bool"):
        seen = ", ".join(str(v).lower() for v in cov["seen"]) or "-"
        not_seen = ", ".join(str(v).lower() for v in cov["not_seen"]) or "-"
        return seen, not_seen
    if cov["min_seen"] is None:
        return "-", f"{cov['ge']:,} .. {cov['le']:,}"
    seen = f"{cov['min_seen']:,} .. {cov['max_seen']:,}"
    missing = [
        f"{label} {cov[bound]:,}"
        for label, bound, flag in (("min", "ge", "ge_seen"), ("max", "le", "le_seen"))
        if not cov[flag]
    ]
    return seen, ", ".join(missing) or "-"
