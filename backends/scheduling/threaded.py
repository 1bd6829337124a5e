"""The threaded scheduler: a real scheduler thread sleeping on the clock.

The thread reads the earliest next fire time from the store and sleeps on the clock until
then (or until a creation, a trigger or the switch changes it), then fires everything the
clock has reached, claiming each fire on the store. The rules are the step scheduler's,
so the two differ only in who calls them: a thread instead of `settle`. Two of these over
one store really race for the same fires; the store's compare-and-set decides (SC-008).

`settle()` waits, never on the wall clock for time to pass, until the thread sleeps with
nothing due. A real-time safety limit turns a hung thread into an error that says so.
"""

from __future__ import annotations

import threading
from datetime import datetime

from jobconform.backends.protocol import Clock
from jobconform.backends.scheduling.protocol import SchedulingConfig, SchedulingTarget
from jobconform.backends.scheduling.runtime import ScheduleStore, StepSchedulingRuntime
from jobconform.backends.threaded.clock import SleepingPass

# A real-time bound on settle; it never lets time pass for the scheduler (the clock is
# virtual), it only turns a hung thread into an error.
SETTLE_LIMIT_SECONDS = 10.0


class SchedulerSettleTimeout(RuntimeError):
    """The scheduler thread did not become quiet within the real-time safety limit."""


class ThreadedSchedulingRuntime(StepSchedulingRuntime):
    def __init__(self, store: ScheduleStore, clock: Clock, config: SchedulingConfig,
                 target: SchedulingTarget) -> None:
        # Re-entrant: the harness's calls and the thread's pass take it, and both reach
        # _schedules_changed while holding it.
        self._state = threading.Condition(threading.RLock())
        self._stopping = False
        self._pass = SleepingPass(self._state)
        with self._state:
            super().__init__(store, clock, config, target)  # boot catch-up, under the lock
        self._thread = threading.Thread(target=self._schedule, daemon=True, name="scheduler")
        self._thread.start()

    def _schedule(self) -> None:
        with self._state:
            while not self._stopping:
                seen = self._pass.changes
                self._fire_due(self._clock.now())
                self._poll_ends_due(self._clock.now())
                self._pass.sleep(seen, self._wake_for_ends(self._next_wake()), self._clock)


    def _next_wake(self) -> datetime | None:
        """When the thread must wake next: the earliest next fire time, none while
        autonomy is off (only the switch can make anything due then)."""
        return self._store.next_due() if self._store.autonomy() else None

    def _wake_for_ends(self, until: datetime | None) -> datetime | None:
        """The wake-up for the next fire, or the next end poll if that comes first
        (SR-009; none until start_end_polls)."""
        poll = self._next_end_poll
        if poll is None or self._end_polls is None:
            return until
        return poll if until is None else min(until, poll)

    def start_end_polls(self, interval_seconds: float) -> None:
        with self._state:
            super().start_end_polls(interval_seconds)

    def _schedules_changed(self) -> None:
        self._pass.changed()

    # -- the harness's side ---------------------------------------------------------------

    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        with self._state:
            return super().create_once(message, run_at, delay_seconds, pre_check)

    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        with self._state:
            return super().create_cron(message, expression, timezone, pre_check)

    def trigger(self, schedule_id: str) -> None:
        with self._state:
            super().trigger(schedule_id)

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        with self._state:
            super().edit(schedule_id, message, expression, timezone)

    def delete(self, schedule_id: str) -> None:
        with self._state:
            super().delete(schedule_id)

    def set_autonomy(self, enabled: bool) -> None:
        with self._state:
            super().set_autonomy(enabled)

    def end_execution(self, schedule_id: str, scheduled_for: datetime, outcome: str,
                      cost: float | None) -> bool:
        with self._state:
            return super().end_execution(schedule_id, scheduled_for, outcome, cost)

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> None:
        with self._state:
            super().set_validation(schedule_id, enabled, timeout_seconds)

    def end_validation(self, schedule_id: str, scheduled_for: datetime, verdict: str) -> bool:
        with self._state:
            return super().end_validation(schedule_id, scheduled_for, verdict)

    def _quiet(self) -> bool:
        return self._pass.quiet(self._clock.now())

    def settle(self) -> None:
        with self._state:
            if not self._state.wait_for(self._quiet, timeout=SETTLE_LIMIT_SECONDS):
                raise SchedulerSettleTimeout(
                    f"the scheduler thread did not become quiet within"
                    f" {SETTLE_LIMIT_SECONDS:g} s of real time: {self._pass.describe()}")

    def _stop(self) -> None:
        with self._state:
            self._stopping = True
            self._state.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join()
