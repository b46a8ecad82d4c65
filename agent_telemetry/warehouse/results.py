"""A query's result as plain data, and its four printed forms: table (one field per line
when the rows do not fit the terminal), csv, json, markdown.

Every value comes from a log file or the user's SQL, so none is trusted: the table cells
are rich ``Text`` (never markup), csv and json are written by the standard library, and
markdown escapes the characters that would end a cell or open HTML.
"""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from agent_telemetry._text import clean, clean_json

if TYPE_CHECKING:
    from rich.console import Console

ResultFormat = Literal["table", "csv", "json", "markdown"]
FORMATS: tuple[ResultFormat, ...] = ("table", "csv", "json", "markdown")
NULL = "NULL"


@dataclass(frozen=True, slots=True)
class Result:
    """Column names and rows, in the order the query gave them."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def _visible(text: str) -> str:
    """``text`` through the package's one door for outside text (``_text.clean``): a value
    from a log cannot move the cursor, clear the screen, reorder what follows it or run a
    CI workflow command."""
    return clean(text)


def plain(value: Any) -> str:
    """One value as text: NULL, ISO times, numbers as DuckDB prints them."""
    if value is None:
        return NULL
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return _visible(str(value))


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float | Decimal):
        return float(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return str(value)


def to_json(result: Result) -> str:
    """One JSON array of objects, a key per column (a repeated name keeps its last value)."""
    records = [
        {column: _json_value(value) for column, value in zip(result.columns, row, strict=True)}
        for row in result.rows
    ]
    return json.dumps(clean_json(records), indent=2, ensure_ascii=False) + "\n"


def to_csv(result: Result) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_visible(column) for column in result.columns)
    for row in result.rows:
        writer.writerow("" if v is None else plain(v) for v in row)
    return out.getvalue()


def _markdown_cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "\\`")


def to_markdown(result: Result) -> str:
    numeric = [
        all(isinstance(row[i], int | float | Decimal | None) for row in result.rows) and result.rows
        for i in range(len(result.columns))
    ]
    lines = [
        "| " + " | ".join(_markdown_cell(_visible(c)) for c in result.columns) + " |",
        "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
    ]
    lines += [
        "| " + " | ".join(_markdown_cell(plain(v)) for v in row) + " |" for row in result.rows
    ]
    return "\n".join(lines) + "\n"


# A column folded narrower than this (or than its widest value, when shorter) reads as
# strips of characters, not values: then each row is shown one field per line instead.
FOLD_AT_LEAST = 12


def fits(result: Result, width: int) -> bool:
    """Whether the table fits ``width`` columns with every column at least
    ``FOLD_AT_LEAST`` wide (or as wide as its widest value, when narrower)."""
    needed = 3 * len(result.columns) + 1  # rich's borders and padding
    for index, column in enumerate(result.columns):
        widest = max((len(plain(row[index])) for row in result.rows), default=0)
        needed += min(max(widest, len(_visible(column))), FOLD_AT_LEAST)
    return needed <= width


def print_table(result: Result, console: Console, *, title: str | None = None) -> None:
    """A rich table that folds long values and names instead of cutting them; rows too
    wide for the terminal are shown one field per line (as psql's ``\\x``)."""
    from rich.table import Table
    from rich.text import Text

    if not fits(result, console.width):
        _print_records(result, console, title)
        return
    table = Table(title=None if title is None else Text(title), title_justify="left")
    for index, column in enumerate(result.columns):
        numeric = bool(result.rows) and all(
            isinstance(row[index], int | float | Decimal | None) for row in result.rows
        )
        table.add_column(
            Text(_visible(column)), overflow="fold", justify="right" if numeric else "left"
        )
    for row in result.rows:
        table.add_row(*(Text(NULL, style="dim") if v is None else Text(plain(v)) for v in row))
    console.print(table)
    _print_count(result, console)


def _print_records(result: Result, console: Console, title: str | None) -> None:
    """Each row as ``-[ row N ]---`` then ``name | value``, one field per line; a long
    value folds under its own column, never into the names'."""
    from rich.table import Table
    from rich.text import Text

    if title is not None:
        console.print(Text(title))
    names = [_visible(column) for column in result.columns]
    width = max((len(name) for name in names), default=0)
    for number, row in enumerate(result.rows, start=1):
        console.print(Text(f"-[ row {number} ]".ljust(min(console.width, width + 20), "-")))
        fields = Table.grid(padding=(0, 1))
        fields.add_column(no_wrap=True, width=width)
        fields.add_column(no_wrap=True, width=1)
        fields.add_column(overflow="fold")
        for name, value in zip(names, row, strict=True):
            shown = Text(NULL, style="dim") if value is None else Text(plain(value))
            fields.add_row(Text(name), "|", shown)
        console.print(fields)
    _print_count(result, console)


def _print_count(result: Result, console: Console) -> None:
    from rich.text import Text

    rows = len(result.rows)
    console.print(Text(f"{rows:,} row{'' if rows == 1 else 's'}", style="dim"))
