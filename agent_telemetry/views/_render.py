"""models -> view description -> jinja2 template -> sqlglot parse, qualify, format.

The rendered text is never trusted as is: sqlglot parses it in the BigQuery dialect,
qualifies every column against the sink schema derived from the models (an unknown
column or payload key is a build error) and prints it, so the committed SQL is a pure
function of the models and the deployment file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

import jinja2
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify

from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.errors import AgentTelemetryError
from agent_telemetry.schema import EventSpec
from agent_telemetry.schema.envelope import NOT_A_FIELD
from agent_telemetry.views._describe import (
    ENVELOPE_COLUMNS,
    QUALITY_COLUMNS,
    QUALITY_DESCRIPTION,
    QUALITY_VIEW,
    EventViewPlan,
    SourcePlan,
    source_plan,
    view_plans,
)
from agent_telemetry.views._reading import JSON_NUMBER, on_grid_sql
from agent_telemetry.views._sink import (
    ENVELOPE_KEYS,
    SHARD_COLUMN,
    SHARD_DESCRIPTION,
    event_payload_keys,
    payload_fields,
    payload_types,
    qualify_schema,
)
from agent_telemetry.views._sql_error import sql_error_text
from agent_telemetry.views.table_field import TableField

DIALECT = "bigquery"
MANAGED_BY = "agent-telemetry"


class ViewBuildError(AgentTelemetryError):
    """Generated SQL failed to parse or qualify: a bug in a template or the models."""


@dataclass(frozen=True, slots=True)
class ColumnDoc:
    """One view column: name, GoogleSQL type, description (and allowed values, if any)."""

    name: str
    type: str
    description: str
    domain: str = ""

    def schema_field(self) -> TableField:
        """The column as a field of the view's BigQuery schema."""
        return TableField.from_googlesql(self.name, self.type, self.description)


@dataclass(frozen=True, slots=True)
class ViewDefinition:
    """One generated view, ready to review (``ddl``) or to create (``query`` + metadata)."""

    name: str
    layout: Layout
    project: str
    dataset: str
    query: str
    ddl: str
    description: str
    columns: tuple[ColumnDoc, ...]
    labels: dict[str, str] = field(hash=False)
    sql_sha256: str
    schema_version: int
    event: str | None
    # Views of the target dataset this view reads (lane_health reads the event views);
    # empty for a view of the sink. Created after them, and dry-run with them inlined.
    reads: tuple[str, ...] = ()

    @property
    def table_id(self) -> str:
        """``project.dataset.name`` of the view."""
        return f"{self.project}.{self.dataset}.{self.name}"


def sql_literal(value: object) -> str:
    """A BigQuery string literal for ``value``, escaped by sqlglot (never by hand)."""
    return _string_literal(str(value))


@lru_cache(maxsize=4096)
def _string_literal(text: str) -> str:
    # The templates quote the same members, names and descriptions in every layout.
    return exp.Literal.string(text).sql(DIALECT)


def table_ref(project: str, dataset: str, table: str) -> str:
    """A table path in one pair of backticks, the form BigQuery documents for wildcards.

    The parts are validated identifiers (no backtick, dot or quote can reach here); a
    domain-scoped project (``example.com:proj``) contains a dot, so its parts are quoted
    one by one instead.
    """
    if ":" in project:
        return exp.Table(
            this=exp.to_identifier(table, quoted=True),
            db=exp.to_identifier(dataset, quoted=True),
            catalog=exp.to_identifier(project, quoted=True),
        ).sql(DIALECT)
    return f"`{project}.{dataset}.{table}`"


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("agent_telemetry.views", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # SQL, not HTML; literals go through the `lit` filter
        keep_trailing_newline=True,
    )
    env.filters["lit"] = sql_literal
    env.filters["on_grid"] = on_grid_sql
    return env


def render(template: str, **context: Any) -> str:
    # The exact number text the JSON layout's reads accept: the judgement's own pattern.
    return _environment().get_template(template).render(json_number=f"^{JSON_NUMBER}$", **context)


def _check_payload_keys(
    tree: exp.Expr, source: SourcePlan, what: str, specs: tuple[EventSpec, ...] | None
) -> None:
    """Every read of the sink's payload names one key of the payload record.

    sqlglot qualifies top-level columns against the schema but not the keys inside a
    STRUCT or JSON value, so those are checked here. Only the forms the templates write
    are accepted (``payload.key``, and in the JSON layout ``JSON_VALUE`` and its array
    forms with a ``'$.key'`` path): any other read (``payload['key']``, ``JSON_QUERY``,
    the whole payload) could reach a key no model defines, so it is refused.
    """
    known = payload_types(specs)
    payload = source.payload.lower()
    for column in tree.find_all(exp.Column):
        if column.name.lower() != payload:
            continue
        parent = column.parent
        if isinstance(parent, exp.Dot) and parent.this is column:
            if parent.name.lower() not in known:
                raise ViewBuildError(
                    f"{what}: unknown payload column {source.payload}.{parent.name}"
                )
        elif isinstance(parent, JSON_KEY_READS) and parent.this is column:
            key = json_path_key(parent.expression)
            if key is None or key not in known:
                raise ViewBuildError(f"{what}: unsupported JSON path into {source.payload}")
        else:
            raise ViewBuildError(f"{what}: reads {source.payload} other than by one known key")


def _check_tables(tree: exp.Expr, source: SourcePlan, what: str) -> None:
    """The only table a view reads is the sink (CTEs aside): no schema, no checked columns."""
    found = list(tree.find_all(exp.CTE, exp.Table))  # one walk of the (long) query
    ctes = {node.alias_or_name for node in found if isinstance(node, exp.CTE)}
    for table in (node for node in found if isinstance(node, exp.Table)):
        if not table.db and table.name in ctes:
            continue
        if (table.catalog, table.db, table.name) != (source.project, source.dataset, source.table):
            raise ViewBuildError(f"{what}: reads a table other than the configured sink")


# The JSON functions the templates read a payload key with (JSON_VALUE and its array
# forms); the build and the binding proof both read keys through these alone.
JSON_KEY_READS = (exp.JSONExtractScalar, exp.JSONExtractArray, exp.JSONValueArray)


def json_path_key(path: exp.Expr | None) -> str | None:
    """The single key of a ``'$.key'`` JSON path, or None for any other path."""
    if not isinstance(path, exp.JSONPath):
        return None
    parts = path.expressions
    if len(parts) == 2 and isinstance(parts[0], exp.JSONPathRoot):
        key = parts[1]
        if isinstance(key, exp.JSONPathKey) and isinstance(key.this, str):
            return key.this
    return None


def compile_query(
    sql: str, source: SourcePlan, what: str, specs: tuple[EventSpec, ...] | None = None
) -> str:
    """Parse, qualify against the sink schema of ``specs``, check payload keys, and format."""
    schema = qualify_schema(source.layout, source.project, source.dataset, source.table, specs)
    try:
        tree = sqlglot.parse_one(sql, dialect=DIALECT)
        qualified = qualify(
            tree,
            schema=schema,
            dialect=DIALECT,
            validate_qualify_columns=True,
            identify=False,
        )
    except (ParseError, OptimizeError) as exc:
        raise ViewBuildError(f"{what}: {sql_error_text(exc)}") from exc
    _check_tables(qualified, source, what)
    _check_payload_keys(qualified, source, what, specs)
    # Qualifying lowercases identifiers (BigQuery column names are case-insensitive);
    # give the sink's columns back the spelling readers know from the sink table.
    spelled = {name.lower(): name for name in (source.payload, source.insert_id)}
    for identifier in qualified.find_all(exp.Identifier):
        if identifier.this in spelled:
            identifier.set("this", spelled[identifier.this])
    # copy=False: the tree is not used again, so the generator need not copy it first.
    return qualified.sql(dialect=DIALECT, pretty=True, copy=False) + "\n"


def view_labels(layout: Layout, schema_version: int, kind: str) -> dict[str, str]:
    return {
        "managed-by": MANAGED_BY,
        "schema-version": str(schema_version),
        "layout": layout,
        "view-kind": kind,
    }


_STAND_IN = "SELECT 1"


@cache
def _printed_stand_in() -> str:
    return sqlglot.parse_one(_STAND_IN, dialect=DIALECT).sql(dialect=DIALECT, pretty=True)


def finish_view(
    *,
    name: str,
    config: DeploymentConfig,
    source: SourcePlan,
    query: str,
    description: str,
    columns: tuple[ColumnDoc, ...],
    labels: dict[str, str],
    schema_version: int,
    event: str | None,
    reads: tuple[str, ...] = (),
) -> ViewDefinition:
    target = config.target
    # The header (column list, OPTIONS) is printed by sqlglot around a stand-in query, and
    # the query, already printed by compile_query, takes the stand-in's place: the DDL
    # ends with exactly the text ``sql_sha256`` hashes, and the (long) query is not parsed
    # and printed a second time. The tests check the DDL is sqlglot's own fixed point.
    header = render(
        "view_ddl.sql.j2",
        target_ref=table_ref(target.project, target.dataset, name),
        columns=columns,
        description=description,
        labels=labels,
        query=_STAND_IN,
    )
    try:
        printed = sqlglot.parse_one(header, dialect=DIALECT).sql(
            dialect=DIALECT, pretty=True, copy=False
        )
    except ParseError as exc:
        raise ViewBuildError(f"{name}: DDL does not parse: {sql_error_text(exc)}") from exc
    stand_in = _printed_stand_in()
    if not printed.endswith("\n" + stand_in):
        raise ViewBuildError(f"{name}: the DDL does not end with its query")
    ddl = printed[: -len(stand_in)] + query
    return ViewDefinition(
        name=name,
        layout=source.layout,
        project=target.project,
        dataset=target.dataset,
        query=query,
        ddl=ddl,
        description=description,
        columns=columns,
        labels=labels,
        sql_sha256=hashlib.sha256(query.encode()).hexdigest(),
        schema_version=schema_version,
        event=event,
        reads=reads,
    )


def _event_columns(plan: EventViewPlan, layout: Layout) -> tuple[ColumnDoc, ...]:
    envelope = {c.name: c for c in ENVELOPE_COLUMNS}
    head = [ColumnDoc(c.name, c.sql_type, c.description) for c in ENVELOPE_COLUMNS[:2]]
    if layout == "sharded":
        head.insert(1, ColumnDoc(SHARD_COLUMN, "STRING", SHARD_DESCRIPTION))
    body = [ColumnDoc(c.name, c.sql_type, c.description, c.domain) for c in plan.fields]
    tail = envelope["invalid_fields"]
    return (*head, *body, ColumnDoc(tail.name, tail.sql_type, tail.description))


@dataclass(frozen=True, slots=True)
class OrderKey:
    """One payload column of the order the copies of an entry are ranked by."""

    name: str
    repeated: bool  # ranked by its JSON text
    read_as: str  # how the JSON layout reads it: FLOAT64, BOOL or STRING
    integer: bool  # read as the views read an integer: integral, |v| <= 2^53 - 1


_READ_AS = {"INTEGER": "FLOAT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}


@dataclass(frozen=True, slots=True)
class CopyOrder:
    """The order the copies of one log entry are ranked by, NULL first: the envelope's
    payload keys (``event`` first), then the copy's event's own keys. ``events`` holds
    each event's own keys; a view ranks by its event's, telemetry_quality by every
    event's, each read only for copies of that event (docs/design.md, "One row per log
    entry")."""

    envelope: tuple[OrderKey, ...]
    events: tuple[tuple[str, tuple[OrderKey, ...]], ...]

    def own(self, event: str) -> tuple[OrderKey, ...]:
        return dict(self.events)[event]


def copy_order(specs: tuple[EventSpec, ...] | None = None) -> CopyOrder:
    """How the views of ``specs``' catalogue (default: the package's) rank copies."""
    keys = {
        f.name: OrderKey(
            f.name, f.mode == "REPEATED", _READ_AS.get(f.type, "STRING"), f.type == "INTEGER"
        )
        for f in payload_fields(specs)
    }
    return CopyOrder(
        envelope=tuple(keys[name] for name in ENVELOPE_KEYS),
        events=tuple(
            (event, tuple(keys[name] for name in names))
            for event, names in event_payload_keys(specs).items()
        ),
    )


def event_view(
    config: DeploymentConfig, layout: Layout, plan: EventViewPlan, specs: tuple[EventSpec, ...]
) -> ViewDefinition:
    source = source_plan(config, layout)
    sql = render(
        "event_view.sql.j2",
        source=source,
        view=plan,
        table_ref=table_ref(source.project, source.dataset, source.table),
        copy_order=copy_order(specs),
        shard_column=SHARD_COLUMN,
    )
    return finish_view(
        name=plan.view_name,
        config=config,
        source=source,
        query=compile_query(sql, source, plan.view_name, specs),
        description=plan.description,
        columns=_event_columns(plan, layout),
        labels=view_labels(layout, plan.schema_version, "event"),
        schema_version=plan.schema_version,
        event=plan.name,
    )


def quality_view(
    config: DeploymentConfig, layout: Layout, specs: tuple[EventSpec, ...]
) -> ViewDefinition:
    """``telemetry_quality`` over every version in ``specs``, one row group per version."""
    source = source_plan(config, layout)
    plans = view_plans(specs)
    sql = render(
        "telemetry_quality.sql.j2",
        source=source,
        views=plans,
        table_ref=table_ref(source.project, source.dataset, source.table),
        not_a_field=NOT_A_FIELD,
        copy_order=copy_order(specs),
        # every field key once, as the views read it (one sink column per key, one type)
        field_reads=tuple({f.name: f.read_as for p in plans for f in p.fields}.items()),
    )
    version = max(p.schema_version for p in plans)
    return finish_view(
        name=QUALITY_VIEW,
        config=config,
        source=source,
        query=compile_query(sql, source, QUALITY_VIEW, specs),
        description=QUALITY_DESCRIPTION,
        columns=tuple(ColumnDoc(c.name, c.sql_type, c.description) for c in QUALITY_COLUMNS),
        labels=view_labels(layout, version, "quality"),
        schema_version=version,
        event=None,
    )
