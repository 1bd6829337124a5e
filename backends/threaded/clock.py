"""The clocks a worker can sleep on between polls.

The worker's poll thread sleeps on the runtime's own condition, so that a dispatch or a
stop wakes it at once; the clock decides when the sleep ends by itself. Under the kit's
`VirtualClock` that is when the harness advances time past the deadline; under
`SystemClock` it is when that much real time has passed.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from jobconform.backends.protocol import Clock


@runtime_checkable
class WaitableClock(Clock, Protocol):
    def wait_until(self, condition: threading.Condition, deadline: datetime) -> None:
        """Block on `condition` (held by the caller) until it is notified or the clock
        reaches `deadline`; the caller re-checks what it waits for afterwards."""
        ...


class SystemClock:
    """Real time, for running the worker outside the kit."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait_until(self, condition: threading.Condition, deadline: datetime) -> None:
        remaining = (deadline - self.now()).total_seconds()
        if remaining > 0:
            condition.wait(remaining)


class SteppedClock:
    """A clock that moves only when its owner moves it, and the threads sleeping on it.

    The kit's virtual clock (moved by the harness) and a process child's clock (moved by
    each request) are both one: a thread sleeps until the clock reaches its deadline or
    its condition is notified. A subclass moves the time with `_wake` after it.
    """

    def __init__(self, start: datetime) -> None:
        self._now = start
        self._lock = threading.Lock()
        # Conditions of threads sleeping until a deadline; every move notifies each.
        self._sleepers: list[threading.Condition] = []

    def now(self) -> datetime:
        # No lock: reading one attribute is atomic, and a move replaces the value whole.
        # Runtimes read the clock a dozen times a step of a check (issue 33).
        return self._now

    def wait_until(self, condition: threading.Condition, deadline: datetime) -> None:
        """Block on `condition` until it is notified or the clock reaches `deadline`.

        The caller holds `condition`, as for `Condition.wait`, and re-checks what it waits
        for when this returns (the return may also be a notification by someone else).
        """
        with self._lock:
            # Checked while registering, so a move racing with this call either sees the
            # registration and notifies, or happened before and is seen here.
            if self._now >= deadline:
                return
            self._sleepers.append(condition)
        try:
            condition.wait()
        finally:
            with self._lock:
                self._sleepers.remove(condition)

    def _sleeping(self) -> list[threading.Condition]:
        """The conditions to wake after a move; the caller holds the clock's lock."""
        return list(dict.fromkeys(self._sleepers))

    @staticmethod
    def _wake(sleepers: list[threading.Condition]) -> None:
        """Notify `sleepers`, outside the clock's lock: a sleeper holds its condition while
        it registers, so taking both locks in the other order could deadlock."""
        for condition in sleepers:
            with condition:
                condition.notify_all()


def sleep_until(clock: Clock, condition: threading.Condition, deadline: datetime) -> None:
    """Sleep on `condition` (held by the caller) until it is notified or `clock` reaches
    `deadline`: a waitable clock (the kit's virtual one) wakes the thread itself; any other
    clock is taken as real time."""
    if isinstance(clock, WaitableClock):
        clock.wait_until(condition, deadline)
        return
    remaining = (deadline - clock.now()).total_seconds()
    if remaining > 0:
        condition.wait(remaining)


class SleepingPass:
    """The bookkeeping of a thread that makes a pass, then sleeps on the clock until the
    next due time or a change, as the threaded scheduler and reminder runtimes' do; their
    `settle` waits until it is `quiet`.

    A change (`changed`, by a caller holding `condition`) bumps a counter; the thread
    notes the count at the start of each pass, so a change made during the pass keeps it
    from counting as quiet until it has made another.
    """

    def __init__(self, condition: threading.Condition) -> None:
        self._condition = condition
        self.changes = 0  # bumped whenever the next due time may have moved
        self.seen = -1  # the value of `changes` at the thread's last pass
        self.asleep_until: datetime | None = None
        self.asleep = False

    def changed(self) -> None:
        """The next due time may have moved: wake the thread for a pass."""
        self.changes += 1
        self._condition.notify_all()

    def sleep(self, seen: int, until: datetime | None, clock: Clock) -> None:
        """The pass that began at change `seen` is over: sleep (holding the condition)
        until `clock` reaches `until`, or until notified; None sleeps until notified."""
        self.seen, self.asleep_until, self.asleep = seen, until, True
        self._condition.notify_all()  # a settle may be waiting for this
        if until is None:
            self._condition.wait()
        else:
            sleep_until(clock, self._condition, until)
        self.asleep = False

    def quiet(self, now: datetime) -> bool:
        """Asleep after a pass that saw every change, with nothing due at `now`."""
        return (self.asleep and self.seen == self.changes
                and (self.asleep_until is None or now < self.asleep_until))

    def describe(self) -> str:
        return (f"asleep={self.asleep}, saw change {self.seen} of {self.changes}, sleeping"
                f" until {self.asleep_until}")
