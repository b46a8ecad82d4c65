"""lane_health on DuckDB, from hand-made logs: a busy healthy lane is never flagged, and
each part of looks_dead, the windows, the last known state and the p95 hold at their edges.

Every case is a log of emitter lines loaded into the local warehouse and read back through
the generated view (transpiled from the committed BigQuery SQL), never a copy of its logic.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_telemetry.warehouse import Warehouse, default_config
from tests.warehouse.lines import line, write_lines

T0 = datetime(2026, 5, 9, 9, 0, tzinfo=UTC)


def at(offset: timedelta) -> str:
    return (T0 + offset).isoformat(timespec="microseconds").replace("+00:00", "Z")


def run(offset: timedelta, provider: str = "openai", **fields: Any) -> str:
    fields = {"lane": "public", "status": "ok", **fields}
    return line("pipeline_run", time=at(offset), provider=provider, **fields)


def status(offset: timedelta, state: str, provider: str = "openai") -> str:
    return line(
        "provider_status", time=at(offset), provider=provider, state=state, probe="preflight"
    )


@pytest.fixture(scope="module")
def lanes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warehouse]:
    """One warehouse, its views created once; each test loads its own log into it (a load
    replaces the sink table, and the views read it by name)."""
    with Warehouse(config=default_config()) as wh:
        wh.load([write_lines(tmp_path_factory.mktemp("lanes") / "empty.jsonl", [])])
        wh.create_views()
        yield wh


def lane_health(wh: Warehouse, path: Path, lines: list[str]) -> dict[tuple[str, datetime], Any]:
    wh.load([write_lines(path, lines)])
    rows = wh.rows(
        "SELECT provider, window_start, state, runs_ended, runs_ok, runs_rate_limited, "
        "runs_stalled, queue_wait_p95_ms, looks_dead FROM lane_health"
    )
    return {(r[0], r[1]): r[2:] for r in rows}


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def test_a_busy_healthy_lane_is_never_flagged(lanes: Warehouse, tmp_path: Path) -> None:
    """Three hours of a busy lane: a run ends every 20 s, most ok, the rest failed for
    validation (some windows have no ok run at all), the lane live, and an hour before any
    provider_status line (state unknown)."""
    rnd = random.Random(30)
    lines = [status(minutes(60), "live")] + [status(minutes(m), "live") for m in range(90, 180, 30)]
    for second in range(0, 3 * 3600, 20):
        ok = rnd.random() < 0.7 and not (70 <= second // 60 < 80) and not (5 <= second // 60 < 10)
        fields = (
            {} if ok else {"status": "failed", "reason": "validation", "error_class": "validation"}
        )
        lines.append(run(timedelta(seconds=second), queue_wait_ms=rnd.randint(0, 90_000), **fields))
    rows = lane_health(lanes, tmp_path / "busy.jsonl", lines)
    assert len(rows) == 36  # every 5-minute window of the three hours
    assert sum(r[1] for r in rows.values()) == 3 * 3600 // 20
    assert not any(r[-1] for r in rows.values())
    no_ok = [w for w, r in rows.items() if r[1] > 0 and r[2] == 0]
    assert len(no_ok) >= 3  # windows where every run failed validation: still not dead
    assert {rows[w][0] for w in no_ok} == {None, "live"}


def test_each_part_of_looks_dead(lanes: Warehouse, tmp_path: Path) -> None:
    failed = {"status": "failed", "reason": "error", "error_class": "rate_limited"}
    stalled = {"status": "failed", "reason": "stalled"}
    lines = [
        run(minutes(1), "anthropic", **failed),  # 09:00 state unknown, failed: not dead
        run(minutes(6), "anthropic", **stalled),  # 09:05 unknown but stalled: dead
        status(minutes(10), "rate_limited", "anthropic"),  # 09:10 no runs: not dead
        run(minutes(16), "anthropic", **failed),  # 09:15 carried rate_limited, failed: dead
        run(minutes(21), "anthropic", **failed),  # 09:20 ... and one ok: not dead
        run(minutes(22), "anthropic"),
        status(minutes(26), "live", "anthropic"),  # 09:25 live, stalled and failed: dead
        run(minutes(27), "anthropic", **stalled),
        run(minutes(28), "anthropic", **failed),
        run(minutes(31), "anthropic", **failed),  # 09:30 live carried, failed: not dead
    ]
    rows = lane_health(lanes, tmp_path / "parts.jsonl", lines)
    dead = {w.strftime("%H:%M"): r[-1] for (p, w), r in rows.items() if p == "anthropic"}
    assert dead == {
        "09:00": False,
        "09:05": True,
        "09:10": False,
        "09:15": True,
        "09:20": False,
        "09:25": True,
        "09:30": False,
    }
    state = {w.strftime("%H:%M"): r[0] for (p, w), r in rows.items()}
    assert state["09:00"] is None
    assert state["09:05"] is None
    assert state["09:15"] == "rate_limited"
    assert state["09:30"] == "live"


def test_the_state_is_the_newest_line_up_to_the_window_end(
    lanes: Warehouse, tmp_path: Path
) -> None:
    lines = [
        status(minutes(0.5), "no_quota"),
        status(minutes(4), "live"),  # same window, newer: live wins
        status(minutes(6), "unreachable"),
        run(minutes(9)),
        status(minutes(12), "live", provider="vertex"),  # another lane changes nothing here
        run(minutes(14)),
    ]
    rows = lane_health(lanes, tmp_path / "state.jsonl", lines)
    openai = {w.strftime("%H:%M"): r[0] for (p, w), r in rows.items() if p == "openai"}
    assert openai == {"09:00": "live", "09:05": "unreachable", "09:10": "unreachable"}
    assert rows[("vertex", T0 + minutes(10))][0] == "live"


def test_windows_split_at_the_microsecond(lanes: Warehouse, tmp_path: Path) -> None:
    lines = [
        run(timedelta(minutes=4, seconds=59, microseconds=999_999)),
        run(minutes(5)),
        run(timedelta(minutes=59, seconds=59, microseconds=999_999)),
    ]
    rows = lane_health(lanes, tmp_path / "edges.jsonl", lines)
    assert sorted((w - T0, r[1]) for (_, w), r in rows.items()) == [
        (minutes(0), 1),
        (minutes(5), 1),
        (minutes(55), 1),
    ]


def test_queue_wait_p95_is_the_nearest_rank(lanes: Warehouse, tmp_path: Path) -> None:
    lines = [run(minutes(1), queue_wait_ms=w) for w in range(1, 21)]  # 20 waits: rank 19
    lines += [run(minutes(2))]  # no wait: not ranked
    lines += [run(minutes(6), queue_wait_ms=7)]  # one wait: itself
    lines += [run(minutes(11))]  # none: NULL
    lines += [run(minutes(16), queue_wait_ms=w) for w in (5, 5, 9)]  # 3 waits: rank 3
    rows = lane_health(lanes, tmp_path / "p95.jsonl", lines)
    p95 = {w.strftime("%H:%M"): r[-2] for (_, w), r in rows.items()}
    assert p95 == {"09:00": 19, "09:05": 7, "09:10": None, "09:15": 9}


def test_runs_without_a_provider_belong_to_no_lane(lanes: Warehouse, tmp_path: Path) -> None:
    lines = [
        line("pipeline_run", time=at(minutes(1)), lane="public", status="failed", reason="stalled")
    ]
    assert lane_health(lanes, tmp_path / "none.jsonl", lines) == {}
