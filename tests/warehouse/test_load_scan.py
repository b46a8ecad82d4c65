"""Streaming a JSON-array export in chunks gives exactly what json.loads gives."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.warehouse import _load_scan
from agent_telemetry.warehouse._load_scan import Kind, iter_array, sniff
from tests.warehouse.broken_input import BAD_HEADER, half_gzip

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(JSON, max_size=12), chunk=st.integers(1, 9), indent=st.sampled_from([None, 1])
)
def test_chunked_array_reading_matches_json_loads(
    values: list[object], chunk: int, indent: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        path = Path(tmp) / "export.json"
        path.write_text(json.dumps(values, indent=indent))
        patch.setattr(_load_scan, "CHUNK", chunk)
        records = list(iter_array(path))
        assert [r.value for r in records] == values
        assert all(r.kind is not Kind.MALFORMED for r in records)
        assert [json.loads(r.text) for r in records] == values


def test_a_file_cut_inside_an_element_ends_with_one_malformed_record(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"a": 1}, {"b": [1, 2')
    kinds = [r.kind for r in iter_array(path)]
    assert kinds == [Kind.OTHER_JSON, Kind.MALFORMED]


def test_an_array_without_its_closing_bracket_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "open.json"
    path.write_text('[{"a": 1}, 7')
    assert [r.kind for r in iter_array(path)] == [Kind.OTHER_JSON, Kind.OTHER_JSON, Kind.MALFORMED]


def test_sniff_tells_an_export_from_lines(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text('[\n  {"jsonPayload": {"event": "chat_turn", "schema_version": 1}}\n]\n')
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"event": "chat_turn", "schema_version": 1}\n')
    assert (sniff(export).layout, sniff(export).shape) == ("array", "entry")
    assert (sniff(lines).layout, sniff(lines).shape) == ("lines", "emitter")


def test_a_cut_off_gzip_yields_every_whole_line_then_one_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(path)
    assert 0 < whole < 3000
    assert sniff(path) == _load_scan.Sniffed("lines", _load_scan.Shape.EMITTER, True)
    records = list(_load_scan.iter_records(path, "lines"))
    assert [r.kind for r in records] == [Kind.EMITTER] * whole + [Kind.MALFORMED]
    assert (records[-1].position, records[-1].cut) == (whole + 1, True)


def test_a_gzip_with_a_bad_header_is_one_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(BAD_HEADER)
    assert sniff(path).layout == "lines"
    for layout in ("lines", "array"):
        records = list(_load_scan.iter_records(path, layout))
        assert [(r.kind, r.position, r.cut) for r in records] == [(Kind.MALFORMED, 1, True)]


def test_a_cut_off_gzipped_array_keeps_its_whole_elements(tmp_path: Path) -> None:
    elements = [{"n": number, "pad": "x" * 40} for number in range(3000)]
    data = gzip.compress(json.dumps(elements, indent=1).encode())
    path = tmp_path / "export.json.gz"
    path.write_bytes(data[: len(data) // 2])
    records = list(iter_array(path))
    assert [r.kind for r in records[:-1]] == [Kind.OTHER_JSON] * (len(records) - 1)
    assert [r.value for r in records[:-1]] == elements[: len(records) - 1]
    assert len(records) > 100
    assert (records[-1].kind, records[-1].cut) == (Kind.MALFORMED, True)
