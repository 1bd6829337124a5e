"""What a backend implements to claim `self-running` (spec area self-running, SR-001..SR-005).

A runtime that runs its own clockwork starts queued work, fails stuck jobs, re-delivers
work whose lease lapsed, brings retries back when due and, claiming `reaper`, sweeps
expired jobs away, all by itself as its clock passes. Its reaper runs from the opening
with the settings' `reaper_ttl_seconds` and `reaper_sweep_interval_ms` (the profile's):
opening the runtime self-running is the opt-in RP-001 asks for, and no `start_reaper`
follows. Such a backend claims the `self-running` capability and has

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> Runtime: ...

It returns a job `Runtime` (backends/protocol.py) that acts on `clockwork` by itself: the
harness only advances `clock`, calls `submit`, `heartbeat` and reads (`get`, `list_jobs`,
`health`), and calls `settle` before each read so that whatever the runtime's threads can
do at the current instant is done. It never calls `dispatch`, `detect_stuck` or
`expire_leases` on it. A runtime that sleeps on the clock wakes when the harness advances
it (the kit's `VirtualClock.wait_until`, or `jobconform.bridges.ThreadWaits`).

The runtime's other checks keep opening it with `open`, in the commanded mode, where it
acts only when told.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from jobconform.backends.protocol import REAPER, Clock, RuntimeSettings

SELF_RUNNING = "self-running"


@dataclass(frozen=True)
class Clockwork:
    """How a self-running runtime is told to run.

    Attributes:
        poll_interval_seconds: clock time between two of its passes; every bound of the
            area is counted in it (the profile's `poll_interval_seconds`).
        job_timeout_seconds: silence after which a running job is failed as stuck (SR-002).
        lease_seconds: silence after which a running job's lease lapses and it is
            re-queued (SR-003).
    """

    poll_interval_seconds: float
    job_timeout_seconds: float
    lease_seconds: float

    def __post_init__(self) -> None:
        for name in ("poll_interval_seconds", "job_timeout_seconds", "lease_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} is a finite number of seconds above 0, not {value!r}")


class PassesOnSettle:
    """A commanded job runtime given a clockwork of its own: each `settle` records what
    the runtime has to record, then, once the clock has reached the next poll boundary,
    runs one poll: a stuck pass, a lease pass and a dispatch, in that order (a slot a stuck
    or lost job held is free for the dispatch). Boundaries are one poll interval apart from
    the opening; the clock may jump over several, and one poll then sees all that is due.

    It is how the reference child of the process protocol runs a step runtime (memory,
    sql) self-running (`python -m jobconform.backends.process.child --self-running`): the
    kit's every request carries the time and a read is preceded by `settle`, so the
    passes happen at the instants the kit reads at. Every other call goes to the runtime.
    """

    def __init__(self, runtime: Any, clock: Clock, clockwork: Clockwork) -> None:
        self._runtime = runtime
        self._clock = clock
        self._clockwork = clockwork
        self._next_poll = clock.now()

    def settle(self) -> None:
        self._runtime.settle()
        now = self._clock.now()
        if now < self._next_poll:
            return
        self._runtime.detect_stuck(self._clockwork.job_timeout_seconds)
        self._runtime.expire_leases(self._clockwork.lease_seconds)
        self._runtime.dispatch()
        interval = timedelta(seconds=self._clockwork.poll_interval_seconds)
        while self._next_poll <= now:
            self._next_poll += interval

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)


class WithOwnClockwork:
    """A backend whose job runtimes, opened self-running, poll by `PassesOnSettle`; it
    claims `self-running` besides the backend's own capabilities and passes every other
    opener through. Claiming `reaper`, its runtime's reaper is started at the opening.
    The backend's runtime must answer detect_stuck, expire_leases and dispatch (it claims
    stuck and redelivery)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.name = backend.name
        self.profile = backend.profile
        self.capabilities = frozenset(backend.capabilities) | {SELF_RUNNING}

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> PassesOnSettle:
        runtime = self._backend.open(settings, clock)
        if REAPER in self.capabilities:
            runtime.start_reaper()  # a step runtime sweeps on settle once its reaper runs
        return PassesOnSettle(runtime, clock, clockwork)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)
