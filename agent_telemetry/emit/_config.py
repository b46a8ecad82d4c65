"""Where lines go and in which mode: the emitter's only global state.

``configure`` swaps in a new logger (one attribute assignment, so a concurrent ``emit``
uses either the old logger or the new one, never half of each). Counters, the locks
and active captures live in ``SHARED`` and survive every ``configure`` (a fork resets
them in the child).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import IO, Any, Final

from agent_telemetry.emit._counters import TelemetryCounters
from agent_telemetry.emit._logger import TelemetryLogger, make_logger
from agent_telemetry.emit._output import WRITE_TIMEOUT_SECONDS, Shared
from agent_telemetry.emit._validate import STATE, use_catalogue
from agent_telemetry.schema import TelemetryEvent
from agent_telemetry.schema.catalogue import Catalogue, default_catalogue, load_provable

CatalogueSource = Catalogue | ModuleType | str | Mapping[str, type[TelemetryEvent]]


@dataclass(frozen=True, slots=True)
class Settings:
    """``stream`` None means "``sys.stdout`` as it is at each write"; ``clock`` None
    means the real clock (``time.time_ns``); ``catalogue`` None means the package's own."""

    stream: IO[Any] | None = None
    strict: bool = False
    clock: Callable[[], int] | None = None
    write_timeout: float = WRITE_TIMEOUT_SECONDS
    catalogue: Catalogue | None = None


SHARED = Shared()


class _Current:
    def __init__(self) -> None:
        self.settings = Settings()
        self.logger: TelemetryLogger = make_logger(SHARED, None, False)


CURRENT = _Current()


def _install(settings: Settings) -> None:
    # Callers hold SHARED.configure_lock. The logger is swapped last, in one assignment.
    catalogue = settings.catalogue or default_catalogue()
    if STATE.active.catalogue is not catalogue:
        use_catalogue(catalogue)
    CURRENT.settings = settings
    SHARED.write_timeout = settings.write_timeout
    CURRENT.logger = make_logger(SHARED, settings.stream, settings.strict, settings.clock)


class _Keep:
    """The default of ``configure(clock=...)``: keep the current clock."""

    def __repr__(self) -> str:
        return "<keep>"


_KEEP: Final = _Keep()


def configure(
    *,
    stream: IO[Any] | None = None,
    strict: bool | None = None,
    clock: Callable[[], int] | _Keep | None = _KEEP,
    write_timeout: float | None = None,
    catalogue: CatalogueSource | None = None,
) -> None:
    """Set where lines go, the mode, the clock, the write timeout and the catalogue;
    ``stream``, ``strict``, ``write_timeout`` and ``catalogue`` left as None, and ``clock``
    left out, keep their current values.

    ``stream``: any object with ``write`` (text or binary) and ``flush``; the default,
    until configured, is ``sys.stdout`` looked up at each write.
    ``strict``: True raises ``TelemetryValidationError`` on any invalid call; False (the
    default, for production) never raises into the caller.
    ``clock``: a callable returning integer nanoseconds since the epoch, called once per
    line to stamp its ``time`` (a simulation, a replay, a test that wants exact times);
    ``clock=None`` goes back to the real clock. A clock that raises or returns a
    non-integer makes the line an ``internal_error`` rejection (strict: raises).
    ``write_timeout``: seconds (0.1 by default) an ``emit`` may wait for another thread's
    write and then for a pipe, socket or terminal to drain; past it the line is dropped
    whole and counted in ``write_timeouts``. 0 never waits. Raises ``ValueError`` unless
    it is a finite number >= 0 (a configuration mistake, not telemetry).
    ``catalogue``: the service's own catalogue: a module exposing ``EVENTS`` (and
    optionally ``EVENT_VERSIONS``), its import path (``"myservice.telemetry"``, the
    ``[catalogue] module`` of telemetry.toml), or a ``name -> model`` mapping of classes
    defined at module level (each ``module.qualname`` of an importable module): what a
    lock can hold. A class built at run time raises ``CatalogueError`` here. Emit by
    name resolves there, and only its own current models are written: any other class
    is ``telemetry_rejected`` / ``unknown_event`` (strict: raises). Loaded here, once;
    a catalogue that does not load raises ``CatalogueError`` (or the model's
    ``SchemaRuleError``) from this call, in either mode. Nothing reads telemetry.toml.
    """
    if write_timeout is not None and not 0 <= write_timeout < float("inf"):
        raise ValueError("write_timeout must be a finite number of seconds >= 0")
    loaded = None if catalogue is None else load_provable(catalogue)
    with SHARED.configure_lock:
        current = CURRENT.settings
        _install(
            Settings(
                stream=current.stream if stream is None else stream,
                strict=current.strict if strict is None else bool(strict),
                clock=current.clock if isinstance(clock, _Keep) else clock,
                write_timeout=(
                    current.write_timeout if write_timeout is None else float(write_timeout)
                ),
                catalogue=current.catalogue if loaded is None else loaded,
            )
        )


def reset_defaults() -> None:
    """Back to ``sys.stdout`` (looked up at each write), lenient mode, the real clock and
    the default write timeout and the package's own catalogue."""
    with SHARED.configure_lock:
        _install(Settings())


def settings() -> Settings:
    """The current settings; ``stream`` None means ``sys.stdout`` at each write."""
    return CURRENT.settings


def counters() -> TelemetryCounters:
    """A snapshot of the counters since start (or the last ``reset_counters``).

    Never waits behind a writer: it takes only the count lock.
    """
    known = STATE.active.names
    with SHARED.count_lock:
        return SHARED.counters.snapshot(known)


def reset_counters() -> None:
    """Start every counter again from zero.

    Waits for a line being written (so it is not counted half before, half after) at
    most the write timeout; a writer stuck longer than that is not waited for.
    """
    held = SHARED.lock.acquire(True, SHARED.write_timeout)
    try:
        with SHARED.count_lock:
            SHARED.counters.reset()
    finally:
        if held:
            SHARED.lock.release()
