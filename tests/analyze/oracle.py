"""The oracle: every generated view, evaluated by GoogleSQL's reference implementation
(``agent_telemetry.analyze._evaluate``) on sink rows of each layout, against the same
log entries loaded by ``preview``'s warehouse into DuckDB.

An entry is a Log Analytics ``_AllLogs`` row: its payload as JSON text (any JSON the
corpus writes), timestamp and insert id. The same entries become:

- DuckDB: one JSON-lines file of ``_AllLogs`` rows, loaded by ``Warehouse.load`` (the
  one judgement, ``warehouse/_judging/python.py``), the views as ``preview`` creates them;
- ``analytics``: ``_AllLogs`` rows, ``json_payload`` the payload's JSON as written;
- ``partitioned`` and ``sharded``: sink rows whose ``jsonPayload`` is typed as the sink
  schema allows: a value already of the column's type is kept as it is (an INT64 column
  holds any 64-bit integer, a STRING column any string), any other value as the judgement
  reads it, else NULL; ``sharded`` adds ``_TABLE_SUFFIX``, the entry's UTC day.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from agent_telemetry.analyze._catalog import TABLE_SUFFIX, source_columns, source_path, type_proto
from agent_telemetry.analyze._evaluate import QueryResult, TableRows, evaluate
from agent_telemetry.analyze._runtime import Runtime
from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.views import ViewDefinition, generate_views
from agent_telemetry.views._sink import SHARD_COLUMN
from agent_telemetry.warehouse import Warehouse
from agent_telemetry.warehouse._judging.python import INVALID, PAYLOAD_KINDS, READERS

LOG_ID = "run.googleapis.com/stdout"
_INT64 = (-(2**63), 2**63 - 1)
_NATIVE = {"int": int, "string": str, "bool": bool}


@dataclass(frozen=True)
class Entry:
    """One log entry: the payload's JSON text exactly as written, when, its insert id."""

    payload: str
    when: datetime
    insert_id: str | None

    @staticmethod
    def of(payload: dict[str, Any], when: datetime, insert_id: str | None) -> Entry:
        return Entry(json.dumps(payload, allow_nan=False), when, insert_id)

    def all_logs_row(self) -> dict[str, Any]:
        """As ``bq query`` writes an ``_AllLogs`` row (``json_payload`` as JSON text)."""
        return {
            "timestamp": self.when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"),
            "log_id": LOG_ID,
            "insert_id": self.insert_id,
            "severity": "INFO",
            "json_payload": self.payload,
        }


def _typed(value: object, kind: str) -> object:
    """A payload value as a typed sink column holds it."""
    if value is None:
        return None
    if kind == "strings":
        read = READERS["strings"](value)[0]
        return None if read is INVALID else read
    native = _NATIVE[kind]
    if type(value) is native and (native is not int or _INT64[0] <= value <= _INT64[1]):  # type: ignore[operator]
        return value
    read = READERS[kind](value)[0]
    if read is INVALID or (kind == "int" and not _INT64[0] <= read <= _INT64[1]):
        return None
    return read


def _sink_row(entry: Entry, layout: Layout) -> dict[str, Any]:
    if layout == "analytics":
        return {
            "timestamp": entry.when,
            "log_id": LOG_ID,
            "severity": "INFO",
            "insert_id": entry.insert_id,
            "json_payload": entry.payload,
        }
    payload = json.loads(entry.payload)
    typed = {key: _typed(payload.get(key), kind) for key, kind in PAYLOAD_KINDS.items()}
    row: dict[str, Any] = {
        "timestamp": entry.when,
        "severity": "INFO",
        "insertId": entry.insert_id,
        "jsonPayload": typed,
    }
    if layout == "sharded":
        row[TABLE_SUFFIX] = entry.when.astimezone(UTC).strftime("%Y%m%d")
    return row


def sink_table(entries: Sequence[Entry], layout: Layout) -> TableRows:
    """The entries as rows of ``layout``'s sink table, typed from the models."""
    columns = source_columns(layout)
    pseudo = [(TABLE_SUFFIX, type_proto("STRING"))] if layout == "sharded" else []
    names = [name for name, _ in (*columns, *pseudo)]
    rows = []
    for entry in entries:
        row = _sink_row(entry, layout)
        rows.append([row.get(name) for name in names])
    return TableRows(columns, rows, pseudo)


def source_name(config: DeploymentConfig, layout: Layout) -> str:
    """The sink table's name as the generated SQL writes it (one quoted path)."""
    return ".".join(source_path(config, layout))


def googlesql(
    service: Runtime, config: DeploymentConfig, layout: Layout, entries: Sequence[Entry]
) -> dict[str, QueryResult]:
    """Every generated view of ``layout``, evaluated on the entries; a view of views
    (``lane_health``) on the rows GoogleSQL gave the views it reads (they come first)."""
    sink = {source_name(config, layout): sink_table(entries, layout)}
    views = {view.name: view for view in layout_views(config, layout)}
    answers: dict[str, QueryResult] = {}
    for view in views.values():
        read = {views[name].table_id: as_table(answers[name]) for name in sorted(view.reads)}
        answers[view.name] = evaluate(view.query, {**sink, **read}, service)
    return {name: _without_shard(answer) for name, answer in answers.items()}


def _without_shard(answer: QueryResult) -> QueryResult:
    """A sharded view's answer without its shard column (a local sink has no shards),
    once every row's shard is shown to be its entry's UTC day, as a sink writes it."""
    names = [c.name for c in answer.columns]
    if SHARD_COLUMN not in names:
        return answer
    at, when = names.index(SHARD_COLUMN), names.index("timestamp")
    for row in answer.rows:
        stamp = row[when]
        day = stamp.astimezone(UTC).strftime("%Y%m%d") if isinstance(stamp, datetime) else None
        assert row[at] == day, (row[at], stamp)
    keep = [i for i in range(len(names)) if i != at]
    return QueryResult(
        tuple(answer.columns[i] for i in keep),
        [tuple(row[i] for i in keep) for row in answer.rows],
        tuple(answer.column_types[i] for i in keep) if answer.column_types else (),
    )


def as_table(answer: QueryResult) -> TableRows:
    """A view's answer as a table another query reads."""
    columns = list(zip((c.name for c in answer.columns), answer.column_types, strict=True))
    return TableRows(columns, answer.rows)


_VIEWS: dict[tuple[DeploymentConfig, Layout], tuple[ViewDefinition, ...]] = {}


def layout_views(config: DeploymentConfig, layout: Layout) -> tuple[ViewDefinition, ...]:
    if (config, layout) not in _VIEWS:
        _VIEWS[(config, layout)] = generate_views(config, layout)
    return _VIEWS[(config, layout)]


@dataclass(frozen=True)
class Local:
    """The views' rows in DuckDB, by view name: (column names, DuckDB types, rows)."""

    views: dict[str, tuple[list[str], list[str], list[tuple[object, ...]]]]


def duckdb(config: DeploymentConfig, entries: Iterable[Entry], folder: Path) -> Local:
    """The entries loaded by the warehouse (preview's loader), every view queried."""
    path = folder / "entries.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for entry in entries:
            out.write(json.dumps(entry.all_logs_row()) + "\n")
    found = {}
    with Warehouse(config=config) as wh:
        wh.load([path])
        names = wh.create_views()
        for name in names:
            relation = wh.sql(f'SELECT * FROM "{name}"')
            found[name] = (
                list(relation.columns),
                [str(t) for t in relation.types],
                relation.fetchall(),
            )
    return Local(found)


# GoogleSQL type -> the DuckDB type the transpiled view must have.
_TYPES = {
    "INT64": "BIGINT",
    "STRING": "VARCHAR",
    "FLOAT64": "DOUBLE",
    "BOOL": "BOOLEAN",
    "TIMESTAMP": "TIMESTAMP WITH TIME ZONE",
    "DATE": "DATE",
    "ARRAY<STRING>": "VARCHAR[]",
}


def _exact(value: object) -> object:
    """A value with its Python type, so 1 != 1.0 != True and NULL stays None."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return ("naive-datetime", value.isoformat())
        return ("timestamp", value.astimezone(UTC).isoformat())
    if isinstance(value, list):
        return ("array", tuple(_exact(item) for item in value))
    if isinstance(value, date):
        return ("date", value.isoformat())
    return (type(value).__name__, value)


def _sorted(rows: Iterable[Sequence[object]]) -> list[tuple[object, ...]]:
    exact = [tuple(_exact(v) for v in row) for row in rows]
    return sorted(exact, key=repr)


def differences(name: str, google: QueryResult, local: Local) -> list[str]:
    """What differs between the two engines' answers for view ``name`` (empty: equal)."""
    columns, kinds, rows = local.views[name]
    problems = []
    want = [(c.name, c.type) for c in google.columns]
    if [c for c, _ in want] != columns:
        problems.append(f"{name}: columns {columns} in DuckDB, {[c for c, _ in want]} in GoogleSQL")
    for (column, google_type), duck_type in zip(want, kinds, strict=False):
        if _TYPES.get(google_type) != duck_type:
            problems.append(f"{name}.{column}: {google_type} in GoogleSQL, {duck_type} in DuckDB")
    ours, theirs = _sorted(rows), _sorted(google.rows)
    if ours != theirs:
        only_duck = [r for r in ours if r not in theirs]
        only_google = [r for r in theirs if r not in ours]
        problems.append(
            f"{name}: {len(ours)} rows in DuckDB, {len(theirs)} in GoogleSQL; "
            f"only in DuckDB {only_duck[:5]}, only in GoogleSQL {only_google[:5]}"
        )
    return problems
