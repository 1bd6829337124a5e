"""The virtual clock: time passes only when the harness advances it.

Threads of a runtime under test may sleep on it: `wait_until` blocks on the runtime's own
condition until the runtime notifies it or the harness advances the clock to the
deadline. Nothing ever waits on the wall clock for virtual time to pass.

`real_monotonic()` is the one real clock the kit's safety limits read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from jobconform.backends.threaded.clock import SteppedClock

# A fixed start so that every run sees the same timestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
# The real monotonic clock, held where no freezer looks: freezegun replaces `time.monotonic`
# and every module attribute that *is* it (a tuple's item is not one), and answers by
# looking at the caller's module. A safety limit must fire whatever is frozen.
_REAL_MONOTONIC = (time.monotonic,)


def real_monotonic() -> float:
    """Real seconds, for safety limits only: never to let virtual time pass."""
    return _REAL_MONOTONIC[0]()


class VirtualClock(SteppedClock):
    def __init__(self, start: datetime = EPOCH) -> None:
        if start.utcoffset() != timedelta(0):
            raise ValueError(f"the virtual clock starts at a UTC instant, not {start!r}")
        super().__init__(start)
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
            sleepers = self._sleeping()
            listeners = list(self._listeners)
        for listener in listeners:
            listener(now)
        self._wake(sleepers)
