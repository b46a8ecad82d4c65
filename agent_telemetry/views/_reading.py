"""How a value written as text is read as a number: shared by the JSON layout's views and
the one judgement (``warehouse/_judging/python.py``), so both accept exactly the same strings; and
the precision grid's SQL every SQL judge shares."""

from __future__ import annotations

from agent_telemetry.schema.grid import Band

# A JSON number's exact text (RFC 8259): no spaces, '+', hex, separators or leading zeros,
# all of which BigQuery's SAFE_CAST would read. Group 1: fraction; group 2: exponent.
JSON_NUMBER = r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"


def on_grid_sql(value: str, grid: tuple[Band, ...]) -> str:
    """SQL (GoogleSQL and DuckDB alike) appended to an integer's bounds check: `` AND``
    the value lies on its precision's grid (``FieldSpec.grid``); nothing without one.

    The value may be a FLOAT64 (the views read numbers so): for an integral value below
    2**53, ``value / step`` is an exact integer exactly when ``step`` divides it."""
    if not grid:
        return ""
    bands = []
    for band in grid:
        inside = f"{value} BETWEEN {band.low} AND {band.high}"
        if band.step > 1:
            inside += f" AND {value} = TRUNC({value} / {band.step}) * {band.step}"
        bands.append(f"({inside})")
    return f" AND ({' OR '.join(bands)})"
