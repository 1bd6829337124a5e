"""The wall-clock bridge: a runtime that reads the system clock reads the virtual one.

Inside `WallClock(clock)`, `time.time()`, `time.time_ns()`, `time.monotonic()`,
`time.perf_counter()`, `datetime.now()`, `datetime.utcnow()` and `date.today()` answer the
harness's virtual time, in every thread of the process, the runtime's own included. It is
built on freezegun (`freeze_time` without ticking, `real_asyncio=True` so that an event
loop beside it keeps its own clock) and moved by the clock itself: the kit's
`VirtualClock` calls the bridge at every advance, before any sleeping thread wakes.

What it cannot reach: C extensions that read the clock themselves (a driver's own
timestamps), `from time import monotonic` bound before the bridge started in a module
freezegun does not scan (the standard library's `threading` and `queue` among them), and
a database server's `now()`. An adapter compares only what the client writes, or says so
in its deviation list.
"""

from __future__ import annotations

import threading
from datetime import datetime
from types import TracebackType
from typing import Protocol

import freezegun
import freezegun.config

from jobconform.backends.protocol import Clock

# Modules that must keep reading real time while the bridge is on: the kit's own
# safety limits and durations. freezegun's default list also names `threading`, which
# would hand real time to every worker thread whose loop sits within a few frames of
# `Thread.run`, exactly the threads this bridge is for; so the list is replaced.
REAL_TIME_MODULES = [
    "jobconform.conformance.watchdog",
    "jobconform.conformance.runner",
    "jobconform.conformance.cli",
    "_pytest.timing",  # pytest's own durations
    "_pytest.runner.",
    "_pytest.terminal.",
]
# freezegun keeps one stack of active freezes for the whole process; two bridges at once
# would move each other's time, so they take turns.
_ACTIVE = threading.Lock()


class _Freezer(Protocol):
    def start(self) -> object: ...
    def stop(self) -> None: ...


class WallClockBusy(RuntimeError):
    """Another wall-clock bridge is active in this process (one runtime at a time)."""


class WallClock:
    """The system clock follows `clock` while this bridge is active.

    Use it as a context manager, or `start()` it in the runtime's constructor and `stop()`
    it in `close()`. `move_to(when)` sets the wall clock by hand, for instance to a timer's
    own deadline while an event loop catches up (`jobconform.bridges.loop`).
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._freezer: _Freezer | None = None
        self._frozen: freezegun.api.FrozenDateTimeFactory | None = None
        self._remove_listener: object = None
        self._move = threading.Lock()

    def start(self) -> WallClock:
        if not _ACTIVE.acquire(blocking=False):
            raise WallClockBusy("a wall-clock bridge is already active in this process;"
                                " close the previous runtime first")
        previous = freezegun.config.settings.default_ignore_list
        freezegun.configure(default_ignore_list=list(REAL_TIME_MODULES))
        try:
            self._freezer = freezegun.freeze_time(self._clock.now(), tick=False,
                                                  real_asyncio=True)
        finally:
            freezegun.configure(default_ignore_list=previous)
        factory = self._freezer.start()
        assert isinstance(factory, freezegun.api.FrozenDateTimeFactory)
        self._frozen = factory
        on_advance = getattr(self._clock, "on_advance", None)
        if on_advance is not None:
            self._remove_listener = on_advance(self.move_to)
        return self

    def move_to(self, when: datetime) -> None:
        """Set the wall clock (every advance of a kit clock does this by itself)."""
        with self._move:
            if self._frozen is not None:
                self._frozen.move_to(when)

    def sync(self) -> None:
        """Catch up with a clock that cannot tell the bridge when it moves."""
        self.move_to(self._clock.now())

    def stop(self) -> None:
        if self._freezer is None:
            return
        if callable(self._remove_listener):
            self._remove_listener()
        with self._move:
            self._frozen = None
        self._freezer.stop()
        self._freezer = None
        _ACTIVE.release()

    def __enter__(self) -> WallClock:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
