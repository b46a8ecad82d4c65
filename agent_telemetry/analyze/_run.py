"""An analyst's query answered by GoogleSQL's reference implementation on a local sample
(``views analyze --run``): BigQuery's answer before paying for it, on a few rows.

The sample is the first rows (by timestamp) of the sink table a ``preview --db`` database
holds: entries already judged as ``preview`` judges them, in the partitioned sink's shape
(the layout the local warehouse mirrors). Each generated view is evaluated on the sample
in GoogleSQL, then the query on those views' rows: no DuckDB SQL is involved in the
answer. The reference implementation is slow (about a second per view, then milliseconds
per row): this is for small samples, never a whole table.
"""

from __future__ import annotations

from pathlib import Path

from agent_telemetry.analyze._catalog import Specs, source_columns, source_path
from agent_telemetry.analyze._errors import AnalyzerRejected
from agent_telemetry.analyze._evaluate import QueryResult, TableRows, evaluate
from agent_telemetry.analyze._limits import RUN_LAYOUT
from agent_telemetry.analyze._runtime import Runtime
from agent_telemetry.config import DeploymentConfig
from agent_telemetry.views import generate_views


def sample_rows(database: Path, table: str, limit: int, specs: Specs = None) -> TableRows:
    """At most ``limit`` rows of ``table`` in the DuckDB ``database`` (earliest first),
    typed as the partitioned sink; a column the local table lacks reads as NULL."""
    import duckdb

    if not database.is_file():
        raise AnalyzerRejected(f"{database}: no such database (write one with `preview --db`)")
    columns = source_columns(RUN_LAYOUT, specs)
    try:
        with duckdb.connect(str(database), read_only=True) as con:
            relation = con.sql(f'SELECT * FROM "{table}" ORDER BY "timestamp" LIMIT {int(limit)}')
            present = list(relation.columns)
            found = relation.fetchall()
    except duckdb.Error as exc:
        raise AnalyzerRejected(
            f"{database}: cannot read the sink table {table} ({type(exc).__name__}); "
            "write the database with `agent-telemetry preview LOGS --db FILE`"
        ) from None
    where = {name: present.index(name) for name, _ in columns if name in present}
    rows = [[row[where[name]] if name in where else None for name, _ in columns] for row in found]
    return TableRows(columns, rows)


def view_tables(
    config: DeploymentConfig, sample: TableRows, service: Runtime, specs: Specs = None
) -> dict[str, TableRows]:
    """Every generated view's rows on the sample, as GoogleSQL computes them, by the
    names a query may write (``project.dataset.view`` and ``dataset.view``)."""
    tables = {".".join(source_path(config, RUN_LAYOUT)): sample}
    views: dict[str, TableRows] = {}
    ids: dict[str, str] = {}
    for view in generate_views(config, RUN_LAYOUT, specs):  # a view comes after those it reads
        read = {ids[name]: views[ids[name]] for name in sorted(view.reads)}
        answer = evaluate(view.query, {**tables, **read}, service)
        typed = list(zip((c.name for c in answer.columns), answer.column_types, strict=True))
        result = TableRows(typed, answer.rows)
        views[view.table_id] = result
        ids[view.name] = view.table_id
        views[f"{view.dataset}.{view.name}"] = result
    return views


def run_query(
    config: DeploymentConfig, sql: str, sample: TableRows, service: Runtime, specs: Specs = None
) -> QueryResult:
    """``sql`` (one query) over the views' rows on the sample, in GoogleSQL."""
    return evaluate(_one_statement(sql), view_tables(config, sample, service, specs), service)


def _one_statement(sql: str) -> str:
    text = sql.strip().rstrip(";").rstrip()
    if not text:
        raise AnalyzerRejected("no query to run")
    return text
