"""The breaker's backstop sweep, run by the runtime itself (spec area self-running, SR-007).

In the breaker area the backstop sweep (CB-014) is a command: the harness calls
`backstop()` and checks what one sweep does. Here a backend claiming self-running and the
breaker's seams opens its breaker with `open_breaker` and has it start its own sweeps with
`start_backstop(interval)`; the harness then only trips breakers with their drains lost
and lets time pass. The oracle (`BreakerModel`) sweeps at every interval boundary counted
from the start, and the harness reads one tick before each boundary (the lost drain's work
must still be queued: a sweep before the boundary is early) and at it (the work must be
failed: a runtime that does not sweep by itself leaves it queued).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from jobconform.backends.breaker.protocol import BREAKER, BreakerRuntime
from jobconform.backends.protocol import BREAKER_SEAMS, Backend, Clock
from jobconform.conformance.aim import TICK_SECONDS
from jobconform.conformance.breaker.harness import breaker_settings
from jobconform.conformance.self_running.watch import (
    CallHook,
    FailHook,
    HarnessWatch,
    service_watched,
)
from jobconform.reference.breaker.oracle import (
    BreakerModel,
    BreakerState,
    CallOutcome,
    state_at,
)
from jobconform.spec import Profile, Registry

BACKSTOP_REQUIREMENT = "SR-007"
AREA = "self-running"


def backstop_interval_of(profile: Profile) -> float:
    """The profile's `backstop_interval_seconds` (SR-007).

    Raises:
        SpecError: the profile sets none.
    """
    return float(str(profile.parameter(AREA, "backstop_interval_seconds")))


def watches_backstop(backend: Backend, profile: Profile, registry: Registry | None) -> bool:
    """Whether SR-007 applies: the backend claims the breaker's seams, the profile has the
    breaker and the requirement (or, without a registry, the interval parameter)."""
    return service_watched(backend, profile, registry, BREAKER_SEAMS, BREAKER,
                           BACKSTOP_REQUIREMENT, backstop_interval_of)


class BackstopWatch(HarnessWatch):
    """One self-running check's breaker, against the oracle's sweeps at the boundaries;
    the breaker is opened on the first trip. `claimed`: whether SR-007 applies."""

    def __init__(self, backend: Backend, profile: Profile, clock: Clock, claimed: bool,
                 fail: FailHook, call: CallHook, exercised: set[str]) -> None:
        super().__init__(backend, profile, clock, fail, call, exercised)
        self.claimed = claimed
        self.breaker: BreakerRuntime | None = None
        self.model: BreakerModel | None = None
        self.targets: list[str] = []
        self._next_sweep: datetime | None = None
        self._interval = timedelta(0)

    def open(self) -> None:
        """Open the breaker and start its backstop now."""
        self._opened()

    def _opened(self) -> tuple[BreakerRuntime, BreakerModel]:
        if self.breaker is None or self.model is None:
            if not self.claimed:
                raise ValueError(f"backend {self.backend.name!r} does not claim"
                                 f" {BREAKER_SEAMS} with {BREAKER} under profile"
                                 f" {self.profile.name!r}: SR-007 cannot be checked on it")
            opener = self._opener("open_breaker", BREAKER, "clock, settings")
            settings = breaker_settings(self.profile)
            interval = backstop_interval_of(self.profile)
            breaker: BreakerRuntime = self._call("open_breaker",
                                                 lambda: opener(self.clock, settings))
            self.breaker = breaker
            self._call("start_backstop", lambda: breaker.start_backstop(interval))
            self._call("set_global_switch", lambda: breaker.set_global_switch(True))
            self.model = BreakerModel(settings, global_switch=True)
            self._interval = timedelta(seconds=interval)
            self._next_sweep = self.clock.now() + self._interval
        return self.breaker, self.model

    # -- the command ---------------------------------------------------------------------

    def trip_with_lost_drain(self, target: str, works: tuple[str, ...]) -> None:
        """Work is queued for `target`, whose breaker is reset, then tripped by counted
        failures with the drain lost: the work stays queued for the runtime's own sweep."""
        breaker, model = self._opened()
        self._catch_up(self.clock.now())
        if target not in self.targets:
            self.targets.append(target)
            self._call("set_opt_in", lambda: breaker.set_opt_in(target, True))
            model.opted_in.add(target)
        now = self.clock.now()
        self._call("reset", lambda: breaker.reset(target))
        model.reset(target)
        for work in works:
            self._call("enqueue", partial(breaker.enqueue, target, work))
            model.enqueue(target, work, now)
        self._call("set_drain_lost", lambda: breaker.set_drain_lost(True))
        model.drain_lost = True
        for number in range(model.settings.failure_threshold):
            call = f"{target}-trip-{len(model.failed_work.get(target, []))}-{number}"
            self._call("admit", partial(breaker.admit, target, call))
            self._call("record", partial(breaker.record, target, call, "failure", "auth"))
            model.admit(target, call, now)
            model.record(target, call, CallOutcome.FAILURE, "auth", now)
        self._call("set_drain_lost", lambda: breaker.set_drain_lost(False))
        model.drain_lost = False

    # -- time and reads ------------------------------------------------------------------

    def read_points(self) -> list[datetime]:
        """One tick before the next sweep and the sweep's boundary itself, while work the
        sweep should fail waits (nothing to see otherwise)."""
        if self.model is None or self._next_sweep is None or not self._doomed_work():
            return []
        return [self._next_sweep - timedelta(seconds=TICK_SECONDS), self._next_sweep]

    def _doomed_work(self) -> bool:
        assert self.model is not None
        return any(work for work in self.model.queues.values())

    def _catch_up(self, now: datetime) -> None:
        """The oracle's sweeps at every boundary the clock has reached."""
        assert self.model is not None and self._next_sweep is not None
        while self._next_sweep <= now:
            if self._doomed_work():
                self._exercised.add(BACKSTOP_REQUIREMENT)
            self.model.backstop(self._next_sweep)
            self._next_sweep += self._interval

    def settle(self) -> None:
        breaker = self.breaker
        if breaker is not None:
            self._call("settle (breaker)", breaker.settle)

    def read(self, now: datetime) -> None:
        """Each target's queue and failed work against the oracle's after its sweeps; the
        breaker has settled."""
        breaker, model = self.breaker, self.model
        if breaker is None or model is None:
            return
        self._catch_up(now)
        for target in self.targets:
            queued = list(self._call("queued", partial(breaker.queued, target)))
            failed = list(self._call("failed_work", partial(breaker.failed_work, target)))
            wanted_queued = model.queues.get(target, [])
            wanted_failed = model.failed_work.get(target, [])
            if (queued, failed) == (wanted_queued, wanted_failed):
                continue
            assert self._next_sweep is not None
            last = self._next_sweep - self._interval
            early = [work for work in failed if work in wanted_queued]
            state = state_at(model.breaker(target), now)
            what = (f"target {target!r} read at {now.isoformat()}: swept before the boundary"
                    f" at {self._next_sweep.isoformat()}" if early
                    else f"target {target!r} read at {now.isoformat()}, breaker"
                    f" {state.value}: the sweep due at {last.isoformat()} did not run by"
                    f" itself" if state is not BreakerState.CLOSED or wanted_failed
                    else f"target {target!r} read at {now.isoformat()}")
            raise self._fail((BACKSTOP_REQUIREMENT,), what,
                             {"queued": wanted_queued, "failed": wanted_failed},
                             {"queued": queued, "failed": failed})

    def close(self) -> None:
        breaker = self.breaker
        if breaker is not None:
            self._call("close (breaker)", breaker.close)
