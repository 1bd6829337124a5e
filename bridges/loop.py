"""The asyncio bridge: one event loop per runtime, whose time is the virtual clock.

`VirtualLoop(clock)` owns a private event loop that never runs on its own. The adapter's
synchronous protocol methods call into it with `run(coroutine)`; the harness's
`settle()` reaches it through `settle()`, which:

1. runs every ready callback, and whatever those make ready, until the loop is idle;
2. then fires every timer due up to the clock's current time, in due order, each with the
   loop's time (and the wall-clock bridge, when given) at the timer's own deadline: when
   600 s pass, a retry sleeping 1 s fires 600 times and a sweep every 300 s twice, each in
   its place;
3. and ends with the loop's time at the clock's time, idle.

"Idle" is the loop's own verdict: asyncio asks its selector to block only when no callback
is ready and no timer is due. The bridge's selector answers that request without blocking
(it polls the sockets once) and, between timer steps, moves the loop's time to the next
timer's deadline. Nothing waits on the wall clock for virtual time to pass.

`run(coroutine)` waits for the coroutine, letting sockets deliver (real I/O to a local
server takes real time, which is not virtual time passing). `settle()` does not know when
a runtime waits for an answer on a socket: a runtime that talks to a server says so with
`busy` (a query in flight; `InFlight` counts a client's calls awaiting an answer), and
while it is true settle waits for sockets instead of stepping the time or ending, so each
timer's queries are answered at its own deadline.
A coroutine still not done after the real-time safety limit, because it waits for
virtual time nobody advanced or for an event that never comes, is cancelled and raises
`CoroutineNeverFinished` naming it, with its stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import selectors
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from datetime import datetime, timedelta
from types import FrameType
from typing import Any, TypeVar

from jobconform.backends.protocol import Clock
from jobconform.conformance.clock import real_monotonic

T = TypeVar("T")
SAFETY_LIMIT_SECONDS = 10.0
# How long one wait for sockets lasts while run() waits for a coroutine (real time).
IO_POLL_SECONDS = 0.01
# How long a cancelled coroutine has to end before the bridge gives up on it (real time).
CANCEL_GRACE_SECONDS = 1.0


class CoroutineNeverFinished(RuntimeError):
    """A coroutine run by the bridge did not finish within the real-time safety limit."""


class _SteppingSelector(selectors.DefaultSelector):
    """The loop's selector: never blocks for virtual time; tells the bridge when idle."""

    def __init__(self, bridge: VirtualLoop) -> None:
        super().__init__()
        self._bridge = bridge

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        if not ready and timeout != 0:
            # asyncio would block: nothing is ready, and the next timer (if any) is
            # `timeout` seconds of loop time away. The bridge decides; it may wait for sockets.
            wait_for_sockets = self._bridge._idle(timeout)
            ready = super().select(wait_for_sockets) if wait_for_sockets else ready
        if ready:
            self._bridge._io_deadline = None  # a socket answered: the I/O limit starts again
        return ready


class _VirtualEventLoop(asyncio.SelectorEventLoop):
    def __init__(self, bridge: VirtualLoop) -> None:
        super().__init__(_SteppingSelector(bridge))
        self._bridge = bridge

    def time(self) -> float:
        return self._bridge.loop_time


class VirtualLoop:
    """A private event loop on the virtual clock.

    Args:
        clock: the harness's clock.
        on_step: called with the virtual time of each timer step (for instance
            `WallClock.move_to`, so that `datetime.now()` in a timer reads its deadline),
            and with the clock's time when the steps are done.
        safety_limit_seconds: real seconds `run` waits for a coroutine, and `settle` for
            an answer while `busy` stays true.
        busy: whether the runtime waits for an answer on a socket (a query in flight);
            settle waits for sockets while it is true. None: settle never waits.
    """

    def __init__(self, clock: Clock, on_step: Callable[[datetime], None] | None = None,
                 safety_limit_seconds: float = SAFETY_LIMIT_SECONDS,
                 busy: Callable[[], bool] | None = None) -> None:
        self._clock = clock
        self._origin = clock.now()
        self._on_step = on_step
        self._limit = safety_limit_seconds
        self._busy = busy
        self._stalled = False
        self._io_deadline: float | None = None
        self.loop_time = 0.0
        self._target = 0.0  # the clock's time, in loop seconds, that settle catches up to
        self._mode = "run"
        self._deadline = 0.0
        self.loop = _VirtualEventLoop(self)

    def _clock_seconds(self) -> float:
        return (self._clock.now() - self._origin).total_seconds()

    def _idle(self, next_timer_in: float | None) -> float:
        """The loop has nothing to do now; returns how long to wait for sockets (real s)."""
        if self._mode == "run":
            if real_monotonic() > self._deadline:
                self.loop.stop()
                return 0.0
            return IO_POLL_SECONDS  # a socket may be about to answer
        if self._busy is not None and self._busy():  # an answer takes no virtual time
            if self._io_deadline is None:
                self._io_deadline = real_monotonic() + self._limit
            if real_monotonic() <= self._io_deadline:
                return IO_POLL_SECONDS
            self._stalled = True
            self.loop.stop()
            return 0.0
        if next_timer_in is not None and self.loop_time + next_timer_in <= self._target:
            self._step_to(self.loop_time + next_timer_in)
            return 0.0
        self._step_to(self._target)
        self.loop.stop()
        return 0.0

    def _step_to(self, seconds: float) -> None:
        if seconds > self.loop_time:
            self.loop_time = seconds
            if self._on_step is not None:
                self._on_step(self._origin + timedelta(seconds=seconds))

    def settle(self) -> None:
        """Run ready callbacks and every timer due up to the clock's time, in due order.

        Raises:
            CoroutineNeverFinished: `busy` stayed true, with nothing else to run, for the
                safety limit (real time).
        """
        self._target = max(self.loop_time, self._clock_seconds())
        self._mode, self._stalled, self._io_deadline = "settle", False, None
        try:
            self.loop.run_forever()
        finally:
            self._mode = "run"
        if self._stalled:
            raise CoroutineNeverFinished(
                f"settle: I/O still in flight after {self._limit:g} s of real time (a safety"
                " limit): the server never answered, or busy() never turned false")

    def run(self, awaitable: Awaitable[T], name: str | None = None) -> T:
        """Run `awaitable` on the loop from synchronous code and return its result.

        Virtual time does not pass: a coroutine waiting for a later virtual time, or for
        something that never happens, is cancelled after the safety limit.

        Raises:
            CoroutineNeverFinished: not done within the safety limit; names the coroutine.
        """
        if self._clock_seconds() > self.loop_time:
            self.settle()  # timers the clock has passed fire first, each at its deadline
        label = name or getattr(awaitable, "__qualname__", None) or repr(awaitable)
        task = asyncio.ensure_future(awaitable, loop=self.loop)
        if isinstance(task, asyncio.Task) and task is not awaitable:
            task.set_name(label)  # close() names a task left running by its label
        task.add_done_callback(lambda _: self.loop.stop())
        self._deadline = real_monotonic() + self._limit
        self.loop.run_forever()
        if not task.done():
            stack = _format_stack(task)
            task.cancel()
            # A bounded wait for the cancellation to land: a coroutine may ignore it (it
            # catches CancelledError), and the error below must still be raised.
            self._deadline = real_monotonic() + min(self._limit, CANCEL_GRACE_SECONDS)
            with contextlib.suppress(RuntimeError):  # the loop stopped with it still running
                self.loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
            raise CoroutineNeverFinished(
                f"coroutine {label} did not finish within {self._limit:g} s of real time"
                " (a safety limit; virtual time does not pass inside run(): advance the"
                f" clock and settle instead). It was waiting at:\n{stack}")
        return task.result()

    def spawn(self, coroutine: Coroutine[Any, Any, T], name: str | None = None) -> asyncio.Task[T]:
        """Start a background task (a worker's main loop); it runs at each settle."""
        return self.loop.create_task(coroutine, name=name)

    def close(self) -> None:
        """Cancel every task left, let them end, and close the loop."""
        tasks = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            try:
                self.run(asyncio.gather(*tasks, return_exceptions=True), name="close")
            except CoroutineNeverFinished:
                stuck = "\n".join(f"{task.get_name()}, at:\n{_format_stack(task)}"
                                  for task in tasks if not task.done())
                raise CoroutineNeverFinished(
                    f"close: tasks still running {self._limit:g} s (real) after they were"
                    f" cancelled; they ignore cancellation:\n{stuck}") from None
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


class InFlight:
    """A client (a database connection, say) whose calls awaiting an answer are counted.

    Hand the runtime this proxy instead of the client, and give the loop its `busy`:
    `VirtualLoop(clock, busy=calls.busy)` settles only once every call is answered.

    Args:
        client: the object whose coroutine methods talk to a server.
        methods: the names of those methods; any other attribute is the client's own.
    """

    def __init__(self, client: Any, methods: Iterable[str]) -> None:
        self.client = client
        self._methods = frozenset(methods)
        self.count = 0

    def busy(self) -> bool:
        return self.count > 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if name not in self._methods:
            return attribute

        @functools.wraps(attribute)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            try:
                return await attribute(*args, **kwargs)
            finally:
                self.count -= 1
        return counted


def _format_stack(task: asyncio.Future[Any]) -> str:
    """Where a task waits: its coroutine and every coroutine it awaits, innermost last.

    A suspended task's own stack (`Task.get_stack`) is one frame, its outermost coroutine
    (a library's worker, say); the coroutine that really waits, the job's body, is found by
    following what each coroutine awaits."""
    if not isinstance(task, asyncio.Task):
        return "  (a future, not a coroutine: no frame)"
    frames: list[tuple[FrameType, int]] = []
    awaited: Any = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        frames.append((frame, frame.f_lineno))
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    if not frames:
        return "  (no frame)"
    return "".join(traceback.format_list(traceback.StackSummary.extract(frames[-8:]))).rstrip()
