"""The schema lock: resolved from the models, deterministic, committed and current."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agent_telemetry.schema import PipelineRun, catalogue, event_spec, version_catalogue
from agent_telemetry.schema.lock import (
    LOCK_PATH,
    LockFormatError,
    build_lock,
    dump_lock,
    load_lock,
    lock_lines,
    parse_lock,
    read_lock,
)
from tests.schema.copies import copy_model, lock_of, real_lock_data, registry_with


def test_the_committed_lock_matches_the_models() -> None:
    assert dump_lock(build_lock(version_catalogue())) == LOCK_PATH.read_text(encoding="utf-8"), (
        "run `agent-telemetry lock` and commit agent_telemetry/schema/schema.lock.json"
    )


def test_the_lock_records_every_field_in_model_order() -> None:
    lock = build_lock(catalogue())
    for spec in catalogue():
        entry = lock.events[spec.name][spec.schema_version]
        assert entry.field_names == spec.field_names
        for locked, field in zip(entry.fields, spec.fields, strict=True):
            assert (locked.kind, locked.type, locked.required) == (
                field.kind,
                field.bigquery_type,
                field.required,
            )
            assert (locked.ge, locked.le) == (field.ge, field.le)
            assert locked.members == (tuple(sorted(field.members)) if field.members else None)
            assert len(locked.description_sha256) == 64


def test_the_same_models_give_the_same_bytes() -> None:
    reversed_specs = tuple(reversed(catalogue()))
    assert dump_lock(build_lock(catalogue())) == dump_lock(build_lock(reversed_specs))


def test_dump_is_canonical_whatever_the_input_order() -> None:
    data = real_lock_data()
    data["events"] = dict(reversed(list(data["events"].items())))
    for entry in data["events"]["pipeline_run"]["1"]["fields"]:
        if "members" in entry:
            entry["members"].reverse()
        entry.update(dict(reversed(list(entry.items()))))
    assert dump_lock(parse_lock(data)) == dump_lock(build_lock(catalogue()))


def test_rewrapping_a_description_is_no_change() -> None:
    spec = event_spec(PipelineRun)
    rewrapped = dataclasses.replace(spec, description=spec.description + "\n  ")
    assert build_lock([rewrapped]) == build_lock([spec])


def test_the_lock_has_exactly_the_registered_versions() -> None:
    bumped = lock_of(registry_with(copy_model(PipelineRun, version=3), retired=(PipelineRun,)))
    assert set(bumped.events["pipeline_run"]) == {1, 3}
    assert bumped.events["pipeline_run"][1] == build_lock(catalogue()).events["pipeline_run"][1]
    back = lock_of(registry_with(copy_model(PipelineRun, version=2), retired=(PipelineRun,)))
    assert set(back.events["pipeline_run"]) == {1, 2}
    unretired = lock_of(registry_with(copy_model(PipelineRun, version=2)))
    assert set(unretired.events["pipeline_run"]) == {2}


def test_a_deleted_model_leaves_the_lock() -> None:
    rebuilt = build_lock([s for s in catalogue() if s.name != "chat_turn"])
    assert "chat_turn" not in rebuilt.events


def test_lock_lines_point_at_events_versions_and_fields() -> None:
    text = dump_lock(build_lock(catalogue()))
    lines = text.splitlines()
    where = lock_lines(text)
    assert lines[where[("pipeline_run", None, None)] - 1].strip() == '"pipeline_run": {'
    assert lines[where[("pipeline_run", 1, None)] - 1].strip() == '"1": {'
    assert lines[where[("pipeline_run", 1, "attempts")] - 1].strip() == '"name": "attempts",'
    assert len(where) == sum(1 + 1 + len(s.fields) for s in catalogue())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("[]", "not an object"),
        ('{"lock_format": 2, "events": {}}', "lock_format"),
        ('{"events": {"e": {"x": {}}}}', "events.e.x"),
    ],
)
def test_a_broken_lock_is_named_with_its_place(text: str, message: str) -> None:
    with pytest.raises(LockFormatError, match=message):
        load_lock(text, "schema.lock.json")


def test_the_lock_is_plain_json_with_string_versions() -> None:
    data = json.loads(LOCK_PATH.read_text(encoding="utf-8"))
    assert data["lock_format"] == 1
    assert list(data["events"]) == sorted(data["events"])
    assert all(list(versions) == ["1"] for versions in data["events"].values())


# --- what the lock keeps of a spec, and how it reads and writes ------------------------


def test_a_locked_version_reads_back_as_its_spec_without_descriptions() -> None:
    # The compat rules and the plan recount capacity from the lock: the spec it gives
    # back is the version's own, less the texts (kept as hashes or not at all).
    for spec in version_catalogue():
        entry = build_lock([spec]).events[spec.name][spec.schema_version]
        assert entry.spec(spec.name, spec.schema_version) == dataclasses.replace(
            spec,
            description="",
            reviews=(),
            fields=tuple(
                dataclasses.replace(
                    f,
                    description="",
                    waiver=None,
                    name_review=None,
                    members=tuple(sorted(f.members)),  # the lock keeps them sorted
                )
                for f in spec.fields
            ),
        )


def _reviewed_spec() -> object:
    from agent_telemetry.schema.spec import EventSpec, FieldSpec

    field = FieldSpec(
        "bytes_read",
        "int",
        True,
        "Bytes read.",
        ge=0,
        le=10**9,
        waiver="reviewed in issue 12: naïve sizes",
        name_review="a size, not an identifier",
        precision=3,
    )
    return EventSpec("reviewed_event", 1, "An event.", (field,))


def test_reviewed_exceptions_are_recorded_and_written_ascii_only() -> None:
    lock = build_lock([_reviewed_spec()])  # type: ignore[list-item]
    (field,) = lock.events["reviewed_event"][1].fields
    assert field.cardinality_waiver == "reviewed in issue 12: naïve sizes"
    assert field.name_review == "a size, not an identifier"
    text = dump_lock(lock)
    assert text.isascii()
    written = json.loads(text)["events"]["reviewed_event"]["1"]["fields"][0]
    assert written["cardinality_waiver"] == "reviewed in issue 12: naïve sizes"
    assert written["name_review"] == "a size, not an identifier"
    assert (written["ge"], written["le"], written["precision"]) == (0, 10**9, 3)
    assert load_lock(text) == lock


def test_a_lock_with_one_bound_keeps_it_when_written_again() -> None:
    # A hand-made lock: nothing it holds is lost by reading it and writing it back.
    data = json.loads(dump_lock(build_lock([_reviewed_spec()])))  # type: ignore[list-item]
    del data["events"]["reviewed_event"]["1"]["fields"][0]["le"]
    again = json.loads(dump_lock(load_lock(json.dumps(data))))
    field = again["events"]["reviewed_event"]["1"]["fields"][0]
    assert (field["ge"], field["le"]) == (0, None)


def test_a_lock_that_does_not_read_is_named_by_its_file(tmp_path: Path) -> None:
    top = "not a schema lock: the top level is not an object"
    with pytest.raises(LockFormatError) as unnamed:
        load_lock("[]")
    assert str(unnamed.value) == f"schema.lock.json: {top}"
    with pytest.raises(LockFormatError) as deep:
        load_lock("[" * 200 + "]" * 200, "base:telemetry/schema.lock.json")
    assert str(deep.value) == "base:telemetry/schema.lock.json: nested deeper than 128 levels"
    path = tmp_path / "sch\x1bema.lock.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(LockFormatError) as named:
        read_lock(path)
    assert str(named.value) == f"{tmp_path}/sch\\x1bema.lock.json: {top}"


def test_lines_outside_an_event_are_not_mapped() -> None:
    text = (
        '      "1": {\n            "name": "x",\n'  # before any event
        '    "ev": {\n            "name": "y",\n'  # an event's, before any version
        '      "2": {\n            "name": "z",\n'
    )
    assert lock_lines(text) == {("ev", None, None): 3, ("ev", 2, None): 5, ("ev", 2, "z"): 6}
