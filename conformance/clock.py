"""The virtual clock: time passes only when the harness advances it.

Threads of a runtime under test may sleep on it: `wait_until` blocks on the runtime's own
condition until the runtime notifies it or the harness advances the clock to the
deadline. Nothing ever waits on the wall clock for virtual time to pass.

`real_monotonic()` is the one real clock the kit's safety limits read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

# A fixed start so that every run sees the same timestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
# The real monotonic clock, held where no freezer looks: freezegun replaces `time.monotonic`
# and every module attribute that *is* it (a tuple's item is not one), and answers by
# looking at the caller's module. A safety limit must fire whatever is frozen.
_REAL_MONOTONIC = (time.monotonic,)


def real_monotonic() -> float:
    """Real seconds, for safety limits only: never to let virtual time pass."""
    return _REAL_MONOTONIC[0]()


class VirtualClock:
    def __init__(self, start: datetime = EPOCH) -> None:
        if start.utcoffset() != timedelta(0):
            raise ValueError(f"the virtual clock starts at a UTC instant, not {start!r}")
        self._now = start
        self._lock = threading.Lock()
        # Conditions of threads sleeping until a deadline; advance() notifies each.
        self._sleepers: list[threading.Condition] = []
        # Called with the new time at every advance, before any sleeper wakes: the bridges
        # (jobconform.bridges) move a runtime's wall clock and event loop with it.
        self._listeners: list[Callable[[datetime], None]] = []

    def on_advance(self, listener: Callable[[datetime], None]) -> Callable[[], None]:
        """Call `listener(now)` after every advance, before sleepers are woken.

        Returns:
            A function that removes the listener again.
        """
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return remove

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every thread sleeping on the clock.

        Raises:
            ValueError: seconds is negative or not finite; time never goes back.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"the clock only moves forward by a finite amount, not {seconds!r}")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            now = self._now
            sleepers = list(dict.fromkeys(self._sleepers))
            listeners = list(self._listeners)
        for listener in listeners:
            listener(now)
        # Notified outside the clock's lock: a sleeper holds its condition while it
        # registers here, so taking both locks in the other order could deadlock.
        for condition in sleepers:
            with condition:
                condition.notify_all()

    def wait_until(self, condition: threading.Condition, deadline: datetime) -> None:
        """Block on `condition` until it is notified or the clock reaches `deadline`.

        The caller holds `condition`, as for `Condition.wait`, and re-checks what it waits
        for when this returns (the return may also be a notification by someone else).
        """
        with self._lock:
            # Checked while registering, so an advance racing with this call either sees
            # the registration and notifies, or happened before and is seen here.
            if self._now >= deadline:
                return
            self._sleepers.append(condition)
        try:
            condition.wait()
        finally:
            with self._lock:
                self._sleepers.remove(condition)
