"""The shared reader: arrays split in chunks exactly as json.loads reads them, layouts
sniffed from the start, broken gzip streams ending in one cut record."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_telemetry.warehouse._reading.records import Kind, Record, iter_records
from agent_telemetry.warehouse._reading.source import LogInput
from agent_telemetry.warehouse._reading.structure import ArraySplitter, Broken, Element, nesting
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


def _split(data: bytes, chunk: int, limit: int = 1 << 20) -> list[Element | Broken]:
    splitter = ArraySplitter(limit)
    pieces: list[Element | Broken] = []
    for start in range(0, len(data), chunk):
        pieces.extend(splitter.feed(data[start : start + chunk]))
    pieces.extend(splitter.finish())
    return pieces


@settings(max_examples=120, deadline=None)
@given(
    values=st.lists(JSON, max_size=12), chunk=st.integers(1, 9), indent=st.sampled_from([None, 1])
)
def test_chunked_array_splitting_matches_json_loads(
    values: list[object], chunk: int, indent: int | None
) -> None:
    # ensure_ascii=False: multi-byte characters and escapes cut by chunk boundaries too.
    data = json.dumps(values, indent=indent, ensure_ascii=False).encode()
    pieces = _split(data, chunk)
    assert all(isinstance(p, Element) and p.data is not None for p in pieces)
    assert [orjson.loads(p.data) for p in pieces if isinstance(p, Element) and p.data] == values


def _records(path: Path) -> list[Record]:
    with LogInput(path) as log:
        return list(iter_records(log))


def test_a_file_cut_inside_an_element_ends_with_one_malformed_record(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[{"a": 1}, {"b": [1, 2')
    assert [r.kind for r in _records(path)] == [Kind.OTHER_JSON, Kind.MALFORMED]


def test_an_array_without_its_closing_bracket_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "open.json"
    path.write_text('[{"a": 1}, 7')
    assert [r.kind for r in _records(path)] == [Kind.OTHER_JSON, Kind.OTHER_JSON, Kind.MALFORMED]


def test_arrays_one_after_another_are_read_and_trailing_text_is_one_malformed_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "twice.json"
    # `gcloud logging read --format=json` twice into one file (>>).
    path.write_text('[\n  {"a": 1}\n]\n[\n  {"b": 2}, 3\n]\nnot json at all\n{"c": 4}\n')
    kinds = [r.kind for r in _records(path)]
    assert kinds == [Kind.OTHER_JSON, Kind.OTHER_JSON, Kind.OTHER_JSON, Kind.MALFORMED]


def test_layout_tells_an_export_from_lines(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text('[\n  {"jsonPayload": {"event": "chat_turn", "schema_version": 1}}\n]\n')
    one_line = tmp_path / "bq.json"
    one_line.write_text('[{"jsonPayload": {"event": "chat_turn", "schema_version": "1"}}]\n')
    lines = tmp_path / "lines.jsonl"
    lines.write_text('[1, 2]\n{"event": "chat_turn", "schema_version": 1}\n')
    layouts = []
    for path in (export, one_line, lines):
        with LogInput(path) as log:
            layouts.append(log.layout)
    assert layouts == ["array", "array", "lines"]


def test_a_cut_off_gzip_yields_every_whole_line_then_one_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    whole = half_gzip(path)
    assert 0 < whole < 3000
    with LogInput(path) as log:
        assert (log.layout, log.gzip) == ("lines", True)
        records = list(iter_records(log))
    assert [r.kind for r in records] == [Kind.TELEMETRY] * whole + [Kind.MALFORMED]
    assert (records[-1].position, records[-1].cut) == (whole + 1, True)


def test_a_gzip_with_a_bad_header_is_one_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(BAD_HEADER)
    assert [(r.kind, r.position, r.cut) for r in _records(path)] == [(Kind.MALFORMED, 1, True)]


def test_a_cut_off_gzipped_array_keeps_its_whole_elements(tmp_path: Path) -> None:
    elements = [{"n": number, "pad": "x" * 40} for number in range(3000)]
    data = gzip.compress(json.dumps(elements, indent=1).encode())
    path = tmp_path / "export.json.gz"
    path.write_bytes(data[: len(data) // 2])
    records = _records(path)
    assert [r.kind for r in records[:-1]] == [Kind.OTHER_JSON] * (len(records) - 1)
    assert len(records) > 100
    assert (records[-1].kind, records[-1].cut) == (Kind.MALFORMED, True)


def test_nesting_counts_brackets_outside_strings_only() -> None:
    assert nesting(b'{"a": "[[[[", "b": [{}]}') == (3, True)
    assert nesting(b'{"a": "\\"]"}') == (1, True)
    assert nesting(b'{"a": [1, 2}') == (2, False)
    assert nesting(b'{"a": "open') == (1, False)
