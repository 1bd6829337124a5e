"""The wall-clock bridge: a runtime that reads the system clock reads the virtual one.

Inside `WallClock(clock)`, `time.time()`, `time.time_ns()`, `time.monotonic()`,
`time.perf_counter()`, `datetime.now()`, `datetime.utcnow()` and `date.today()` answer the
harness's virtual time, in every thread of the process, the runtime's own included. It is
built on freezegun (`freeze_time` without ticking, `real_asyncio=True` so that an event
loop beside it keeps its own clock) and moved by the clock itself: the kit's
`VirtualClock` calls the bridge at every advance, before any sleeping thread wakes.

What it leaves real on purpose: the clock `threading` and `queue` reckon their timeouts
with (`Condition.wait_for`, `Semaphore.acquire`, `Barrier.wait`, `Queue.get(timeout)`).
Their waits are lock acquires with a real timeout; frozen, the reckoning would find the
whole timeout still left after every wait and wait again, forever, so a worker polling a
queue would never see its stop flag. Three ways were weighed. Putting `threading` back on
freezegun's ignore list is not one: that list also decides, by looking a few frames up the
caller's stack, who reads real time, and every worker thread's body sits a few frames
below `Thread.run`. Freezing the timers and letting them tick would make waits depend on
real time in virtual results. So the bridge keeps them real here ("real, with the
timeout as its bound"), and `ThreadWaits`, which makes an adopted thread's waits virtual,
makes that thread's reckoning virtual with them (`STDLIB_WAIT_TIMERS`): each thread's
timeouts end by the clock its waits run on.

What it mends: freezegun turns a datetime it hands back (from `astimezone`, arithmetic,
`now`) into its own type through a helper that drops `fold` (spulec/freezegun#422, still
open), so under it the second 01:30 of a night whose clocks move back reads as the first,
and a library walking a time zone through a DST fold goes wrong or loops forever
(APScheduler's CronTrigger does). While the bridge is on, that helper keeps `fold`.

What it cannot reach: C extensions that read the clock themselves (a driver's own
timestamps), `from time import monotonic` bound before the bridge started in a module
freezegun does not scan, and a database server's `now()`. An adapter compares only what
the client writes, or says so in its deviation list.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Protocol

import freezegun
import freezegun.config

from jobconform.backends.protocol import Clock
from jobconform.bridges.threads import STDLIB_WAIT_TIMERS, ThreadWaits, active_thread_waits
from jobconform.conformance.clock import VirtualClock, real_monotonic

# Modules that must keep reading real time while the bridge is on: the kit's own
# durations (its safety limits read `real_monotonic`, out of any freezer's reach).
# freezegun's default list also names `threading`, which would hand real time to every
# worker thread whose loop sits within a few frames of `Thread.run`, exactly the threads
# this bridge is for; so the list is replaced.
REAL_TIME_MODULES = [
    "jobconform.conformance.runner",
    "jobconform.conformance.cli",
    "_pytest.timing",  # pytest's own durations
    "_pytest.runner.",
    "_pytest.terminal.",
]
# freezegun keeps one stack of active freezes for the whole process; two bridges at once
# would move each other's time, so they take turns.
_ACTIVE = threading.Lock()
# The bridge that holds `_ACTIVE`, for `stop_left_on` (a runtime whose close never ended).
_active: WallClock | None = None


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
        # Its parameter is named `datetime` there; every caller passes it by position.
        freezegun.api.datetime_to_fakedatetime = _to_fake_keeping_fold  # type: ignore[assignment]
        _keep_stdlib_wait_timers_real()
        assert isinstance(factory, freezegun.api.FrozenDateTimeFactory)
        self._frozen = factory
        on_advance = getattr(self._clock, "on_advance", None)
        if on_advance is not None:
            self._remove_listener = on_advance(self.move_to)
        global _active
        _active = self
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
        global _active
        if self._freezer is None:
            return
        _active = None
        if callable(self._remove_listener):
            self._remove_listener()
        with self._move:
            self._frozen = None
        self._freezer.stop()
        self._freezer = None
        freezegun.api.datetime_to_fakedatetime = _FREEZEGUN_TO_FAKE
        _ACTIVE.release()

    def __enter__(self) -> WallClock:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def stop_left_on() -> list[str]:
    """Stop the clock bridges still on: a runtime that hung in its close (or raised before
    its bridges' `stop`) leaves freezegun freezing every clock of the process and its
    threads' waits on a virtual clock no one advances; the kit calls this once the runtime
    is given up, so that its own clock, the next runtime's bridges and the process's exit
    are real again. Returns what it stopped (nothing when the runtime closed its own)."""
    stopped = []
    if (wall := _active) is not None:
        wall.stop()
        stopped.append("the wall-clock bridge (freezegun)")
    if (waits := active_thread_waits()) is not None:
        waits.stop()
        stopped.append("the thread-wait bridge")
    return stopped


@contextmanager
def importing_on_bridges(*modules: str) -> Iterator[None]:
    """Import inside this block a library that binds the clock when it is imported (`from
    time import sleep`, `time.monotonic` as a default argument): what it binds is then the
    bridges' own, which reads the virtual clock while a runtime's bridges are on and real
    time otherwise. Imported anywhere else first, those bindings stay real for good.

    Args:
        modules: the library's modules that bind the clock, to check they are not imported.

    Raises:
        ImportError: one of `modules` was imported already, bound to the real clock.
    """
    early = [name for name in modules if name in sys.modules]
    if early:
        raise ImportError(f"{', '.join(early)} imported before the bridges were on: bound to"
                          " the real clock for good; import them in importing_on_bridges()")
    clock = VirtualClock()
    with WallClock(clock), ThreadWaits(clock):
        yield


_FREEZEGUN_TO_FAKE = freezegun.api.datetime_to_fakedatetime


def _to_fake_keeping_fold(value: datetime) -> freezegun.api.FakeDatetime:
    """freezegun's conversion to its datetime type, keeping `fold` (see the docstring)."""
    return freezegun.api.FakeDatetime(value.year, value.month, value.day, value.hour,
                                      value.minute, value.second, value.microsecond,
                                      value.tzinfo, fold=value.fold)


def _keep_stdlib_wait_timers_real() -> None:
    """Undo freezegun's scan for the clock of the standard library's timed waits (see
    the module's docstring); freezegun's own stop restores the original anyway. A timer
    `ThreadWaits` installed is not freezegun's and stays."""
    frozen = time.monotonic  # freezegun's fake while it is on
    for module, name in STDLIB_WAIT_TIMERS:
        if getattr(module, name) is frozen:
            setattr(module, name, real_monotonic)
