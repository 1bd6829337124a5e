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
