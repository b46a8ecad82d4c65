"""The demo's two outages, as lane_health sees them: looks_dead is true in exactly the
windows of the rate-limit outage (anthropic) and the silent one (vertex), never outside.

What counts as an outage comes from the workload's own clock (``OUTAGE``, ``QUOTA_OUT``,
``REAP_AFTER``) and what ended where from the raw log lines, not from the view.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import duckdb
import orjson

from agent_telemetry.demo import DemoResult
from agent_telemetry.demo._report import LANES_TITLE, flagged_lanes
from agent_telemetry.demo._workload import OUTAGE, PROVIDER, QUOTA_OUT, REAP_AFTER, START

WINDOW = timedelta(minutes=5)


def _at(ms: int) -> datetime:
    return START + timedelta(milliseconds=ms)


def _window(when: datetime) -> datetime:
    return when.replace(minute=when.minute - when.minute % 5, second=0, microsecond=0)


# When each provider could not serve (sim time), and until when its runs could still end
# hit by it: a rate-limited run fails at its next call; a silent one is reaped REAP_AFTER
# after it started, so up to REAP_AFTER past the quota's return.
DOWN = {
    "anthropic": (_at(OUTAGE[0]), _at(OUTAGE[1]), _at(OUTAGE[1])),
    "vertex": (_at(QUOTA_OUT[0]), _at(QUOTA_OUT[1]), _at(QUOTA_OUT[1] + REAP_AFTER)),
}


def _flagged(result: DemoResult) -> dict[tuple[str, datetime], bool]:
    with duckdb.connect(str(result.database), read_only=True) as con:
        rows = con.execute("SELECT provider, window_start, looks_dead FROM lane_health").fetchall()
    return {(p, w.astimezone(UTC)): dead for p, w, dead in rows}


def _runs_ended(result: DemoResult) -> Counter[tuple[str, datetime]]:
    """pipeline_run lines per provider and window, read from the log itself."""
    ended: Counter[tuple[str, datetime]] = Counter()
    for raw in result.log.read_bytes().splitlines():
        record = orjson.loads(raw)
        if record["event"] == "pipeline_run":
            ended[record["provider"], _window(datetime.fromisoformat(record["time"]))] += 1
    return ended


def test_every_run_says_its_provider_lane(demo_result: DemoResult) -> None:
    ended = _runs_ended(demo_result)
    assert {provider for provider, _ in ended} == set(PROVIDER.values())


def test_looks_dead_in_exactly_the_outage_windows(demo_result: DemoResult) -> None:
    flagged = {key for key, dead in _flagged(demo_result).items() if dead}
    ended = _runs_ended(demo_result)
    for provider, (down, back, last_hit) in DOWN.items():
        mine = {w for p, w in flagged if p == provider}
        assert mine, f"{provider}: its outage is never flagged"
        # Never outside: a flagged window overlaps the time the provider was down or its
        # runs were still being ended by it.
        assert all(down < w + WINDOW and w < last_hit for w in mine), provider
        # Every window wholly inside the outage in which runs ended on the lane is flagged.
        inside = {w for p, w in ended if p == provider and down <= w and w + WINDOW <= back}
        assert inside <= mine, (provider, sorted(inside - mine))
    other = {p for p, _ in flagged} - set(DOWN)
    assert not other


def test_the_flagged_windows_of_the_fixed_seed(demo_result: DemoResult) -> None:
    """Pinned for the seed `make demo` uses (the transcript in docs/analyst-local.md)."""
    flagged = sorted(
        (p, w.strftime("%H:%M")) for (p, w), dead in _flagged(demo_result).items() if dead
    )
    vertex = [f"{h:02d}:{m:02d}" for h, m in [(10, 45), (10, 50), (10, 55)]]
    vertex += [f"11:{m:02d}" for m in range(0, 25, 5)]
    assert flagged == [("anthropic", "09:05")] + [("vertex", w) for w in vertex]


def test_the_silent_lane_is_flagged_while_its_probe_says_live(demo_result: DemoResult) -> None:
    """The preflight probe never sees vertex's quota run out; stalled runs flag it anyway,
    in the window whose last known state is the probe's live."""
    with duckdb.connect(str(demo_result.database), read_only=True) as con:
        states = con.execute(
            "SELECT state, probe FROM provider_status WHERE provider = 'vertex' "
            "GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        live_but_dead = con.execute(
            "SELECT count(*) FROM lane_health WHERE provider = 'vertex' AND looks_dead "
            "AND state = 'live' AND runs_stalled > 0"
        ).fetchone()
    assert states == [("live", "preflight"), ("no_quota", "turn_outcome")]
    assert live_but_dead is not None
    assert live_but_dead[0] >= 1


def test_the_report_says_when_lane_health_flags_a_lane(demo_result: DemoResult) -> None:
    section = next(s for s in demo_result.sections if s.title == LANES_TITLE)
    assert [row[:3] for row in section.rows] == [
        ("09:05", "09:10", "anthropic"),
        ("10:45", "11:25", "vertex"),
    ]
    assert flagged_lanes(demo_result.sections) == (
        "lane_health flags a lane that looked busy but finished nothing: "
        "anthropic 09:05-09:10; vertex 10:45-11:25 UTC"
    )
