"""Reviewed exceptions to the definition rules are never silent: a cardinality waiver
and a reviewed name are recorded in the lock, shown by ``check`` as notices with their
reason and place, and listed in the data dictionary."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_telemetry.check import render, run_check
from agent_telemetry.config import load_config
from agent_telemetry.schema import event_spec
from agent_telemetry.schema.compat import compare
from agent_telemetry.schema.lock import build_lock, dump_lock, load_lock, lock_json
from agent_telemetry.views import generate_views
from agent_telemetry.views._docs import data_dictionary
from tests.conftest import EXAMPLE_CONFIG

WAIVER = "bytes of an upload; analysts bucket it in SQL"
REVIEW = "the keyboard key pressed, one of a closed set; not a credential"

MODELS = '''
from typing import ClassVar, Literal

from pydantic import Field

from agent_telemetry.schema import TelemetryEvent, count


class UploadDone(TelemetryEvent):
    """One line per finished upload."""

    event_name: ClassVar[str] = "upload_done"
    schema_version: ClassVar[int] = 1
    reviewed_names: ClassVar[dict[str, str]] = {"pressed_key": "REVIEW"}

    upload_bytes: int | None = count(0, 2**40, "Bytes uploaded.", waiver="WAIVER")
    pressed_key: Literal["enter", "escape"] | None = Field(None, description="Key pressed.")


EVENTS = {"upload_done": UploadDone}
'''.replace("WAIVER", WAIVER).replace("REVIEW", REVIEW)


@pytest.fixture
def reviewed_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    (tmp_path / "reviewed_models.py").write_text(textwrap.dedent(MODELS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import reviewed_models  # type: ignore[import-not-found]

    yield reviewed_models
    sys.modules.pop("reviewed_models", None)


def test_the_spec_and_the_lock_record_both_reasons(reviewed_models: object) -> None:
    spec = event_spec(reviewed_models.UploadDone)  # type: ignore[attr-defined]
    assert spec.field("upload_bytes").waiver == WAIVER
    assert spec.field("pressed_key").name_review == REVIEW
    lock = build_lock([spec])
    fields = lock_json(lock)["events"]["upload_done"]["1"]["fields"]
    assert fields[0]["cardinality_waiver"] == WAIVER
    assert fields[1]["name_review"] == REVIEW
    assert "name_review" not in fields[0]
    assert "cardinality_waiver" not in fields[1]
    assert load_lock(dump_lock(lock)) == lock  # read back whole


def test_a_changed_reason_changes_the_lock_but_no_reader(reviewed_models: object) -> None:
    spec = event_spec(reviewed_models.UploadDone)  # type: ignore[attr-defined]
    before = build_lock([spec])
    data = lock_json(before)
    data["events"]["upload_done"]["1"]["fields"][0]["cardinality_waiver"] = "another reason"
    after = load_lock(__import__("json").dumps(data))
    assert dump_lock(after) != dump_lock(before)
    assert compare(before, after) == ()


def test_check_shows_each_reviewed_exception_as_a_notice(
    reviewed_models: object, tmp_path: Path
) -> None:
    lock_path = tmp_path / "schema.lock.json"
    spec = event_spec(reviewed_models.UploadDone)  # type: ignore[attr-defined]
    lock_path.write_text(dump_lock(build_lock([spec])), encoding="utf-8")
    report = run_check(
        EXAMPLE_CONFIG, models_module="reviewed_models", lock_path=lock_path, views=False
    )
    assert report.exit_code == 0, render(report, "text")
    notices = [f for f in report.findings if f.stage == "definition"]
    assert [(f.severity, f.rule, f.event, f.field) for f in notices] == [
        ("notice", "INT_CARDINALITY", "upload_done", "upload_bytes"),
        ("notice", "FIELD_NAME_NO_IDENTIFIER", "upload_done", "pressed_key"),
    ]
    assert WAIVER in notices[0].message
    assert "0 .. 1,099,511,627,776" in notices[0].message
    assert REVIEW in notices[1].message
    source = (tmp_path / "reviewed_models.py").read_text(encoding="utf-8").splitlines()
    assert source[notices[0].line - 1].lstrip().startswith("upload_bytes:")  # type: ignore[operator]
    text = render(report, "text")
    assert "notice: INT_CARDINALITY upload_done.upload_bytes (v1)" in text
    assert "::notice file=" in render(report, "github")


def test_the_data_dictionary_lists_them_with_their_reasons(reviewed_models: object) -> None:
    spec = event_spec(reviewed_models.UploadDone)  # type: ignore[attr-defined]
    config = load_config(EXAMPLE_CONFIG)
    views = generate_views(config, specs=(spec,))
    text = data_dictionary(config, views, (spec,))
    section = text.split("## Reviewed exceptions", 1)[1]
    waived = "INT_CARDINALITY (0 .. 1,099,511,627,776)"
    assert f"| `upload_done` v1 | `upload_bytes` | {waived} | {WAIVER} |" in section
    assert f"| `upload_done` v1 | `pressed_key` | FIELD_NAME_NO_IDENTIFIER | {REVIEW} |" in section


def test_the_committed_dictionary_has_no_such_section() -> None:
    # The catalogue needs neither a waiver nor a reviewed name.
    text = (Path(__file__).parents[2] / "docs" / "telemetry.md").read_text(encoding="utf-8")
    assert "## Reviewed exceptions" not in text


COHORTS = '''
from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import Field

from agent_telemetry.schema import DataReview, TelemetryEvent
from agent_telemetry.schema.spec import CardinalityWaiver

NAMES = [f"region_{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(80)]
Region = StrEnum("Region", {name.upper(): name for name in NAMES})


class RegionSeen(TelemetryEvent):
    """One line per region seen."""

    event_name: ClassVar[str] = "region_seen"
    schema_version: ClassVar[int] = 1
    data_reviews: ClassVar[tuple[DataReview, ...]] = (
        DataReview("issue 9", "regions", 7.4, "region_seen", 1),
    )

    region: Annotated[Region, CardinalityWaiver("80 sales regions")] | None = Field(
        None, description="Region."
    )


EVENTS = {"region_seen": RegionSeen}
'''


def test_an_enum_waiver_and_a_data_review_are_listed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cohort_models.py").write_text(COHORTS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import cohort_models  # type: ignore[import-not-found]

        spec = event_spec(cohort_models.RegionSeen)
    finally:
        sys.modules.pop("cohort_models", None)
    config = load_config(EXAMPLE_CONFIG)
    text = data_dictionary(config, generate_views(config, specs=(spec,)), (spec,))
    assert "| `region_seen` v1 | `region` | ENUM_SIZE (" in text
    assert (
        "Capacity: 7.4 bits per line as written (budget 64): `region` 6.4; "
        "envelope `unknown_fields` 1.0."
    ) in text
    assert "Data review issue 9: up to 7.4 bits (regions)." in text
    locked = build_lock([spec]).events["region_seen"][1]
    assert [(r.reference, r.bits, r.event) for r in locked.data_reviews] == [
        ("issue 9", 7.4, "region_seen")
    ]
