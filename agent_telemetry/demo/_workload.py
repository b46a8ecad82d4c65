"""The demo service: queued, rate-limited pipeline runs, told only through telemetry.

A morning of an AI-agent service on a simulated clock, with a fixed seed:
- three run lanes (public 2 slots, premium 2, admin 5 with a 10 s gap between starts)
  and two shared render slots; runs end with a render (retried once if it fails);
- an admin's 15-library fan-out at 09:00, and a re-run of what failed at 10:30;
- public users: a heavy runner who hits the daily run limit, a heavy talker who hits
  the token budget, four ordinary users, two light ones; two premium users on their
  own lane;
- public and admin runs use the ``anthropic`` provider lane, premium runs ``vertex``;
- ``anthropic`` goes rate-limited at 09:05 and recovers at 09:17: its runs in flight
  fail with ``rate_limited``, new ones wait (``blocked_runs``), its chat turns see
  capacity errors;
- the silent morning: ``vertex``'s quota runs out at 10:40 and comes back at 11:20, and
  no 429 reaches the preflight probe (it keeps saying ``live``). Runs start, go silent
  and are reaped ``stalled`` after ``MAX_RUN + 60 s`` without a heartbeat; the scheduler
  re-dispatches each into the same lane. Only a premium chat turn's outcome
  (``turn_outcome``) reports ``no_quota``.
Preflight probes every 30 minutes. Every line goes through the real emitter, in strict
mode.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent_telemetry.demo._sim import MINUTE, SECOND, Simulation
from agent_telemetry.emit import emit
from agent_telemetry.schema import runs_today_bucket, tokens_today_bucket

START = datetime(2026, 5, 9, 8, 0, tzinfo=UTC)
DURATION = 4 * 60 * MINUTE
PUBLIC_TOKEN_BUDGET = 250_000
PUBLIC_RUN_LIMIT = 8
PREMIUM_RUN_LIMIT = 40
LANE_SLOTS = {"public": 2, "premium": 2, "admin": 5}
START_GAP = {"public": 0, "premium": 0, "admin": 10 * SECOND}
RENDER_SLOTS = 2
FAN_OUT = 15
OUTAGE = (63 * MINUTE, 77 * MINUTE)  # 09:03 .. 09:17, anthropic rate-limited
QUOTA_OUT = (158 * MINUTE, 200 * MINUTE)  # 10:38 .. 11:20, vertex silently out of quota
PROVIDER = {"public": "anthropic", "admin": "anthropic", "premium": "vertex"}
# A run with no heartbeat for MAX_RUN + 60 s is reaped: failed, reason stalled.
MAX_RUN = 4 * MINUTE
REAP_AFTER = MAX_RUN + 60 * SECOND
PROBE_EVERY = 30 * MINUTE
DRAIN = 30 * MINUTE


@dataclass
class User:
    tier: str  # chat tier
    lane: str  # run lane
    mean_gap: int  # mean time between chat turns
    p_action: float  # share of turns that start a run
    run_limit: int | None
    theme: str
    tokens_per_call: tuple[int, int] = (1_000, 3_000)
    runs_today: int = 0
    tokens: int = 0


@dataclass
class Run:
    user: User
    ordinal: int
    enqueued: int
    position: int = 0
    started: int = 0
    attempts: int = 0
    model_calls: int = 0
    status: str = "ok"
    reason: str | None = None
    error_class: str | None = None
    silent: bool = False  # its provider stopped answering: only the reaper ends it


@dataclass
class SimulatedLane:
    name: str
    slots: int
    gap: int
    queue: deque[Run] = field(default_factory=deque)
    running: int = 0
    last_start: int | None = None
    timer: int | None = None


class Service:
    def __init__(self, sim: Simulation, seed: int) -> None:
        self.sim = sim
        self.rnd = random.Random(seed)
        self.lanes = {
            name: SimulatedLane(name, LANE_SLOTS[name], START_GAP[name]) for name in LANE_SLOTS
        }
        self.render_free = RENDER_SLOTS
        self.render_queue: deque[tuple[int, Callable[[int], None]]] = deque()
        self.rate_limited = False  # anthropic
        self.quota_out = False  # vertex, unknown to the preflight probe
        self.failed_admin_runs = 0

    # -- provider ----------------------------------------------------------------
    def in_outage(self, run: Run, end: int) -> bool:
        """Whether ``run``'s provider was rate-limited while it ran."""
        return (
            PROVIDER[run.user.lane] == "anthropic" and run.started < OUTAGE[1] and end > OUTAGE[0]
        )

    def in_quota_outage(self, run: Run, end: int) -> bool:
        """Whether ``run``'s provider ran out of quota while it ran."""
        return (
            PROVIDER[run.user.lane] == "vertex"
            and run.started < QUOTA_OUT[1]
            and end > QUOTA_OUT[0]
        )

    def blocked(self, lane: SimulatedLane) -> bool:
        """The scheduler holds a lane's runs only while it knows its provider is limited."""
        return self.rate_limited and PROVIDER[lane.name] == "anthropic"

    def blocked_runs(self, provider: str = "anthropic") -> int:
        return sum(
            len(lane.queue) for lane in self.lanes.values() if PROVIDER[lane.name] == provider
        )

    def probe(self) -> None:
        for provider in ("anthropic", "vertex"):
            # No 429 reaches the preflight probe when vertex's quota is out: it says live.
            limited = provider == "anthropic" and self.rate_limited
            emit(
                "provider_status",
                provider=provider,
                state="rate_limited" if limited else "live",
                probe="preflight",
                retry_after_s=max(0, (OUTAGE[1] - self.sim.now) // SECOND) if limited else None,
                blocked_runs=self.blocked_runs() if limited else 0,
            )
        if self.sim.now + PROBE_EVERY <= DURATION:
            self.sim.after(PROBE_EVERY, self.probe)

    def outage_begins(self) -> None:
        self.rate_limited = True
        emit(
            "provider_status",
            provider="anthropic",
            state="rate_limited",
            probe="turn_outcome",
            retry_after_s=60,
            blocked_runs=self.blocked_runs(),
        )
        self.sim.after(4 * MINUTE, self.still_limited)

    def still_limited(self) -> None:
        if not self.rate_limited:
            return
        emit(
            "provider_status",
            provider="anthropic",
            state="rate_limited",
            probe="turn_outcome",
            retry_after_s=120,
            blocked_runs=self.blocked_runs(),
        )
        self.sim.after(4 * MINUTE, self.still_limited)

    def outage_ends(self) -> None:
        self.rate_limited = False
        emit(
            "provider_status",
            provider="anthropic",
            state="live",
            probe="preflight",
            blocked_runs=self.blocked_runs(),
        )
        for lane in self.lanes.values():
            self.try_start(lane)

    def quota_runs_out(self) -> None:
        self.quota_out = True

    def quota_returns(self) -> None:
        self.quota_out = False

    def quota_outcome(self) -> None:
        """A premium chat turn's model call came back out of quota: the only report of it."""
        emit(
            "provider_status",
            provider="vertex",
            state="no_quota",
            probe="turn_outcome",
            blocked_runs=self.blocked_runs("vertex"),
        )

    # -- runs ----------------------------------------------------------------------
    def enqueue(self, user: User) -> None:
        user.runs_today += 1
        lane = self.lanes[user.lane]
        run = Run(user, user.runs_today, self.sim.now)
        lane.queue.append(run)
        run.position = 0 if self.can_start_now(lane) else len(lane.queue)
        self.try_start(lane)

    def can_start_now(self, lane: SimulatedLane) -> bool:
        gap_ok = lane.last_start is None or self.sim.now >= lane.last_start + lane.gap
        return (
            not self.blocked(lane) and lane.running < lane.slots and gap_ok and len(lane.queue) == 1
        )

    def try_start(self, lane: SimulatedLane) -> None:
        now = self.sim.now
        while lane.queue and lane.running < lane.slots and not self.blocked(lane):
            if lane.last_start is not None and now < lane.last_start + lane.gap:
                wake = lane.last_start + lane.gap
                if lane.timer != wake:
                    lane.timer = wake
                    self.sim.at(wake, lambda: self.try_start(lane))
                return
            run = lane.queue.popleft()
            lane.running += 1
            lane.last_start = now
            self.start(run)

    def start(self, run: Run) -> None:
        rnd = self.rnd
        run.started = self.sim.now
        roll = rnd.random()
        if roll < 0.06:
            run.status = "not_ready"
            run.reason = rnd.choice(["no_dataset", "incomplete_bindings"])
            run.model_calls = rnd.randint(0, 1)
            self.sim.after(rnd.randint(300, 2500), lambda: self.finish(run))
            return
        run.model_calls = rnd.randint(6, 40)
        run.attempts = 1 if rnd.random() < 0.15 else 0
        work = rnd.randint(40, 200) * SECOND + run.attempts * rnd.randint(20, 60) * SECOND
        if roll < 0.12:
            run.status, run.reason, run.error_class = "failed", "deadline", "timeout"
        elif roll < 0.22:
            run.status, run.reason = "needs_attention", "validation"
        self.sim.after(work, lambda: self.work_done(run))

    def work_done(self, run: Run) -> None:
        if self.in_quota_outage(run, self.sim.now):
            # The model stopped answering: no heartbeat, no end; the reaper ends it.
            run.silent = True
            self.sim.at(run.started + REAP_AFTER, lambda: self.reap(run))
        elif self.in_outage(run, self.sim.now):
            run.status, run.reason, run.error_class = "failed", "error", "rate_limited"
            run.attempts = 2
            if run.user.tier == "admin":
                self.failed_admin_runs += 1
            self.finish(run)
        elif run.status == "failed":
            self.finish(run)
        else:
            self.render(run, attempt=1)

    def render(self, run: Run, attempt: int) -> None:
        def rendered(passed: bool) -> None:
            if not passed and attempt == 1:
                self.render(run, attempt=2)
                return
            if not passed:
                run.status, run.reason = "needs_attention", "render"
            self.finish(run)

        self.render_slot(run.user.theme, "run", attempt, rendered)

    def render_slot(
        self, theme: str, render_lane: str, attempt: int, done: Callable[[bool], None]
    ) -> None:
        requested = self.sim.now

        def go(_granted: int) -> None:
            render_ms = self.rnd.randint(15_000, 45_000)
            passed = self.rnd.random() < 0.9

            def finished() -> None:
                emit(
                    "pipeline_render",
                    theme=theme,
                    render_lane=render_lane,
                    slot_wait_ms=self.sim.now - render_ms - requested,
                    render_ms=render_ms,
                    passed=passed,
                    attempt=attempt,
                )
                self.release_render_slot()
                done(passed)

            self.sim.after(render_ms, finished)

        if self.render_free:
            self.render_free -= 1
            go(self.sim.now)
        else:
            self.render_queue.append((requested, go))

    def release_render_slot(self) -> None:
        if self.render_queue:
            _requested, go = self.render_queue.popleft()
            go(self.sim.now)
        else:
            self.render_free += 1

    def reap(self, run: Run) -> None:
        """No heartbeat for MAX_RUN + 60 s: failed as stalled, and the same work goes
        straight back into the same lane (the scheduler cannot tell a dead lane)."""
        run.status, run.reason, run.error_class = "failed", "stalled", None
        self.finish(run)
        retry = Run(run.user, run.ordinal, self.sim.now)
        lane = self.lanes[run.user.lane]
        lane.queue.append(retry)
        retry.position = len(lane.queue)
        self.try_start(lane)

    def finish(self, run: Run) -> None:
        user = run.user
        user.tokens += run.model_calls * self.rnd.randint(400, 900)
        emit(
            "pipeline_run",
            lane=user.lane,
            status=run.status,
            reason=run.reason,
            error_class=run.error_class,
            queue_wait_ms=run.started - run.enqueued,
            queue_position=min(run.position, 60),
            user_runs_today=runs_today_bucket(run.ordinal),
            user_tokens_today=tokens_today_bucket(user.tokens, PUBLIC_TOKEN_BUDGET),
            attempts=run.attempts,
            duration_ms=self.sim.now - run.started,
            model_calls=run.model_calls,
            provider=PROVIDER[user.lane],
        )
        lane = self.lanes[user.lane]
        lane.running -= 1
        self.try_start(lane)

    # -- chat ----------------------------------------------------------------------
    def schedule_turns(self, user: User) -> None:
        gap = int(self.rnd.expovariate(1 / user.mean_gap))
        if self.sim.now + gap < DURATION:
            self.sim.after(gap, lambda: self.turn(user))

    def turn(self, user: User) -> None:
        rnd = self.rnd
        duration = rnd.randint(800, 6_000)
        kind, refusal, error, runs, calls = "text", None, None, 0, rnd.randint(1, 3)
        if rnd.random() < 0.03:
            refusal, calls = "out_of_scope", 1
        elif user.tier == "public" and user.lane == "public" and user.tokens >= PUBLIC_TOKEN_BUDGET:
            refusal, calls = "budget", 0
        elif rnd.random() < user.p_action:
            if user.run_limit is not None and user.runs_today >= user.run_limit:
                refusal, calls = "run_limit", 0
            else:
                kind, runs = "action", 1
        provider = PROVIDER[user.lane]
        limited = self.rate_limited and provider == "anthropic"
        if refusal is None and limited and kind == "text" and rnd.random() < 0.5:
            error, duration = "capacity", rnd.randint(200, 900)
        # A text turn's own model call comes back out of quota; an action turn's call is
        # queued work, whose run starts and then goes silent.
        out_of_quota = refusal is None and self.quota_out and provider == "vertex"
        out_of_quota = out_of_quota and kind == "text"
        if out_of_quota:
            error, duration = "capacity", rnd.randint(200, 900)
        if refusal is None and error is None:
            user.tokens += calls * rnd.randint(*user.tokens_per_call)

        def answered() -> None:
            emit(
                "chat_turn",
                tier=user.tier,
                kind=kind,
                refusal=refusal,
                error=error,
                duration_ms=duration,
                model_calls=calls,
                pipeline_runs=runs,
            )
            if out_of_quota:
                self.quota_outcome()
            if runs:
                self.enqueue(user)
            if rnd.random() < 0.08:
                user.theme = "dark" if user.theme == "light" else "light"
                self.render_slot(user.theme, "toggle", 1, lambda _passed: None)

        self.sim.after(duration, answered)
        self.schedule_turns(user)

    def fan_out(self, admin: User, runs: int) -> None:
        def answered() -> None:
            emit(
                "chat_turn",
                tier="admin",
                kind="action",
                duration_ms=2_400,
                model_calls=2,
                pipeline_runs=runs,
            )
            for _ in range(runs):
                self.enqueue(admin)

        self.sim.after(2_400, answered)


def users() -> list[User]:
    heavy = [
        User("public", "public", 4 * MINUTE, 0.7, PUBLIC_RUN_LIMIT, "light"),
        User("public", "public", 5 * MINUTE, 0.25, PUBLIC_RUN_LIMIT, "dark", (3_000, 8_000)),
    ]
    ordinary = [
        User("public", "public", 12 * MINUTE, 0.35, PUBLIC_RUN_LIMIT, theme)
        for theme in ("light", "dark", "light", "dark")
    ]
    light = [User("public", "public", 35 * MINUTE, 0.3, PUBLIC_RUN_LIMIT, "dark") for _ in range(2)]
    premium = [
        User("public", "premium", 9 * MINUTE, 0.45, PREMIUM_RUN_LIMIT, theme)
        for theme in ("dark", "light")
    ]
    return [*heavy, *ordinary, *light, *premium]


def run_workload(sim: Simulation, seed: int) -> None:
    """Schedule the morning and run it; no turn starts after DURATION, every run drains."""
    service = Service(sim, seed)
    admin = User("admin", "admin", 60 * MINUTE, 0.0, None, "dark")
    sim.at(0, service.probe)
    for user in users():
        service.schedule_turns(user)
    sim.at(60 * MINUTE, lambda: service.fan_out(admin, FAN_OUT))
    sim.at(OUTAGE[0], service.outage_begins)
    sim.at(OUTAGE[1], service.outage_ends)
    sim.at(QUOTA_OUT[0], service.quota_runs_out)
    sim.at(QUOTA_OUT[1], service.quota_returns)
    sim.at(150 * MINUTE, lambda: service.fan_out(admin, max(1, service.failed_admin_runs)))
    sim.run(DURATION + DRAIN)
