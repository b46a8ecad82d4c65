"""The catalogs the analyzer resolves names against, as ZetaSQL ``SimpleCatalogProto``.

- ``source_catalog``: the table the views of one layout read, typed from the models
  (``agent_telemetry.views.table_columns``: for ``partitioned`` and ``sharded`` the sink
  schema, ``sink_schema(layout)``; for ``analytics`` the Log Analytics ``_AllLogs`` columns
  the views use, defined beside it: a log view's schema is that of the LogEntry,
  https://cloud.google.com/logging/docs/analyze/query-and-view, with ``json_payload`` JSON).
  No second copy of either schema lives here.
- ``views_catalog``: views as tables, typed by the analyzer's own output columns, for an
  analyst's query.

BigQuery accepts a table path quoted whole (`` `p.d.t` ``) or part by part
(`` `p`.d.t ``); ZetaSQL keeps a quoted ``p.d.t`` as one identifier. So each table is
registered under every grouping of its path into consecutive parts (nested catalogs), and
also without its project (``d.t``, as BigQuery resolves it in the job's project).

ZetaSQL has no wildcard tables: a sharded sink ``run_googleapis_com_stdout_*`` is
registered as a table with that literal name and BigQuery's ``_TABLE_SUFFIX STRING``
pseudo-column (not part of ``SELECT *``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations, pairwise
from typing import Any

from agent_telemetry.analyze._runtime import simple_catalog, simple_table, types
from agent_telemetry.config import DeploymentConfig, Layout
from agent_telemetry.schema.spec import EventSpec
from agent_telemetry.views import table_columns

# The events a sink holds: every version of the project's catalogue (None: the package's).
Specs = tuple[EventSpec, ...] | None

TypeProto = Any  # zetasql.TypeProto (protobuf messages are untyped here)
Columns = Sequence[tuple[str, TypeProto]]

TABLE_SUFFIX = "_TABLE_SUFFIX"

_KIND = types.TypeKind
# GoogleSQL scalar type names (BigQuery spelling) and their ZetaSQL type kinds.
_SCALARS: dict[str, int] = {
    "STRING": _KIND.TYPE_STRING,
    "BYTES": _KIND.TYPE_BYTES,
    "INT64": _KIND.TYPE_INT64,
    "FLOAT64": _KIND.TYPE_DOUBLE,
    "NUMERIC": _KIND.TYPE_NUMERIC,
    "BIGNUMERIC": _KIND.TYPE_BIGNUMERIC,
    "BOOL": _KIND.TYPE_BOOL,
    "TIMESTAMP": _KIND.TYPE_TIMESTAMP,
    "DATE": _KIND.TYPE_DATE,
    "TIME": _KIND.TYPE_TIME,
    "DATETIME": _KIND.TYPE_DATETIME,
    "GEOGRAPHY": _KIND.TYPE_GEOGRAPHY,
    "JSON": _KIND.TYPE_JSON,
    "INTERVAL": _KIND.TYPE_INTERVAL,
}
_NAMES = {kind: name for name, kind in _SCALARS.items()}
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|([<>,]))")


def _tokens(text: str) -> Iterator[str]:
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"not a GoogleSQL type: {text!r}")
        yield match[1] or match[2]
        position = match.end()


def type_proto(text: str) -> TypeProto:
    """``ARRAY<STRUCT<a INT64, b JSON>>`` -> a ZetaSQL ``TypeProto``."""
    tokens = list(_tokens(text))
    proto, rest = _parse(tokens, text)
    if rest:
        raise ValueError(f"not a GoogleSQL type: {text!r}")
    return proto


def _expect(tokens: list[str], token: str, text: str) -> list[str]:
    if not tokens or tokens[0] != token:
        raise ValueError(f"not a GoogleSQL type: {text!r}")
    return tokens[1:]


def _parse(tokens: list[str], text: str) -> tuple[TypeProto, list[str]]:
    if not tokens:
        raise ValueError(f"not a GoogleSQL type: {text!r}")
    name, rest = tokens[0].upper(), tokens[1:]
    if name == "ARRAY":
        element, rest = _parse(_expect(rest, "<", text), text)
        array = types.ArrayTypeProto(element_type=element)
        return types.TypeProto(type_kind=_KIND.TYPE_ARRAY, array_type=array), _expect(
            rest, ">", text
        )
    if name == "STRUCT":
        rest = _expect(rest, "<", text)
        fields = []
        while True:
            if not rest or rest[0] in "<>,":
                raise ValueError(f"not a GoogleSQL type: {text!r}")
            field_name = rest[0]
            field_type, rest = _parse(rest[1:], text)
            fields.append(types.StructFieldProto(field_name=field_name, field_type=field_type))
            if rest[:1] == [","]:
                rest = rest[1:]
                continue
            rest = _expect(rest, ">", text)
            break
        struct = types.StructTypeProto(field=fields)
        return types.TypeProto(type_kind=_KIND.TYPE_STRUCT, struct_type=struct), rest
    if name not in _SCALARS:
        raise ValueError(f"not a GoogleSQL type: {text!r}")
    return types.TypeProto(type_kind=_SCALARS[name]), rest


def type_text(proto: TypeProto) -> str:
    """A ZetaSQL ``TypeProto`` in BigQuery's spelling (``FLOAT64``, ``ARRAY<STRING>``)."""
    kind = proto.type_kind
    if kind == _KIND.TYPE_ARRAY:
        return f"ARRAY<{type_text(proto.array_type.element_type)}>"
    if kind == _KIND.TYPE_STRUCT:
        fields = (
            f"{f.field_name} {type_text(f.field_type)}".lstrip() for f in proto.struct_type.field
        )
        return f"STRUCT<{', '.join(fields)}>"
    if kind == _KIND.TYPE_RANGE:
        return f"RANGE<{type_text(proto.range_type.element_type)}>"
    name = _NAMES.get(kind)
    return name if name is not None else str(_KIND.Name(kind)).removeprefix("TYPE_")


def _groupings(parts: Sequence[str]) -> Iterator[list[str]]:
    """[p, d, t] -> [p.d.t], [p, d.t], [p.d, t], [p, d, t]."""
    count = len(parts)
    for cut_count in range(count):
        for cuts in combinations(range(1, count), cut_count):
            bounds = (0, *cuts, count)
            yield [".".join(parts[a:b]) for a, b in pairwise(bounds)]


class CatalogTree:
    """A ``SimpleCatalogProto`` whose tables sit under nested catalogs, one per path part."""

    def __init__(self) -> None:
        self.root = simple_catalog.SimpleCatalogProto(name="bigquery")

    @staticmethod
    def _child(catalog: Any, name: str) -> Any:
        for child in catalog.catalog:
            if child.name.lower() == name.lower():
                return child
        child = catalog.catalog.add()
        child.name = name
        return child

    def add(self, path: Sequence[str], columns: Columns, pseudo: Columns = ()) -> None:
        """Register a table at ``path`` (``[project, dataset, table]``) under every grouping
        of its parts, with and without the project."""
        for parts in (list(path), list(path[1:])) if len(path) == 3 else (list(path),):
            for grouping in _groupings(parts):
                catalog = self.root
                for name in grouping[:-1]:
                    catalog = self._child(catalog, name)
                if any(t.name.lower() == grouping[-1].lower() for t in catalog.table):
                    continue  # the first table registered under a name wins
                table = catalog.table.add()
                table.CopyFrom(_table(grouping[-1], columns, pseudo))

    def tables(self) -> Iterable[str]:
        """The dotted names of every registered table (nested catalogs joined with '.')."""

        def walk(catalog: Any, prefix: str) -> Iterator[str]:
            for table in catalog.table:
                yield prefix + table.name
            for child in catalog.catalog:
                yield from walk(child, prefix + child.name + ".")

        return walk(self.root, "")

    def proto(self, builtin_function_options: Any) -> Any:
        catalog = simple_catalog.SimpleCatalogProto()
        catalog.CopyFrom(self.root)
        catalog.builtin_function_options.CopyFrom(builtin_function_options)
        return catalog


def _table(name: str, columns: Columns, pseudo: Columns) -> Any:
    table = simple_table.SimpleTableProto(name=name)
    for column_name, column_type in columns:
        table.column.add(name=column_name, type=column_type)
    for column_name, column_type in pseudo:
        table.column.add(name=column_name, type=column_type, is_pseudo_column=True)
    return table


def source_columns(layout: Layout, specs: Specs = None) -> list[tuple[str, TypeProto]]:
    """The columns of the table the views of ``layout`` read, typed from the models of
    ``specs`` (the project's catalogue; None: the package's own)."""
    return [(name, type_proto(text)) for name, text in table_columns(layout, specs).items()]


def source_path(config: DeploymentConfig, layout: Layout) -> tuple[str, str, str]:
    """``[project, dataset, table]`` the views of ``layout`` read (sharded: ``..._*``)."""
    source = config.source
    return (source.project, source.dataset, source.table_for(layout))


def add_source(tree: CatalogTree, path: Sequence[str], layout: Layout, specs: Specs = None) -> None:
    """Register the sink table (``partitioned``), the wildcard table (``sharded``, with
    ``_TABLE_SUFFIX``) or ``_AllLogs`` (``analytics``) at ``path``."""
    pseudo = [(TABLE_SUFFIX, type_proto("STRING"))] if layout == "sharded" else []
    tree.add(path, source_columns(layout, specs), pseudo)


def source_catalog(config: DeploymentConfig, layout: Layout, specs: Specs = None) -> CatalogTree:
    """The table the views of ``layout`` read, where ``config`` says it is."""
    tree = CatalogTree()
    add_source(tree, source_path(config, layout), layout, specs)
    return tree
