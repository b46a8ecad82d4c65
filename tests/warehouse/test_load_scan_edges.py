"""Edges of the loader's scan: the exact record and depth limits, JSON only Python
accepts, lone surrogates inside arrays, BOMs mid-file, where array records are
numbered, a gzipped export cut between two arrays, and a pipe's progress size."""

from __future__ import annotations

import codecs
import json
import zlib
from pathlib import Path

from agent_telemetry.warehouse import FileLoad, Warehouse
from agent_telemetry.warehouse._reading.records import MAX_DEPTH, Kind
from agent_telemetry.warehouse._reading.source import MAX_RECORD
from agent_telemetry.warehouse._reading.structure import ArraySplitter, Broken, Element
from tests.warehouse.broken_input import fifo_with
from tests.warehouse.lines import TIME, entry, line, write_lines
from tests.warehouse.test_lines_reader_edges import _found

FIRST = line("pipeline_run", lane="public", status="ok")  # makes the file JSON lines


def _load(wh: Warehouse, path: Path) -> FileLoad:
    (loaded,) = wh.load([path]).files
    return loaded


def _cut_gzip(path: Path, whole: bytes, lost: bytes) -> Path:
    """A gzip stream that breaks off right after ``whole``: a sync flush puts every byte
    of it in the part kept, and ``lost`` (with the stream's end) in the part cut."""
    stream = zlib.compressobj(wbits=31)
    kept = stream.compress(whole) + stream.flush(zlib.Z_SYNC_FLUSH)
    path.write_bytes(kept)
    assert stream.compress(lost) + stream.flush()  # there was more, now missing
    return path


def test_a_record_of_exactly_max_record_bytes_is_read_and_one_byte_more_is_oversized(
    wh: Warehouse, tmp_path: Path
) -> None:
    def array_line(size: int) -> str:
        return '["' + "x" * (size - 4) + '"]'

    path = write_lines(
        tmp_path / "big.jsonl", [FIRST, array_line(MAX_RECORD), array_line(MAX_RECORD + 1)]
    )
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.other_json, loaded.oversized) == (3, 1, 1, 1)


def test_a_broken_record_nested_exactly_max_depth_is_truncated_not_too_deep(
    wh: Warehouse, tmp_path: Path
) -> None:
    # The stray comma breaks it before any nesting is parsed; depth MAX_DEPTH is allowed.
    at_limit = "[," + "[" * (MAX_DEPTH - 1) + "]" * MAX_DEPTH
    path = write_lines(tmp_path / "deep.jsonl", [FIRST, at_limit])
    loaded = _load(wh, path)
    assert (loaded.records, loaded.truncated, loaded.too_deep) == (2, 1, 0)


def test_a_broken_record_nested_past_max_depth_is_too_deep_whatever_else_is_wrong(
    wh: Warehouse, tmp_path: Path
) -> None:
    # Hostile first: the depth is measured before the parser would see the stray comma.
    past_limit = "[," + "[" * MAX_DEPTH + "]" * (MAX_DEPTH + 1)
    path = write_lines(tmp_path / "deep.jsonl", [FIRST, past_limit])
    loaded = _load(wh, path)
    assert (loaded.records, loaded.truncated, loaded.too_deep) == (2, 0, 1)


def test_nan_and_infinity_are_not_json_so_such_lines_are_truncated_not_loaded(
    wh: Warehouse, tmp_path: Path
) -> None:
    # Python's json reads these constants by default; they are not JSON (RFC 8259).
    lines = [FIRST] + [
        FIRST[:-1] + f', "queue_wait_ms": {constant}}}'
        for constant in ("NaN", "Infinity", "-Infinity")
    ]
    loaded = _load(wh, write_lines(tmp_path / "nan.jsonl", lines))
    assert (loaded.records, loaded.loaded, loaded.truncated) == (4, 1, 3)
    assert wh.one('SELECT count(*) FROM "run_googleapis_com_stdout"') == (1,)


def test_a_lone_surrogate_inside_a_list_makes_the_line_undecodable(
    wh: Warehouse, tmp_path: Path
) -> None:
    # A JSON escape, not raw bytes: the file itself is valid UTF-8.
    hidden = FIRST[:-1] + ', "invalid_fields": ["lane", ["\\ud800"]]}'
    loaded = _load(wh, write_lines(tmp_path / "surrogate.jsonl", [FIRST, hidden]))
    assert (loaded.records, loaded.loaded, loaded.undecodable) == (2, 1, 1)


def test_a_bom_inside_a_file_is_skipped_before_its_line_is_classified(
    wh: Warehouse, tmp_path: Path
) -> None:
    # Files concatenated (cat a.log b.log): each may start with its own BOM.
    path = write_lines(
        tmp_path / "joined.log", [FIRST, "\ufeffservice started on :8080", "\ufeff" + FIRST]
    )
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.text, loaded.truncated) == (3, 2, 1, 0)


def test_array_elements_are_numbered_from_one_whatever_their_kind(tmp_path: Path) -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    oversized = json.dumps("x" * MAX_RECORD)
    path = tmp_path / "export.json"
    path.write_text(f'[{{"a": 1}}, {oversized}, {deep}, 7]')
    assert _found(path) == [
        (Kind.OTHER_JSON, 1),
        (Kind.OVERSIZED, 2),
        (Kind.TOO_DEEP, 3),
        (Kind.OTHER_JSON, 4),
    ]


def test_a_gzipped_export_cut_inside_an_element_says_which_element(
    wh: Warehouse, tmp_path: Path
) -> None:
    text = json.dumps([entry("chat_turn", tier="public"), entry("chat_turn", tier="admin")])
    whole, lost = text[:-40].encode(), text[-40:].encode()  # the second entry broke off
    loaded = _load(wh, _cut_gzip(tmp_path / "export.json.gz", whole, lost))
    assert (loaded.layout, loaded.records, loaded.loaded, loaded.truncated) == ("array", 2, 1, 1)
    assert loaded.cut_at == 2


def test_a_gzipped_export_cut_between_two_arrays_loads_the_first_and_counts_the_cut(
    wh: Warehouse, tmp_path: Path
) -> None:
    # `gcloud logging read --format=json` twice into one file (>>), gzipped, cut off
    # exactly where the second array would start.
    first = json.dumps([entry("chat_turn", tier="public"), entry("chat_turn", tier="admin")])
    second = json.dumps([entry("chat_turn", tier="premium", timestamp=TIME)])
    path = _cut_gzip(tmp_path / "twice.json.gz", f"{first}\n".encode(), f"{second}\n".encode())
    loaded = _load(wh, path)
    assert (loaded.records, loaded.loaded, loaded.truncated, loaded.undecodable) == (3, 2, 1, 0)
    assert loaded.cut_at == 3  # the record after the last whole one


def test_a_pipe_reports_no_size_to_the_progress_bar(wh: Warehouse, tmp_path: Path) -> None:
    class Sizes:
        def __init__(self) -> None:
            self.sizes: list[int] = []

        def start_file(self, label: str, size: int) -> None:
            self.sizes.append(size)

        def update(self, done: int) -> None:
            pass

        def finish_file(self) -> None:
            pass

    # Its length is unknown until read: the bar then only names the file.
    sizes = Sizes()
    with fifo_with(tmp_path / "pipe", f"{FIRST}\n".encode()) as pipe:
        assert wh.load([pipe], progress=sizes).loaded == 1
    assert sizes.sizes == [0]


BOM = codecs.BOM_UTF8


def _arrays_joined_by_a_bom(tmp_path: Path) -> Path:
    """`cat a.json b.json`, b saved by an editor with a BOM: a BOM between two arrays."""
    a = json.dumps([entry("chat_turn", tier="public")], indent=2).encode()
    b = json.dumps(
        [entry("chat_turn", tier="admin"), entry("chat_turn", tier="premium")], indent=2
    ).encode()
    path = tmp_path / "joined.json"
    path.write_bytes(a + b"\n" + BOM + b)
    return path


def test_arrays_joined_with_a_bom_between_them_load_every_entry(
    wh: Warehouse, tmp_path: Path
) -> None:
    # As the lines reader does: a BOM inside the file means files were concatenated.
    loaded = _load(wh, _arrays_joined_by_a_bom(tmp_path))
    assert loaded.layout == "array"
    assert (loaded.records, loaded.loaded, loaded.truncated) == (3, 3, 0)


def test_a_bom_split_across_reads_between_two_arrays_is_still_a_bom(tmp_path: Path) -> None:
    # The reader hands the splitter chunks; one may end a byte or two into the BOM.
    data = _arrays_joined_by_a_bom(tmp_path).read_bytes()
    at = data.index(BOM)
    for cut in (at + 1, at + 2):
        splitter = ArraySplitter(MAX_RECORD)
        pieces = [*splitter.feed(data[:cut]), *splitter.feed(data[cut:]), *splitter.finish()]
        assert [type(p) for p in pieces] == [Element] * 3, cut


def test_a_stray_piece_of_a_bom_after_the_last_array_is_trailing_text() -> None:
    data = json.dumps([entry("chat_turn", tier="public")]).encode() + BOM[:2]
    splitter = ArraySplitter(MAX_RECORD)
    pieces = [*splitter.feed(data), *splitter.finish()]
    assert [type(p) for p in pieces] == [Element, Broken]
    assert pieces[-1] == Broken("trailing")
