"""preview and check-logs against each other and against the generator's truth, per file,
over a seeded corpus of every supported format (tests/warehouse/corpus.py).

Per file: the same records counted under the same kinds by both; per event, the lines
check-logs checks and the rows the views show; per field, the lines check-logs calls
valid and the view's non-null values. All equal the truth the generator recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.schema import catalogue
from agent_telemetry.schema.envelope import NOT_A_FIELD
from agent_telemetry.views import QUALITY_VIEW
from agent_telemetry.warehouse import FileLoad, Warehouse, check_logs
from agent_telemetry.warehouse._checking.check_logs import FileCheck, LogCheckReport
from agent_telemetry.warehouse._sink.duckdb_types import quote_identifier
from tests.warehouse.corpus import CorpusFile, Truth, corpus

CORPUS = corpus()
SPECS = catalogue()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("corpus")
    paths = {}
    for item in CORPUS:
        path = directory / item.name
        path.write_bytes(item.data)
        paths[item.name] = path
    return paths


def _views(wh: Warehouse) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    rows: dict[str, int] = {}
    non_null: dict[tuple[str, str], int] = {}
    for spec in SPECS:
        view = quote_identifier(spec.name)
        counts = ", ".join(f"count({quote_identifier(f.name)})" for f in spec.fields)
        total, *fields = wh.one(f"SELECT count(*), {counts} FROM {view}")
        rows[spec.name] = int(total)
        for field_spec, count in zip(spec.fields, fields, strict=True):
            non_null[(spec.name, field_spec.name)] = int(count)
    return rows, non_null


def _counts(record: FileLoad | FileCheck) -> dict[str, int]:
    names = ("records", "truncated", "oversized", "too_deep", "undecodable", "duplicates")
    counts = {name: getattr(record, name) for name in names}
    if isinstance(record, FileLoad):
        counts["telemetry"] = record.loaded
        counts["non_telemetry"] = record.text + record.other_json
    else:
        counts["telemetry"] = record.telemetry
        counts["non_telemetry"] = record.non_telemetry
    return counts


def _truth_counts(truth: Truth) -> dict[str, int]:
    return {
        "records": truth.records,
        "truncated": truth.truncated,
        "oversized": truth.oversized,
        "too_deep": truth.too_deep,
        "undecodable": truth.undecodable,
        "duplicates": truth.duplicates,
        "telemetry": truth.telemetry,
        "non_telemetry": truth.text + truth.other_json,
    }


def _check(path: Path) -> tuple[LogCheckReport, dict[str, Any]]:
    report = check_logs([path])
    lines = {name: check.lines for name, check in report.events.items()}
    rows = {name: check.versions[1] for name, check in report.events.items()}
    valid = {
        (name, field_name): coverage.valid
        for name, check in report.events.items()
        for field_name, coverage in check.coverage.items()
    }
    return report, {"lines": lines, "rows": rows, "valid": valid}


def _expected(truth: Truth) -> dict[str, Any]:
    return {
        "lines": {spec.name: truth.lines[spec.name] for spec in SPECS},
        "rows": {spec.name: truth.rows[spec.name] for spec in SPECS},
        "valid": {(s.name, f.name): truth.valid[(s.name, f.name)] for s in SPECS for f in s.fields},
    }


def test_the_corpus_holds_every_format_and_kind() -> None:
    names = {item.name for item in CORPUS}
    assert len(names) == len(CORPUS) == 18
    total = Truth()
    for item in CORPUS:
        for name in ("telemetry", "text", "other_json", "truncated", "oversized", "too_deep"):
            setattr(total, name, getattr(total, name) + getattr(item.truth, name))
        total.undecodable += item.truth.undecodable
        total.duplicates += item.truth.duplicates
        total.conflicting += item.truth.conflicting
        total.coerced.update(item.truth.coerced)
    for name in ("telemetry", "text", "other_json", "truncated", "oversized", "too_deep"):
        assert getattr(total, name) > 0, name
    assert total.undecodable
    assert total.duplicates
    assert total.conflicting
    assert set(total.coerced) == {"numbers_as_strings", "booleans_as_strings", "integral_doubles"}


@pytest.mark.parametrize("item", CORPUS, ids=[item.name for item in CORPUS])
def test_preview_and_check_logs_agree_with_the_truth(
    item: CorpusFile, written: dict[str, Path]
) -> None:
    path = written[item.name]
    with Warehouse() as wh:
        load = wh.load([path])
        (loaded,) = load.files
        wh.create_views()
        rows, non_null = _views(wh)
        stored = wh.one("SELECT count(*) FROM run_googleapis_com_stdout")
        (quality,) = wh.one(
            f"SELECT sum(conflicting_duplicates) FROM {QUALITY_VIEW} WHERE field = '{NOT_A_FIELD}'"
        )
    report, checked = _check(path)
    (check_file,) = report.files

    truth = item.truth
    assert _counts(loaded) == _truth_counts(truth)
    assert _counts(check_file) == _truth_counts(truth)
    assert stored == (truth.telemetry,)
    assert checked == _expected(truth)
    assert {c.value: n for c, n in report.coerced.items() if n} == dict(truth.coerced)
    # Copies of one entry that disagree: the same count from the loader, check-logs and
    # telemetry_quality (its rows of version-1 lines; this corpus's conflicts are all so).
    assert load.conflicting == report.conflicting == truth.conflicting
    assert (quality or 0) == truth.conflicting
    assert report.clean is False if truth.conflicting else True
    assert rows == _expected(truth)["rows"]
    assert non_null == _expected(truth)["valid"]


def test_the_views_count_a_duplicated_entry_once(written: dict[str, Path]) -> None:
    (item,) = [item for item in CORPUS if item.duplicates]
    assert item.truth.duplicates > 0
    with Warehouse() as wh:
        wh.load([written[item.name]])
        wh.create_views()
        rows, non_null = _views(wh)
    assert rows == _expected(item.truth)["rows"]
    assert non_null == _expected(item.truth)["valid"]
