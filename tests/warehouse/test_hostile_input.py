"""Hostile files: each lands in its own category (too_deep, oversized, undecodable) in
both commands, with the exit status the report promises and never a traceback; memory
stays bounded by the record limit; each input is read once."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agent_telemetry.cli import main
from agent_telemetry.warehouse import Warehouse, check_logs
from agent_telemetry.warehouse._reading.records import MAX_DEPTH, Kind, iter_records
from agent_telemetry.warehouse._reading.source import CHUNK, MAX_RECORD, LogInput
from tests.warehouse.lines import entry, line, write_lines

WIDE = {"COLUMNS": "300"}  # rich never shortens a cell


def _invoke(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], env=WIDE)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def _check_json(path: Path) -> dict[str, Any]:
    result = _invoke("check-logs", "--format", "json", path)
    report: dict[str, Any] = json.loads(result.output)
    report["exit_code"] = result.exit_code
    return report


def _categories(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(preview's counts, check-logs' counts) of the hostile categories, via the APIs."""
    names = ("records", "oversized", "too_deep", "undecodable", "truncated")
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    return (
        {n: getattr(loaded, n) for n in names} | {"telemetry": loaded.loaded},
        {n: getattr(checked, n) for n in names} | {"telemetry": checked.telemetry},
    )


def test_five_thousand_brackets_are_one_too_deep_record_in_both_commands(tmp_path: Path) -> None:
    # python3 -c "print('['*5000+']'*5000)" > n.jsonl
    path = tmp_path / "n.jsonl"
    path.write_text("[" * 5000 + "]" * 5000 + "\n")
    preview = _invoke("preview", path)
    assert preview.exit_code == 1  # no telemetry: warned, exit 1
    assert "too deep" in preview.output
    assert "warning: no telemetry lines found" in preview.output
    report = _check_json(path)
    assert report["exit_code"] == 1
    (checked,) = report["files"]
    assert (checked["records"], checked["too_deep"], checked["truncated"]) == (1, 1, 0)
    assert _categories(path)[0] == _categories(path)[1]


def test_a_deep_element_of_a_gcloud_array_is_too_deep_and_the_rest_loads(tmp_path: Path) -> None:
    entries: list[Any] = [entry("pipeline_run", lane="public", status="ok") for _ in range(3)]
    text = json.dumps(entries, indent=2)  # json.dumps cannot write 5000 levels: splice it in
    deep = "[" * 5000 + "]" * 5000
    path = tmp_path / "export.json"
    path.write_text(text[:-2] + ',\n  {"labels": ' + deep + "}\n]")
    preview = _invoke("preview", path)
    assert preview.exit_code == 0, preview.output
    loaded, checked = _categories(path)
    assert (
        loaded
        == checked
        == {
            "records": 4,
            "oversized": 0,
            "too_deep": 1,
            "undecodable": 0,
            "truncated": 0,
            "telemetry": 3,
        }
    )


@pytest.mark.parametrize("layout", ["lines", "array"])
def test_the_depth_limit_is_the_same_for_a_line_and_an_element(tmp_path: Path, layout: str) -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    over = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    path = tmp_path / "deep.json"
    if layout == "lines":
        path.write_text(f"{at_limit}\n{over}\n")
    else:  # the element's own depth counts, not the array around it
        path.write_text(f"[\n{at_limit},\n{over}\n]\n")
    with LogInput(path) as log:
        assert log.layout == layout
        kinds = [record.kind for record in iter_records(log)]
    assert kinds == [Kind.OTHER_JSON, Kind.TOO_DEEP]


@pytest.mark.parametrize("layout", ["lines", "array"])
def test_a_record_just_over_the_limit_is_oversized_in_both_commands(
    tmp_path: Path, layout: str
) -> None:
    good = line("pipeline_run", lane="public", status="ok")
    head = '{"textPayload": "'
    fits = head + "x" * (MAX_RECORD - len(head) - 2) + '"}'
    over = head + "x" * (MAX_RECORD + 1 - len(head) - 2) + '"}'
    assert (len(fits), len(over)) == (MAX_RECORD, MAX_RECORD + 1)
    path = tmp_path / "big.json"
    if layout == "lines":
        write_lines(path, [good, over, fits, good])
    else:
        path.write_text("[\n" + ",".join([good, over, fits, good]) + "\n]")
    loaded, checked = _categories(path)
    assert (
        loaded
        == checked
        == {
            "records": 4,
            "oversized": 1,
            "too_deep": 0,
            "undecodable": 0,
            "truncated": 0,
            "telemetry": 2,
        }
    )
    preview = _invoke("preview", path)
    assert preview.exit_code == 0, preview.output
    assert "oversized" in preview.output


def test_reading_a_long_line_holds_no_more_than_the_record_limit(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    with path.open("wb") as out:  # a 24 MiB line, then a telemetry line
        out.write(b'{"textPayload": "')
        for _ in range(24):
            out.write(b"x" * (1 << 20))
        out.write(b'"}\n' + line("chat_turn", tier="public", kind="text").encode() + b"\n")
    tracemalloc.start()
    try:
        with LogInput(path) as log:
            kinds = [record.kind for record in iter_records(log)]
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kinds == [Kind.OVERSIZED, Kind.TELEMETRY]
    # A chunk being split, the record being gathered and a copy: never the whole line.
    assert peak < 2 * MAX_RECORD + 3 * CHUNK, peak


@pytest.mark.parametrize(
    "where", ["labels", "payload", "key"], ids=["in-labels", "in-payload", "in-a-key"]
)
def test_a_lone_surrogate_anywhere_makes_the_record_undecodable_in_both(
    tmp_path: Path, where: str
) -> None:
    record = entry("pipeline_run", lane="public", status="ok")
    text = json.dumps(record)
    if where == "labels":
        text = text.replace('"agent"', '"a\\ud800"')
    elif where == "payload":
        text = text.replace('"status": "ok"', '"status": "ok", "note": "\\udc00x"')
    else:
        text = text.replace('"status"', '"\\ud800": 1, "status"')
    path = write_lines(tmp_path / "lone.jsonl", [text, json.dumps(record)])
    loaded, checked = _categories(path)
    assert loaded == checked
    assert (loaded["undecodable"], loaded["telemetry"]) == (1, 1)


def test_invalid_utf8_inside_json_is_undecodable_but_text_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "bytes.jsonl"
    path.write_bytes(
        b'{"event": "pipeline_run", "schema_version": 1, "lane": "\xff"}\n'
        b"caf\xe9 opened\n" + line("pipeline_run", lane="admin", status="ok").encode() + b"\n"
    )
    with Warehouse() as wh:
        (loaded,) = wh.load([path]).files
    (checked,) = check_logs([path]).files
    assert (loaded.undecodable, loaded.text, loaded.loaded) == (1, 1, 1)
    assert (checked.undecodable, checked.non_telemetry, checked.telemetry) == (1, 1, 1)


def test_a_file_replaced_while_it_loads_is_counted_as_it_was_opened(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "a.jsonl",
        [line("pipeline_run", lane="public", status="ok")] * 3 + ["plain text"] * 2,
    )
    replacement = write_lines(tmp_path / "b.jsonl", ['{"other": 1}'] * 9)

    class Replacing:
        """Replaces the file when its load starts: one snapshot is read."""

        def start_file(self, label: str, size: int) -> None:
            os.replace(replacement, path)

        def update(self, done: int) -> None:
            pass

        def finish_file(self) -> None:
            pass

    with Warehouse() as wh:
        (loaded,) = wh.load([path], progress=Replacing()).files
    assert (loaded.records, loaded.loaded, loaded.text, loaded.other_json) == (5, 3, 2, 0)


def test_a_file_rewritten_in_place_while_it_loads_still_adds_up(tmp_path: Path) -> None:
    lines = [line("pipeline_run", lane="public", status="ok", queue_wait_ms=n) for n in range(5)]
    path = write_lines(tmp_path / "a.jsonl", lines * 40_000)  # several read chunks

    class Rewriting:
        def __init__(self) -> None:
            self.done = False

        def start_file(self, label: str, size: int) -> None:
            pass

        def update(self, done: int) -> None:
            if not self.done:  # truncate and rewrite under the reader
                self.done = True
                path.write_text('{"other": 1}\n' * 10)

        def finish_file(self) -> None:
            pass

    with Warehouse() as wh:
        (loaded,) = wh.load([path], progress=Rewriting()).files
        (stored,) = wh.one("SELECT count(*) FROM run_googleapis_com_stdout")
    kinds = (loaded.loaded, loaded.text, loaded.truncated, loaded.other_json, loaded.oversized)
    assert min(kinds) >= 0
    assert loaded.records == sum(kinds) + loaded.too_deep + loaded.undecodable
    assert stored == loaded.loaded


@pytest.mark.parametrize("command", ["preview", "check-logs"])
def test_input_without_telemetry_warns_and_exits_one(tmp_path: Path, command: str) -> None:
    path = write_lines(tmp_path / "service.log", ["INFO booting", '{"event": "request"}'])
    result = _invoke(command, path)
    assert result.exit_code == 1
    assert "warning: no telemetry lines found" in result.output
