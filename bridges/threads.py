"""Waits in a runtime's own threads end on the virtual clock, and settle sees them idle.

A runtime with worker threads sleeps between polls (`time.sleep`), waits for work with a
timeout (`Event.wait(timeout)`, `Condition.wait(timeout)`, and what is built on them:
`Condition.wait_for`, `Semaphore.acquire`, `Barrier.wait`, `queue.Queue.get` and `put`)
and blocks on conditions until another thread notifies it (a task body waiting for the
harness's decision). Inside `ThreadWaits(clock)`:

- the threads the runtime starts (inside `adopting()`, and every thread those threads
  start) are *adopted*;
- an adopted thread's timed wait ends when the harness advances the virtual clock to its
  deadline, and not before (unless it is notified, as usual);
- the standard library's own reckoning of a timeout agrees: `threading` and `queue` read
  `monotonic`, bound at their import, to see how much of a timeout is left and wait again
  for the rest. While the bridge is on, that reading (`STDLIB_WAIT_TIMERS`) is virtual in
  an adopted thread and real in any other, as each one's waits are, so `Queue.get(timeout)`
  raises `Empty` when the clock passes its deadline and a harness thread's timeout ends in
  real time;
- `settle()` returns once every adopted thread is waiting: on an untimed condition, or on
  a deadline the clock has not reached. A notify marks its waiters busy at once, so a
  thread that has been woken but has not run yet keeps settle waiting. A real-time safety
  limit (`real_monotonic`, whatever is frozen) turns a hang into `SettleTimeout` with every
  adopted thread's stack;
- `closing()`, called before the runtime's own close, ends every timed wait of its
  threads at once, as a timeout, from then on: a worker polling `queue.get(timeout=...)`
  sees its stop flag at once instead of after a virtual interval no one will advance;
- `join_woken(thread)` does the same for one thread told to stop (one of several
  schedulers), leaving the others' waits alone.

`ThreadWaits(clock, in_turn=True)` is for a runtime whose threads hand work to each other
on their own (a scheduler queues a due retry, then a worker's poll takes it) with no one
telling them to. In real time two such wake-ups never fall on the same instant; on the
virtual clock they often do, since every wait a jump ends starts again at the jump's
instant, and which thread runs first would be a race. In turn, the waits a jump ends are
woken one at a time, the earliest deadline first (ties: the thread started first), each
thread running until it waits again before the next wakes; a thread woken by someone
else's wake-up only (a shared condition) waits on. So the runtime behaves the same on
every run.

Threads the bridge did not adopt (the harness's own) keep real waits. Limits: a wait
bound before the bridge started (`from time import sleep` at import), a blocking
`Lock.acquire` without timeout (busy, not idle) and waits in C (`SimpleQueue.get`) are not
bridged, and a thread still waiting after `stop()` waits on real time again. A wait may
also end early when another waiter on the same condition times out, as a spurious
wake-up; code that loops on its own predicate, as threading code does, is not affected.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from jobconform.backends.protocol import Clock
from jobconform.conformance.clock import real_monotonic

SETTLE_LIMIT_SECONDS = 10.0
# Where the standard library reads the clock to reckon its timed waits: `from time import
# monotonic` bound at import in threading (Condition.wait_for, Semaphore.acquire, Barrier)
# and in queue (Queue.get and put with a timeout).
STDLIB_WAIT_TIMERS = ((threading, "_time"), (queue, "time"))

_original_sleep = time.sleep
_original_wait = threading.Condition.wait
_original_notify = threading.Condition.notify
_original_start = threading.Thread.start


@runtime_checkable
class AdvancingClock(Protocol):
    def now(self) -> datetime: ...
    def on_advance(self, listener: Callable[[datetime], None]) -> Callable[[], None]: ...


class SettleTimeout(RuntimeError):
    """The runtime's threads did not all come to a wait within the real-time safety limit."""


class ThreadWaitsBusy(RuntimeError):
    """Another thread-wait bridge is active in this process (one runtime at a time)."""


@dataclass
class _Wait:
    condition: threading.Condition
    deadline: datetime | None  # None: until notified
    woken: bool = False  # notified or past its deadline: the thread is about to run
    ends_at: float = 0.0  # the deadline as the thread's own timer reckons it (seconds())


_active: ThreadWaits | None = None
_install = threading.Lock()


def active_thread_waits() -> ThreadWaits | None:
    """The thread-wait bridge on in this process, if any (see wallclock.stop_left_on)."""
    return _active


class ThreadWaits:
    def __init__(self, clock: Clock, settle_limit_seconds: float = SETTLE_LIMIT_SECONDS,
                 in_turn: bool = False) -> None:
        if not isinstance(clock, AdvancingClock):
            raise TypeError("ThreadWaits needs a clock that tells it when it advances"
                            " (on_advance), such as the kit's VirtualClock")
        self._clock = clock
        self._limit = settle_limit_seconds
        self._in_turn = in_turn
        self._started: dict[threading.Thread, int] = {}  # adopted thread -> its start rank
        self._state = threading.Condition()  # guards everything below; sleeps wait on it
        self._adopted: set[threading.Thread] = set()
        self._waits: dict[threading.Thread, _Wait] = {}
        self._adopting: threading.Thread | None = None
        self._remove_listener: Callable[[], None] | None = None
        self._closing = False
        self._origin = clock.now()  # the timer reads the virtual seconds since start()
        # Per adopted thread, where its timer stands after a wait that ended as a timeout:
        # the virtual clock counts whole microseconds, the caller's end time is a float, and
        # its next reading must not fall short of that end by a rounding.
        self._timer_floor: dict[threading.Thread, float] = {}
        self._replaced_timers: list[object] = []

    # -- set-up ------------------------------------------------------------------------

    def start(self) -> ThreadWaits:
        global _active
        with _install:
            if _active is not None:
                raise ThreadWaitsBusy("a thread-wait bridge is already active; close the"
                                      " previous runtime first")
            _active = self
            time.sleep = _sleep  # type: ignore[assignment]
            threading.Condition.wait = _wait  # type: ignore[method-assign]
            threading.Condition.notify = _notify  # type: ignore[method-assign]
            threading.Thread.start = _start  # type: ignore[method-assign]
            self._origin = self._clock.now()
            self._replaced_timers = [getattr(module, name) for module, name in STDLIB_WAIT_TIMERS]
            for module, name in STDLIB_WAIT_TIMERS:
                setattr(module, name, _wait_timer)
        self._remove_listener = self._clock.on_advance(self._advanced)
        return self

    def stop(self) -> None:
        """Uninstall the bridge; every timed wait still on ends first, as a timeout."""
        global _active
        self.closing()
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None
        with _install:
            if _active is not self:
                return
            time.sleep = _original_sleep
            threading.Condition.wait = _original_wait  # type: ignore[method-assign]
            threading.Condition.notify = _original_notify  # type: ignore[method-assign]
            threading.Thread.start = _original_start  # type: ignore[method-assign]
            for (module, name), timer in zip(STDLIB_WAIT_TIMERS, self._replaced_timers,
                                             strict=True):
                setattr(module, name, timer)
            _active = None

    def closing(self) -> None:
        """The runtime closes: from now on every timed wait of its threads (a sleep, a
        poll with a timeout) ends at once, as a timeout, so a worker that polls sees its
        stop flag now. Call it before the runtime's own close, which joins its threads;
        untimed waits still end only when notified."""
        with self._state:
            self._closing = True
        self.wake_sleepers()

    def __enter__(self) -> ThreadWaits:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    @contextmanager
    def adopting(self) -> Iterator[None]:
        """Threads started by the calling thread inside this block are the runtime's."""
        with self._state:
            self._adopting = threading.current_thread()
        try:
            yield
        finally:
            with self._state:
                self._adopting = None

    def adopted(self) -> list[threading.Thread]:
        with self._state:
            return [thread for thread in self._adopted if thread.is_alive()]

    # -- settle --------------------------------------------------------------------------

    def settle(self) -> None:
        """Return once every adopted thread waits on something that has not happened yet.

        Raises:
            SettleTimeout: not quiet within the real-time safety limit.
        """
        # wait_for reckons the limit with threading's timer: real in this thread whatever
        # is frozen, since the bridge's own timer (_wait_timer) stands there.
        with self._state:
            if not self._state.wait_for(self._quiet, timeout=self._limit):
                raise SettleTimeout(self._stall_report())

    def wake_sleepers(self) -> None:
        """End every timed wait of an adopted thread now (`time.sleep`, `Event.wait`,
        `Condition.wait` with a timeout), as if its interval had ended: a dispatch point
        makes a polling runtime poll at once, without time passing."""
        self._wake(lambda wait: wait.deadline is not None)

    def join_woken(self, thread: threading.Thread) -> None:
        """Join an adopted thread that was told to stop, ending each timed wait it is in or
        enters as if its interval had ended, until it ends; the other threads' waits go on.
        A runtime that sleeps on the clock between looks at its stop flag (celery beat's
        loop) would otherwise wait for virtual time no one advances; waking it by
        `wake_sleepers` would wake every thread, and joining before it sleeps would miss it.

        Raises:
            SettleTimeout: the thread still runs after the real-time safety limit.
        """
        give_up = real_monotonic() + self._limit
        while thread.is_alive():
            with self._state:
                wait = self._waits.get(thread)
                if wait is not None and wait.deadline is not None and not wait.woken:
                    wait.woken = True
                    self._state.notify_all()
                else:
                    wait = None  # not in a timed wait (yet): look again in a moment
            if wait is not None and wait.condition is not self._state:
                with wait.condition:
                    _original_notify(wait.condition, sys.maxsize)
            thread.join(0.005)
            if real_monotonic() > give_up:
                raise SettleTimeout(f"{thread.name} did not end within {self._limit:g} s of"
                                    f" real time after it was told to stop\n"
                                    f"{self._stall_report()}")

    def _quiet(self) -> bool:
        for thread in self._adopted:
            if not thread.is_alive():
                continue
            wait = self._waits.get(thread)
            if wait is None or wait.woken:
                return False
        return True

    def _stall_report(self) -> str:
        lines = [f"the runtime's threads did not settle within {self._limit:g} s of real time"
                 " (a safety limit; virtual time does not pass while waiting); now "
                 f"{self._clock.now().isoformat()}"]
        frames = sys._current_frames()
        for thread in self._adopted:
            if not thread.is_alive():
                continue
            wait = self._waits.get(thread)
            what = ("running" if wait is None else "woken, not yet running" if wait.woken
                    else f"waiting until {wait.deadline}")
            frame = frames.get(thread.ident) if thread.ident is not None else None
            stack = "".join(traceback.format_stack(frame)) if frame else "(no frame)\n"
            lines.append(f"--- thread {thread.name} ({what}):\n{stack.rstrip()}")
        return "\n".join(lines)

    # -- the bridged waits (adopted threads only) ---------------------------------------

    def _advanced(self, now: datetime) -> None:
        if self._in_turn:
            self._wake_in_turn(now)
            return
        self._wake(lambda wait: (wait.deadline is not None and wait.deadline <= now
                                 and not wait.woken))

    def _wake(self, chosen: Callable[[_Wait], bool]) -> None:
        """End the bridged waits `chosen` picks as if their intervals had ended: each is
        marked woken and its condition notified (the bridge's own under its lock, any
        other under that condition's)."""
        with self._state:
            woken = [wait for wait in self._waits.values() if chosen(wait)]
            for wait in woken:
                wait.woken = True
            self._state.notify_all()
        for wait in woken:
            if wait.condition is not self._state:
                with wait.condition:
                    wait.condition.notify_all()

    def _wake_in_turn(self, now: datetime) -> None:
        """Wake the waits due at `now` one at a time, earliest deadline first, then the
        thread started first; each runs until it waits again before the next wakes."""
        while True:
            with self._state:
                due = [(wait.deadline, self._started.get(thread, 0), wait)
                       for thread, wait in self._waits.items()
                       if wait.deadline is not None and wait.deadline <= now and not wait.woken]
                if not due:
                    return
                first = min(due, key=lambda item: item[:2])[2]
                first.woken = True
                self._state.notify_all()
            if first.condition is not self._state:
                with first.condition:
                    # Not notify_all: the bridge would take every waiter on the condition
                    # as notified; the others wake, see it is not their turn and wait on.
                    _original_notify(first.condition, sys.maxsize)
            self.settle()

    def _enter(self, thread: threading.Thread, wait: _Wait) -> None:
        with self._state:
            self._waits[thread] = wait
            self._state.notify_all()

    def _leave(self, thread: threading.Thread) -> None:
        with self._state:
            self._waits.pop(thread, None)
            self._state.notify_all()

    def seconds(self) -> float:
        """The timer the standard library's timed waits read in an adopted thread: the
        virtual seconds since the bridge started."""
        elapsed = (self._clock.now() - self._origin).total_seconds()
        return max(elapsed, self._timer_floor.get(threading.current_thread(), 0.0))

    def sleep(self, seconds: float) -> None:
        thread = threading.current_thread()
        deadline = self._clock.now() + timedelta(seconds=max(0.0, seconds))
        wait = _Wait(self._state, deadline)
        with self._state:
            if self._closing or self._clock.now() >= deadline:
                return
            self._waits[thread] = wait
            self._state.notify_all()
            try:
                while not wait.woken:
                    _original_wait(self._state)
            finally:
                self._waits.pop(thread, None)

    def wait(self, condition: threading.Condition, timeout: float | None) -> bool:
        """Condition.wait for an adopted thread; the caller holds `condition`."""
        thread = threading.current_thread()
        if timeout is None:
            wait = _Wait(condition, None)
        else:
            wait = _Wait(condition, self._clock.now() + timedelta(seconds=max(0.0, timeout)),
                         ends_at=self.seconds() + timeout)
            if self._timed_out(wait):
                return False
        self._enter(thread, wait)
        try:
            _original_wait(condition)
            while self._in_turn and not (wait.woken or self._closing):
                _original_wait(condition)  # another thread's turn woke the condition
        finally:
            self._leave(thread)
        return not self._timed_out(wait)

    def _timed_out(self, wait: _Wait) -> bool:
        """Whether a timed wait is over (the clock is at or past its deadline, or the
        runtime closes); if so, the thread's timer reads at least its end from now on."""
        if wait.deadline is None or not (self._closing or self._clock.now() >= wait.deadline):
            return False
        thread = threading.current_thread()
        self._timer_floor[thread] = max(wait.ends_at, self._timer_floor.get(thread, 0.0))
        return True

    def notified(self, condition: threading.Condition, n: int) -> int:
        """Waiters about to be woken by a notify are busy from now on (FIFO, as Python).

        Returns:
            How many waiters the notify wakes: `n`; in turn, all of them, since a waiter
            that another's turn woke may be between two waits, out of the condition's
            own queue, and must not miss a notify (each goes back to its own predicate).
        """
        with self._state:
            waiting = [wait for wait in self._waits.values()
                       if wait.condition is condition and not wait.woken]
            if self._in_turn:
                n = sys.maxsize
            for wait in waiting[:n]:
                wait.woken = True
            if waiting:
                self._state.notify_all()
        return n

    def adopt_if_ours(self, thread: threading.Thread) -> None:
        current = threading.current_thread()
        with self._state:
            if not (current is self._adopting or current in self._adopted):
                return
            self._adopted.add(thread)
            self._started[thread] = len(self._started)
        run = thread.run

        def run_then_tell_settle() -> None:
            try:
                run()
            finally:
                with self._state:
                    self._adopted.discard(thread)
                    self._timer_floor.pop(thread, None)
                    self._state.notify_all()
        thread.run = run_then_tell_settle  # type: ignore[method-assign]

    def owns_current_thread(self) -> bool:
        return threading.current_thread() in self._adopted


def _sleep(seconds: float) -> None:
    bridge = _active
    if bridge is None or not bridge.owns_current_thread():
        _original_sleep(seconds)
    else:
        bridge.sleep(seconds)


def _wait(self: threading.Condition, timeout: float | None = None) -> bool:
    bridge = _active
    if bridge is None or self is getattr(bridge, "_state", None) \
            or not bridge.owns_current_thread():
        return _original_wait(self, timeout)
    return bridge.wait(self, timeout)


def _notify(self: threading.Condition, n: int = 1) -> None:
    bridge = _active
    if bridge is not None and self is not getattr(bridge, "_state", None):
        n = bridge.notified(self, n)
    _original_notify(self, n)


def _start(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
    bridge = _active
    if bridge is not None:
        bridge.adopt_if_ours(self)
    _original_start(self, *args, **kwargs)


def _wait_timer() -> float:
    """threading's and queue's clock while a bridge is on: virtual in an adopted thread,
    whose waits are virtual; real in any other, whose waits are real."""
    bridge = _active
    if bridge is not None and bridge.owns_current_thread():
        return bridge.seconds()
    return real_monotonic()
