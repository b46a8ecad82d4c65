"""Every input sample in docs/analyst-guide.md reads as the guide says, in both commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_telemetry.schema import catalogue
from agent_telemetry.warehouse import Warehouse, check_logs
from tests.conftest import REPO

GUIDE = REPO / "docs" / "analyst-guide.md"
SAMPLE = re.compile(
    r"<!-- sample: (?P<name>\S+) telemetry=(?P<telemetry>\d+) -->\n```json\n(?P<body>.*?)```",
    re.S,
)
SAMPLES = list(SAMPLE.finditer(GUIDE.read_text(encoding="utf-8")))


def test_the_guide_has_a_sample_of_every_format() -> None:
    assert len(SAMPLES) == 6  # emitter, sink file, gcloud, bq query, bq extract, _AllLogs


@pytest.mark.parametrize("sample", SAMPLES, ids=[m["name"] for m in SAMPLES])
def test_a_sample_is_telemetry_valid_and_in_the_views(
    sample: re.Match[str], tmp_path: Path
) -> None:
    path = tmp_path / sample["name"]
    path.write_text(sample["body"], encoding="utf-8")
    expected = int(sample["telemetry"])
    report = check_logs([path])
    assert (report.telemetry, report.clean) == (expected, True)
    with Warehouse() as wh:
        assert wh.load([path]).loaded == expected
        wh.create_views()
        rows = sum(wh.one(f"SELECT count(*) FROM {spec.name}")[0] for spec in catalogue())
    assert rows == expected
