"""Analyze GoogleSQL statements against a catalog, with settings close to BigQuery's.

Settings (``settings``):
- every released language feature (``maximum_features``), plus view column
  ``OPTIONS(description=...)`` (off by default in ZetaSQL, used by every generated view),
  minus JSON equality (BigQuery cannot compare JSON values);
- ``PRODUCT_EXTERNAL``: BigQuery's type names (``FLOAT64``; no ``DOUBLE``, ``INT32``);
- statement kinds: queries and ``CREATE VIEW``;
- the options BigQuery's ``CREATE VIEW`` takes, typed: ``description``,
  ``friendly_name``, ``labels`` (``ARRAY<STRUCT<STRING, STRING>>``),
  ``expiration_timestamp``, ``privacy_policy``; any other name is an error;
- time zone UTC, as BigQuery's default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from types import TracebackType
from typing import Any

from agent_telemetry.analyze._catalog import CatalogTree, TypeProto, type_proto, type_text
from agent_telemetry.analyze._errors import AnalyzerRejected
from agent_telemetry.analyze._runtime import (
    AnalyzerServerError,
    NoResponse,
    Runtime,
    analyzer_options,
    language,
    local_service,
    node_kind,
    resume,
    runtime,
)

_LOCATION = re.compile(r" \[at (\d+):(\d+)\]")
# Comments and whitespace only: nothing left to analyze in the rest of a script.
_NO_CODE = re.compile(r"(?:\s|;|--[^\n]*|#[^\n]*|/\*.*?\*/)*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Analysis:
    """The analyzer's verdict on one statement.

    Accepted: ``columns`` are the statement's output columns with their types, and
    ``name_path`` the object a ``CREATE`` statement creates (dotted parts split).
    Rejected: ``message`` is the analyzer's message without its location; ``line`` and
    ``column`` (1-based, in the text given, when the analyzer names a place).
    ``start_line``: where the statement begins (its first line of code).
    """

    accepted: bool
    columns: tuple[OutputColumn, ...] = ()
    name_path: tuple[str, ...] = ()
    message: str = ""
    line: int | None = None
    column: int | None = None
    column_types: tuple[TypeProto, ...] = field(default=(), repr=False)
    start_line: int = 1

    @property
    def typed_columns(self) -> list[tuple[str, str]]:
        return [(c.name, c.type) for c in self.columns]


@dataclass(frozen=True, slots=True)
class _Settings:
    analyzer: Any
    builtin_functions: Any


@cache
def settings(service: Runtime) -> _Settings:
    """The analyzer's and built-in functions' options for ``service`` (made once)."""
    features = language.LanguageFeature
    options = service.call(
        "GetLanguageOptions",
        local_service.LanguageOptionsRequest(maximum_features=True),
        analyzer_options.LanguageOptionsProto,
    )
    enabled = set(options.enabled_language_features)
    enabled.add(features.FEATURE_CREATE_VIEWS_WITH_COLUMN_OPTIONS)
    enabled.discard(features.FEATURE_JSON_TYPE_COMPARISON)
    del options.enabled_language_features[:]
    options.enabled_language_features.extend(sorted(enabled))
    options.product_mode = language.ProductMode.PRODUCT_EXTERNAL
    del options.supported_statement_kinds[:]
    options.supported_statement_kinds.extend(
        [
            node_kind.ResolvedNodeKind.RESOLVED_QUERY_STMT,
            node_kind.ResolvedNodeKind.RESOLVED_CREATE_VIEW_STMT,
        ]
    )
    allowed = analyzer_options.AllowedHintsAndOptionsProto(
        disallow_unknown_options=True, disallow_duplicate_option_names=True
    )
    for name, kind in (
        ("description", type_proto("STRING")),
        ("friendly_name", type_proto("STRING")),
        ("labels", _labels_type()),
        ("expiration_timestamp", type_proto("TIMESTAMP")),
        ("privacy_policy", type_proto("STRING")),
    ):
        allowed.option.add(name=name, type=kind)
    analyzer = analyzer_options.AnalyzerOptionsProto(
        language_options=options,
        error_message_mode=language.ErrorMessageMode.ERROR_MESSAGE_ONE_LINE,
        default_timezone="UTC",
        allowed_hints_and_options=allowed,
    )
    builtin = analyzer_options.ZetaSQLBuiltinFunctionOptionsProto(language_options=options)
    return _Settings(analyzer, builtin)


def _labels_type() -> TypeProto:
    """BigQuery's view ``labels``: ``ARRAY<STRUCT<STRING, STRING>>`` with unnamed fields
    (a tuple literal ``('key', 'value')`` coerces only to unnamed ones)."""
    proto = type_proto("ARRAY<STRUCT<key STRING, value STRING>>")
    for struct_field in proto.array_type.element_type.struct_type.field:
        struct_field.field_name = ""
    return proto


def _find(message: Any, field: str) -> Any:
    """Walk a resolved statement's oneofs and ``parent`` links down to ``field``."""
    while message is not None:
        if field in message.DESCRIPTOR.fields_by_name:
            return message
        nxt = None
        for oneof in message.DESCRIPTOR.oneofs:
            which = message.WhichOneof(oneof.name)
            if which:
                nxt = getattr(message, which)
                break
        if nxt is None and "parent" in message.DESCRIPTOR.fields_by_name:
            nxt = message.parent
        message = nxt
    return None


def _accepted(response: Any) -> Analysis:
    statement = response.resolved_statement
    holder = _find(statement, "output_column_list")
    outputs = list(holder.output_column_list) if holder is not None else []
    creates = _find(statement, "name_path")
    path = tuple(p for part in creates.name_path for p in part.split(".")) if creates else ()
    return Analysis(
        accepted=True,
        columns=tuple(OutputColumn(o.name, type_text(o.column.type)) for o in outputs),
        name_path=path,
        column_types=tuple(o.column.type for o in outputs),
    )


def _rejected(error: AnalyzerServerError) -> Analysis:
    text = error.message
    where = _LOCATION.search(text)
    if where is None:
        return Analysis(accepted=False, message=text.strip())
    message = (text[: where.start()] + text[where.end() :]).strip()
    return Analysis(accepted=False, message=message, line=int(where[1]), column=int(where[2]))


class Analyzer:
    """The analyzer with one catalog registered; ``close`` (or ``with``) unregisters it."""

    def __init__(self, catalog: CatalogTree, service: Runtime | None = None) -> None:
        self._service = runtime() if service is None else service
        self._settings = settings(self._service)
        request = local_service.RegisterCatalogRequest(
            simple_catalog=catalog.proto(self._settings.builtin_functions)
        )
        try:
            registered = self._service.call(
                "RegisterCatalog", request, local_service.RegisterResponse
            )
        except AnalyzerServerError as exc:
            raise AnalyzerRejected(f"the analyzer refused the catalog: {exc.message}") from None
        self._catalog_id: int | None = registered.registered_id

    def __enter__(self) -> Analyzer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._catalog_id is None:
            return
        request = local_service.UnregisterRequest(registered_id=self._catalog_id)
        self._catalog_id = None
        self._service.call("UnregisterCatalog", request, NoResponse)

    def analyze(self, sql: str) -> Analysis:
        """One statement (the whole text), e.g. a generated ``CREATE OR REPLACE VIEW``."""
        request = local_service.AnalyzeRequest(
            options=self._settings.analyzer,
            registered_catalog_id=self._catalog_id,
            sql_statement=sql,
        )
        return self._run(request)[0]

    def analyze_script(self, sql: str) -> list[Analysis]:
        """Every statement of ``sql`` in order, up to the first rejected one; line and
        column stay relative to the whole text."""
        data = sql.encode("utf-8")
        position: int | None = 0
        found: list[Analysis] = []
        while position is not None:
            before = data[:position].decode("utf-8", "replace")
            rest = data[position:].decode("utf-8", "replace")
            blank = _NO_CODE.match(rest)
            if blank is None or blank.end() == len(rest):
                break
            start_line = before.count("\n") + rest[: blank.end()].count("\n") + 1
            location = resume.ParseResumeLocationProto(
                input=sql, byte_position=position, allow_resume=True
            )
            request = local_service.AnalyzeRequest(
                options=self._settings.analyzer,
                registered_catalog_id=self._catalog_id,
                parse_resume_location=location,
            )
            analysis, position = self._run(request)
            found.append(replace(analysis, start_line=start_line))
            if not analysis.accepted:
                break
        return found

    def _run(self, request: Any) -> tuple[Analysis, int | None]:
        if self._catalog_id is None:
            raise AnalyzerRejected("the analyzer's catalog is closed")
        try:
            response = self._service.call("Analyze", request, local_service.AnalyzeResponse)
        except AnalyzerServerError as exc:
            return _rejected(exc), None
        following = (
            response.resume_byte_position if response.HasField("resume_byte_position") else None
        )
        return _accepted(response), following
