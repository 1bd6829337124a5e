"""The threaded reminders runtime: a real scheduler thread sleeping on the clock.

The scheduler thread is seed 002's single-instance fire home: it reads the earliest due
time from the store and sleeps on the clock until then (or until a creation or a recorded
outcome changes it), then dispatches every reminder the clock has reached. Each dispatch
runs in a thread of its own, which blocks in the dispatch call (the harness's `Delivery`)
and records the outcome when it returns. The rules are the step runtime's, so the two
differ only in who calls them: threads instead of `settle`.

`settle()` waits, never on the wall clock for time to pass, until the scheduler sleeps
with nothing due and every dispatch in flight is still undecided. A real-time safety
limit turns a hung thread into an error that says what was still busy.
"""

from __future__ import annotations

import threading
from datetime import datetime

from jobconform.backends.faults import ProcessCrashed, StoreWriteFailed
from jobconform.backends.protocol import Clock
from jobconform.backends.reminders.protocol import Delivery, DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.reminders.store import ReminderStore
from jobconform.backends.threaded.clock import SleepingPass, SystemClock, WaitableClock

# A real-time bound on settle; it never lets time pass for the runtime (the clock is
# virtual), it only turns a hung thread into an error.
SETTLE_LIMIT_SECONDS = 10.0


class ReminderSettleTimeout(RuntimeError):
    """The runtime's threads did not become quiet within the real-time safety limit."""


class ThreadedReminderRuntime(StepReminderRuntime):
    def __init__(self, store: ReminderStore, clock: Clock, config: ReminderConfig,
                 target: DeliveryTarget) -> None:
        self._state = threading.Condition()
        self._stopping = False
        self._crashed = False  # an injected crash ended a thread (jobconform.backends.faults)
        self._pass = SleepingPass(self._state)
        self._threads: list[threading.Thread] = []
        self._waitable: WaitableClock = (clock if isinstance(clock, WaitableClock)
                                         else SystemClock())
        with self._state:
            super().__init__(store, clock, config, target)  # boot recovery, under the lock
        self._scheduler = threading.Thread(target=self._schedule, daemon=True,
                                           name="reminder-scheduler")
        self._scheduler.start()

    # -- the threads -------------------------------------------------------------------

    def _schedule(self) -> None:
        try:
            self._schedule_until_stopped()
        except ProcessCrashed:
            self._crashed_here()

    def _crashed_here(self) -> None:
        """An injected crash met this thread: it ends, as every thread of a dead process
        would, and settle stops waiting for quiet (the harness restarts the runtime)."""
        with self._state:
            self._crashed = True
            self._state.notify_all()

    def _schedule_until_stopped(self) -> None:
        with self._state:
            while not self._stopping and not self._crashed:
                seen = self._pass.changes
                if self._fire_due(self._clock.now()):
                    continue  # a store write failed: the next pass is at once (RM-014)
                self._pass.sleep(seen, self._next_due(), self._waitable)

    def _next_due(self) -> datetime | None:
        """When the scheduler must wake next: the earliest due time in the store."""
        return self._store.next_due()

    def _dispatched(self, reminder_id: str, delivery: Delivery) -> None:
        super()._dispatched(reminder_id, delivery)
        thread = threading.Thread(target=self._deliver, args=(reminder_id, delivery),
                                  daemon=True, name=f"reminder-dispatch-{reminder_id[:8]}")
        self._threads.append(thread)
        thread.start()

    def _deliver(self, reminder_id: str, delivery: Delivery) -> None:
        """A dispatch call: blocked until it returns, then its outcome is recorded."""
        if not delivery.wait_for_decision(lambda: self._stopping):
            return  # the runtime stopped with the call in flight: a crash loses it
        try:
            with self._state:
                while not self._stopping and not self._crashed:
                    try:
                        self._record(reminder_id, delivery)
                    except StoreWriteFailed:
                        continue  # nothing was written: write it again at once (RM-014)
                    self._in_flight.pop(reminder_id, None)
                    return
        except ProcessCrashed:
            self._crashed_here()

    def _reminders_changed(self) -> None:
        # Every caller holds _state (its lock is re-entrant): the scheduler, a dispatch
        # thread recording an outcome, or the harness's create and cancel.
        self._pass.changed()

    # -- the harness's side ------------------------------------------------------------

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        # Under the lock, the key's lookup and the insert are one step (RM-017).
        with self._state:
            return super().create(message, fire_at, delay_seconds, idempotency_key)

    def cancel(self, reminder_id: str) -> str:
        with self._state:
            return super().cancel(reminder_id)

    def set_autonomy(self, enabled: bool) -> None:
        with self._state:
            super().set_autonomy(enabled)

    def sweep(self) -> int:
        with self._state:
            return super().sweep()

    def _quiet(self) -> bool:
        if self._crashed:
            return True
        return (self._pass.quiet(self._clock.now())
                and not any(delivery.decided() for delivery in self._in_flight.values()))

    def settle(self) -> None:
        with self._state:
            if not self._state.wait_for(self._quiet, timeout=SETTLE_LIMIT_SECONDS):
                busy = [reminder_id for reminder_id, delivery in self._in_flight.items()
                        if delivery.decided()]
                raise ReminderSettleTimeout(
                    f"the reminder threads did not become quiet within {SETTLE_LIMIT_SECONDS:g}"
                    f" s of real time: scheduler {self._pass.describe()}; decided"
                    f" dispatches not recorded: {busy}")

    def _stop(self) -> None:
        with self._state:
            self._stopping = True
            self._state.notify_all()
            in_flight = list(self._in_flight.values())
            self._in_flight.clear()
        for delivery in in_flight:
            delivery.wake()
        self._scheduler.join()
        for thread in self._threads:
            thread.join()
