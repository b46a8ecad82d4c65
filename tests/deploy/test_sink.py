"""Missing sink fields and the additive patch, on plain schemas (no server needed)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_telemetry.config import parse_config
from agent_telemetry.deploy._sink import (
    MissingField,
    _missing,
    desired_payload,
    missing_payload_fields,
    patched_schema,
    sink_table_name,
)
from agent_telemetry.schema.catalogue import DEFAULT_MODULE, load_catalogue
from agent_telemetry.views import ENVELOPE_KEYS, TableField

PAYLOAD = desired_payload("partitioned")
NAMES = [f.name for f in PAYLOAD.fields]
TOP = (TableField("timestamp", "TIMESTAMP"), TableField("severity", "STRING"))


@st.composite
def deployed_sinks(draw: st.DrawFn) -> tuple[tuple[TableField, ...], list[str]]:
    """A sink that made its own table: some payload keys never logged, numbers as FLOAT,
    columns in first-seen order, and keys the models do not know."""
    present = draw(st.lists(st.sampled_from(NAMES), unique=True))
    fields = [
        TableField(f.name, "FLOAT" if f.type == "INTEGER" else f.type, f.mode)
        for f in PAYLOAD.fields
        if f.name in present
    ]
    order = draw(st.permutations(range(len(fields))))
    extra = draw(st.lists(st.sampled_from(["legacy_flag", "message", "Trace_Hint"]), unique=True))
    payload_fields = tuple([fields[i] for i in order] + [TableField(n, "STRING") for n in extra])
    payload = TableField("jsonPayload", "RECORD", "NULLABLE", None, payload_fields)
    missing = [n for n in NAMES if n not in present]
    return (TOP[0], payload, TOP[1]), missing


@given(deployed_sinks())
def test_missing_fields_are_exactly_the_payload_keys_the_sink_lacks(
    sink: tuple[tuple[TableField, ...], list[str]],
) -> None:
    schema, missing = sink
    found = missing_payload_fields(schema, "partitioned")
    assert [m.path for m in found] == [f"jsonPayload.{n}" for n in missing]
    assert all(m.field.mode in ("NULLABLE", "REPEATED") for m in found)


@given(deployed_sinks())
def test_the_patch_only_appends_and_leaves_nothing_missing(
    sink: tuple[tuple[TableField, ...], list[str]],
) -> None:
    schema, missing = sink
    patched = patched_schema(schema, missing_payload_fields(schema, "partitioned"))
    assert [f.name for f in patched] == [f.name for f in schema]
    assert (patched[0], patched[2]) == (schema[0], schema[2])
    before, after = schema[1].fields, patched[1].fields
    assert after[: len(before)] == before
    assert [f.name for f in after[len(before) :]] == missing
    assert missing_payload_fields(patched, "partitioned") == ()


def test_a_sink_without_a_payload_record_gets_the_whole_record() -> None:
    found = missing_payload_fields(TOP, "partitioned")
    assert [(m.path, m.field) for m in found] == [("jsonPayload", PAYLOAD)]
    assert patched_schema(TOP, found) == (*TOP, PAYLOAD)


def test_column_names_match_case_insensitively_as_in_bigquery() -> None:
    upper = TableField(
        "JSONPAYLOAD",
        "RECORD",
        "NULLABLE",
        None,
        tuple(TableField(f.name.upper(), f.type, f.mode) for f in PAYLOAD.fields),
    )
    assert missing_payload_fields((upper,), "partitioned") == ()


def test_a_sharded_sink_is_checked_against_its_newest_shard() -> None:
    config = parse_config(
        {
            "source": {"project": "acme-agents-prod", "dataset": "logs", "layout": "sharded"},
            "target": {"project": "acme-agents-prod", "dataset": "telemetry"},
        }
    )
    names = [
        "run_googleapis_com_stdout_20260101",
        "run_googleapis_com_stdout_20260103",
        "run_googleapis_com_stdout_20260102",
        "run_googleapis_com_stdout_2026010",
        "run_googleapis_com_stdout_backup",
        "other_20270101",
    ]
    assert sink_table_name(config, "sharded", names) == "run_googleapis_com_stdout_20260103"
    assert sink_table_name(config, "sharded", []) == "run_googleapis_com_stdout_*"
    assert sink_table_name(config, "partitioned", names) == "run_googleapis_com_stdout"


def test_the_sink_checked_is_the_one_of_the_events_given() -> None:
    """A service's own catalogue: its sink needs its events' fields, not the package's."""
    (spec,) = [s for s in load_catalogue(DEFAULT_MODULE).version_specs() if s.name == "chat_turn"]
    wanted = {*ENVELOPE_KEYS, *(f.name for f in spec.fields)}
    assert {f.name for f in desired_payload("sharded", (spec,)).fields} == wanted
    empty = TableField("jsonPayload", "RECORD", "NULLABLE", None, ())
    found = missing_payload_fields((*TOP, empty), "sharded", (spec,))
    assert {m.path for m in found} == {f"jsonPayload.{name}" for name in wanted}
    assert "jsonPayload.render_ms" not in {m.path for m in found}  # pipeline_render's


# A payload with a record inside: the models write none today, but a deployed sink may
# (a line that logged an object), and the check and the patch are written for any depth.
def _record(name: str, *fields: TableField, description: str | None = None) -> TableField:
    return TableField(name, "RECORD", "NULLABLE", description, fields)


NOTE, TEAM, LANE = (TableField(n, "STRING") for n in ("note", "team", "lane"))
NAME, EMAIL, COST = (TableField(n, "STRING") for n in ("name", "email", "cost_centre"))
OWNER = _record("owner", NAME, description="Who owns the run.")
LABELS = _record("labels", TEAM, OWNER, description="Run labels.")
DEPLOYED = _record("jsonPayload", NOTE, LABELS, description="Payload.")
WANTED = _record("jsonPayload", _record("labels", TEAM, _record("owner", NAME, EMAIL), COST), LANE)


def test_a_field_missing_inside_a_nested_record_is_found_there_and_appended_there() -> None:
    found = _missing(DEPLOYED, WANTED, "jsonPayload")
    assert [m.path for m in found] == [
        "jsonPayload.labels.owner.email",
        "jsonPayload.labels.cost_centre",
        "jsonPayload.lane",
    ]
    owner = _record("owner", NAME, EMAIL, description="Who owns the run.")
    labels = _record("labels", TEAM, owner, COST, description="Run labels.")
    assert patched_schema((TOP[0], DEPLOYED), found) == (
        TOP[0],
        _record("jsonPayload", NOTE, labels, LANE, description="Payload."),
    )


def test_a_deployed_scalar_where_a_record_is_wanted_is_not_patched_into() -> None:
    """BigQuery cannot turn a column into a record: nothing to add (the dry runs say why)."""
    scalar = TableField(
        "jsonPayload", "RECORD", "NULLABLE", None, (TableField("labels", "STRING"),)
    )
    assert _missing(scalar, WANTED, "jsonPayload") == [
        MissingField("jsonPayload.lane", TableField("lane", "STRING"))
    ]


def test_the_patch_keeps_the_payload_records_type_mode_and_description() -> None:
    payload = TableField("jsonPayload", "RECORD", "REPEATED", "Kept as deployed.", ())
    missing = missing_payload_fields((payload,), "partitioned")
    (patched,) = patched_schema((payload,), missing)
    assert (patched.name, patched.type, patched.mode, patched.description) == (
        "jsonPayload",
        "RECORD",
        "REPEATED",
        "Kept as deployed.",
    )
    assert patched.fields == tuple(m.field for m in missing)


def test_every_missing_field_is_added_whatever_comes_first() -> None:
    """A whole missing column, then a field of another record: both land."""
    whole = MissingField("severity", TableField("severity", "STRING"))
    inner = MissingField("jsonPayload.lane", LANE)
    assert patched_schema((TOP[0], DEPLOYED), (whole, inner)) == (
        TOP[0],
        _record("jsonPayload", NOTE, LABELS, LANE, description="Payload."),
        whole.field,
    )
