"""Edges of the binding proof: what the sink schema decides, and the exact messages.

`agent-telemetry check` prints these violations to the user, so their text and their
count are asserted exactly; the views are hand-written SQL a user could commit.
"""

from __future__ import annotations

from agent_telemetry.schema import EventSpec, version_catalogue
from agent_telemetry.views import (
    VIEW_ENVELOPE_COLUMNS,
    binding_violations,
    column_lineage,
    view_lineage,
)
from tests.views.test_bindings import _spec, _views

# Project, dataset and table all differ, so a schema keyed by the wrong part is caught.
SINK = "`proj-a.logs_b.sink_c`"


def _reads(spec: EventSpec) -> dict[str, str]:
    """View column -> its read of the partitioned sink, for a flat one-SELECT view."""
    return {
        "timestamp": "sink.timestamp",
        "schema_version": "sink.jsonPayload.schema_version",
        **{f: f"sink.jsonPayload.{f}" for f in spec.field_names},
        "invalid_fields": "sink.jsonPayload.invalid_fields",
    }


def _select(reads: dict[str, str] | list[tuple[str, str]]) -> str:
    items = reads.items() if isinstance(reads, dict) else reads
    return "SELECT " + ", ".join(f"{read} AS {name}" for name, read in items)


def _flat(spec: EventSpec, **changed: str) -> str:
    return f"{_select(_reads(spec) | changed)} FROM {SINK} AS sink"


def _violations(
    query: str, spec: EventSpec | None = None, specs: tuple[EventSpec, ...] | None = None
) -> list[str]:
    found = binding_violations(query, spec or _spec("pipeline_run"), "partitioned", "v", specs)
    return [str(v) for v in found]


def test_a_flat_view_binds() -> None:
    # The baseline the edge cases below vary.
    assert _violations(_flat(_spec("pipeline_run"))) == []


# --- what the sink schema decides ----------------------------------------------------


def test_unqualified_payload_reads_bind_through_the_sink_schema() -> None:
    # `jsonPayload.lane` without the table alias is a column of the sink only because the
    # schema says so; without it sqlglot reads `jsonPayload` as a table and the lineage
    # reaches nothing.
    query = _views("partitioned")["pipeline_run"].query.replace("sink.", "")
    assert "sink.jsonPayload" not in query
    assert _violations(query) == []
    assert column_lineage(query, "partitioned", "lane") == {"jsonPayload.lane"}
    assert view_lineage(query, "partitioned")["model_calls"] == {"jsonPayload.model_calls"}


def _struct_star_view() -> str:
    # `sink.jsonPayload.*` expands to the payload record's fields as the sink schema types
    # them: `lines.lane` exists only if the record has a `lane` field.
    query = _views("partitioned")["pipeline_run"].query
    star = query.replace(
        "    sink.timestamp AS timestamp,\n",
        "    sink.timestamp AS timestamp,\n    sink.jsonPayload.*,\n",
        1,
    ).replace("SAFE_CAST(sink.jsonPayload.lane AS STRING) AS lane,", "", 1)
    assert star.count("jsonPayload.*") == 1
    assert "SAFE_CAST(sink.jsonPayload.lane" not in star  # (the rank order still reads it)
    return star


def test_a_struct_star_binds_the_fields_the_sink_record_has() -> None:
    assert _violations(_struct_star_view()) == []


def test_the_specs_argument_types_the_sink_record() -> None:
    # A sink typed only for events without `lane` has no such column: the view reading it
    # is refused, with the qualifier's reason.
    others = tuple(s for s in version_catalogue() if "lane" not in s.field_names)
    assert others
    assert _violations(_struct_star_view(), specs=others) == [
        "v.*: does not qualify against the sink schema (Unknown column: lane)"
    ]


def test_quoted_names_bind_case_insensitively_as_bigquery_reads_them() -> None:
    # BigQuery column names ignore case even when quoted; a quoted `Lane` is the field.
    query = _views("partitioned")["pipeline_run"].query
    aliased = query.replace("THEN lines.lane END AS lane,", "THEN lines.lane END AS `Lane`,")
    read = query.replace("sink.jsonPayload.lane AS", "sink.`jsonPayload`.`Lane` AS")
    assert aliased != query
    assert read != query
    assert _violations(aliased) == []
    assert _violations(read) == []


# --- the one sink table --------------------------------------------------------------


def test_joining_a_second_unqualified_table_is_refused() -> None:
    query = f"{_flat(_spec('pipeline_run'))} CROSS JOIN lookup"
    assert _violations(query) == ["v.*: does not read exactly one sink table"]


def test_every_branch_of_a_union_is_followed() -> None:
    spec = _spec("pipeline_run")
    sound = f"{_flat(spec)} UNION ALL {_flat(spec)}"
    assert _violations(sound) == []
    # Only the first branch is wrong: its lane reads status.
    wrong_first = f"{_flat(spec, lane='sink.jsonPayload.status')} UNION ALL {_flat(spec)}"
    assert _violations(wrong_first) == [
        "v.lane: lineage reaches jsonPayload.lane, jsonPayload.status; "
        "expected exactly jsonPayload.lane"
    ]


# --- the messages and their count ----------------------------------------------------


def _missing(names: tuple[str, ...], kind: str) -> list[str]:
    return [f"v.{name}: {kind} has no column in the view" for name in names]


def test_a_lineage_failure_is_reported_and_the_later_columns_still_checked() -> None:
    # The second branch has no second column: lineage cannot follow `timestamp` there.
    # schema_version and invalid_fields come after it and must still be reported.
    query = (
        f"SELECT sink.jsonPayload.lane AS lane, sink.timestamp AS timestamp FROM {SINK} AS sink"
        f" UNION ALL SELECT sink.jsonPayload.lane AS lane FROM {SINK} AS sink"
    )
    fields = _spec("pipeline_run").field_names
    assert _violations(query) == [
        *_missing(fields[1:], "model field"),
        "v.timestamp: lineage failed (Cannot find column's source with index 1 in query: "
        f"SELECT sink.jsonpayload.lane AS lane FROM {SINK} AS sink)",
        *_missing(VIEW_ENVELOPE_COLUMNS[1:], "envelope column"),
    ]


def test_missing_envelope_columns_are_named_as_envelope_columns() -> None:
    spec = _spec("provider_status")
    reads = _reads(spec)
    query = f"{_select([(f, reads[f]) for f in spec.field_names])} FROM {SINK} AS sink"
    assert _violations(query, spec) == [
        "v.timestamp: envelope column has no column in the view",
        "v.schema_version: envelope column has no column in the view",
        "v.invalid_fields: envelope column has no column in the view",
    ]


def test_a_duplicated_column_is_reported_once_and_the_later_columns_still_checked() -> None:
    # Two `lane` columns, the first reading status: the duplicate is the one problem for
    # lane (its lineage is not judged), and a later missing field is still reported.
    spec = _spec("pipeline_run")
    reads = [(n, r) for n, r in _reads(spec).items() if n != "model_calls"]
    query = _select([("lane", "sink.jsonPayload.status"), *reads]) + f" FROM {SINK} AS sink"
    assert _violations(query) == [
        "v.lane: appears 2 times",
        "v.model_calls: model field has no column in the view",
    ]


def test_a_column_three_times_is_counted() -> None:
    spec = _spec("pipeline_run")
    reads = [*_reads(spec).items(), *[("status", "sink.jsonPayload.status")] * 2]
    query = f"{_select(reads)} FROM {SINK} AS sink"
    assert _violations(query) == ["v.status: appears 3 times"]


def test_an_unknown_column_is_named() -> None:
    query = _flat(_spec("pipeline_run"), lane_copy="sink.jsonPayload.lane")
    assert _violations(query) == ["v.lane_copy: is neither a model field nor an envelope column"]
