"""GoogleSQL's reference implementation: a query evaluated on rows given with it.

ZetaSQL's local service answers ``EvaluateQuery``: the query, a catalog of tables and
each table's rows travel in one request; the reference implementation (the evaluator
GoogleSQL's compliance tests are checked against) computes the result. It is slow
(milliseconds per row) and meant for small samples: the oracle test (tests/analyze)
and ``views analyze --run``.

Tables sit at the catalog's root under the name the query writes (a path quoted whole,
`` `p.d.t` ``, is one name): the service fills only root tables with rows. Values cross
as ZetaSQL ``ValueProto``: Python ``int``, ``float``, ``str``, ``bool``, ``bytes``,
``datetime`` (a naive one is UTC), ``date``, ``list`` (ARRAY), ``dict`` or sequence
(STRUCT, by field), JSON as its text, and ``None`` (NULL) in; the same kinds out
(TIMESTAMP as an aware UTC ``datetime``, NUMERIC as ``Decimal``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from agent_telemetry.analyze._analyzer import OutputColumn, settings
from agent_telemetry.analyze._catalog import TypeProto, type_text
from agent_telemetry.analyze._errors import AnalyzerRejected
from agent_telemetry.analyze._runtime import (
    AnalyzerServerError,
    NoResponse,
    Runtime,
    local_service,
    runtime,
    simple_catalog,
    simple_table,
    types,
    values,
)

_KIND = types.TypeKind
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY = date(1970, 1, 1)
# NUMERIC and BIGNUMERIC cross as little-endian two's complement integers of this scale.
_SCALES = {_KIND.TYPE_NUMERIC: 9, _KIND.TYPE_BIGNUMERIC: 38}


@dataclass(frozen=True, slots=True)
class TableRows:
    """A table for one evaluation: its columns (then pseudo-columns, such as a wildcard
    table's ``_TABLE_SUFFIX``) and its rows, one value per column and pseudo-column."""

    columns: Sequence[tuple[str, TypeProto]]
    rows: Sequence[Sequence[object]]
    pseudo: Sequence[tuple[str, TypeProto]] = ()


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The output columns (name and GoogleSQL type) and rows, in the engine's order."""

    columns: tuple[OutputColumn, ...]
    rows: list[tuple[object, ...]]
    column_types: tuple[TypeProto, ...] = ()


def to_value(value: object, kind: TypeProto) -> Any:
    """``value`` as a ``ValueProto`` of type ``kind`` (``None``: NULL)."""
    proto = values.ValueProto()
    if value is None:
        return proto
    code = kind.type_kind
    if code == _KIND.TYPE_ARRAY:
        if not isinstance(value, Sequence) or isinstance(value, str | bytes):
            raise AnalyzerRejected(f"an ARRAY value must be a list, not {type(value).__name__}")
        element = kind.array_type.element_type
        proto.array_value.element.extend(to_value(item, element) for item in value)
        return proto
    if code == _KIND.TYPE_STRUCT:
        fields = list(kind.struct_type.field)
        items = (
            [value.get(f.field_name) for f in fields] if isinstance(value, Mapping) else list(value)  # type: ignore[call-overload]
        )
        proto.struct_value.field.extend(
            to_value(item, f.field_type) for item, f in zip(items, fields, strict=True)
        )
        return proto
    if code == _KIND.TYPE_TIMESTAMP:
        assert isinstance(value, datetime)
        when = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        micros = (when - _EPOCH) // timedelta(microseconds=1)
        proto.timestamp_value.seconds, rest = divmod(micros, 1_000_000)
        proto.timestamp_value.nanos = rest * 1000
        return proto
    if code == _KIND.TYPE_DATE:
        assert isinstance(value, date)
        proto.date_value = (value - _EPOCH_DAY).days
        return proto
    field = _SCALAR_FIELDS.get(code)
    if field is None:
        raise AnalyzerRejected(f"rows of type {type_text(kind)} are not supported here")
    setattr(proto, field, float(value) if field == "double_value" else value)  # type: ignore[arg-type]
    return proto


_SCALAR_FIELDS = {
    _KIND.TYPE_INT64: "int64_value",
    _KIND.TYPE_DOUBLE: "double_value",
    _KIND.TYPE_STRING: "string_value",
    _KIND.TYPE_BOOL: "bool_value",
    _KIND.TYPE_BYTES: "bytes_value",
    _KIND.TYPE_JSON: "json_value",
}


def from_value(proto: Any, kind: TypeProto) -> object:
    """A ``ValueProto`` of type ``kind`` as a Python value (NULL: ``None``)."""
    which = proto.WhichOneof("value")
    if which is None:
        return None
    code = kind.type_kind
    if code == _KIND.TYPE_ARRAY:
        element = kind.array_type.element_type
        return [from_value(item, element) for item in proto.array_value.element]
    if code == _KIND.TYPE_STRUCT:
        fields = kind.struct_type.field
        return {
            f.field_name: from_value(item, f.field_type)
            for f, item in zip(fields, proto.struct_value.field, strict=True)
        }
    if which == "timestamp_value":
        stamp = proto.timestamp_value
        return _EPOCH + timedelta(seconds=stamp.seconds, microseconds=stamp.nanos // 1000)
    if which == "date_value":
        return _EPOCH_DAY + timedelta(days=proto.date_value)
    if code in _SCALES:
        raw = getattr(proto, which)
        return Decimal(int.from_bytes(raw, "little", signed=True)).scaleb(-_SCALES[code])
    return getattr(proto, which)


def _table(name: str, table: TableRows) -> Any:
    proto = simple_table.SimpleTableProto(name=name)
    for column_name, column_type in table.columns:
        proto.column.add(name=column_name, type=column_type)
    for column_name, column_type in table.pseudo:
        proto.column.add(name=column_name, type=column_type, is_pseudo_column=True)
    return proto


def _content(table: TableRows) -> Any:
    kinds = [kind for _, kind in (*table.columns, *table.pseudo)]
    content = local_service.TableContent()
    content.table_data.SetInParent()  # an empty table is a table with no rows, not unset
    for row in table.rows:
        cells = content.table_data.row.add().cell
        cells.extend(to_value(value, kind) for value, kind in zip(row, kinds, strict=True))
    return content


def evaluate(
    sql: str, tables: Mapping[str, TableRows], service: Runtime | None = None
) -> QueryResult:
    """``sql`` (one query) evaluated by GoogleSQL's reference implementation over
    ``tables`` (name as the query writes it -> rows), with the analyzer's settings."""
    service = runtime() if service is None else service
    options = settings(service)
    catalog = simple_catalog.SimpleCatalogProto(name="bigquery")
    catalog.builtin_function_options.CopyFrom(options.builtin_functions)
    request = local_service.EvaluateQueryRequest(
        sql=sql, options=options.analyzer, simple_catalog=catalog
    )
    for name, table in tables.items():
        catalog.table.add().CopyFrom(_table(name, table))
        request.table_content[name].CopyFrom(_content(table))
    request.simple_catalog.CopyFrom(catalog)
    try:
        response = service.call("EvaluateQuery", request, local_service.EvaluateQueryResponse)
    except AnalyzerServerError as exc:
        raise AnalyzerRejected(f"GoogleSQL's reference implementation: {exc.message}") from None
    prepared = response.prepared
    try:
        kinds = [column.type for column in prepared.columns]
        rows = [
            tuple(from_value(cell, kind) for cell, kind in zip(row.cell, kinds, strict=True))
            for row in response.content.table_data.row
        ]
    finally:
        if prepared.prepared_query_id:  # the service keeps a prepared query until told
            unprepare = local_service.UnprepareQueryRequest(
                prepared_query_id=prepared.prepared_query_id
            )
            service.call("UnprepareQuery", unprepare, NoResponse)
    columns = tuple(OutputColumn(c.name, type_text(c.type)) for c in prepared.columns)
    return QueryResult(columns, rows, tuple(kinds))
