"""Adapters that break the protocol itself rather than the spec, for the promise that a
report is always written (tests/test_always_reported.py).

Each fails in a way no requirement describes: it hangs, lacks methods, hands back
something that is not a record, or raises where the protocol allows no exception. A run
against any of them must still end with report.json and junit.xml naming the problem,
and without a Python traceback on the console. They are not in the self-test gallery,
which holds spec deviations only.
"""

from __future__ import annotations

import sys
import threading

from jobconform.backends.memory import MemoryRuntime
from jobconform.backends.process import ProcessBackend
from jobconform.backends.process.child import ChildServer
from jobconform.backends.process.child import main as child_main
from jobconform.backends.protocol import LIFECYCLE, RETRY, Clock, RuntimeSettings
from jobconform.bridges import WallClock
from jobconform.conformance.gallery import OverRuntime
from jobconform.conformance.harness import SAFETY_TIMEOUT_SECONDS
from jobconform.reference.backoff import Jitter, RetryPolicy


class _LifecycleOnly(OverRuntime):
    capabilities = frozenset({LIFECYCLE})


class HangingDispatchRuntime(MemoryRuntime):
    """`dispatch` never returns: it waits for an event nobody sets (the watchdog's case)."""

    def dispatch(self) -> None:
        threading.Event().wait()


class HangingDispatchBackend(_LifecycleOnly):
    name = "broken.hanging_dispatch"
    runtime_type = HangingDispatchRuntime


class HangingSettleRuntime(MemoryRuntime):
    """`settle` never returns, so every case hangs at its first command (the issue's
    hang-every-time adapter: one safety limit per area and suite process, not per case)."""

    def settle(self) -> None:
        threading.Event().wait()


class HangingSettleBackend(_LifecycleOnly):
    name = "broken.hanging_settle"
    runtime_type = HangingSettleRuntime


class HangingCloseRuntime(MemoryRuntime):
    """The second runtime's `close` waits for a worker that never stops, for the kit's
    real-time safety timeout, then gives up and raises before it stops its wall-clock
    bridge, as Celery's embedded worker does when its join gives up at the same limit:
    the kit must say it hung at close, not that the backend is nondeterministic (every
    other runtime closes at once, so a replay of the example would pass), and stop the
    freezegun bridge the runtime left on."""

    def __init__(self, settings: RuntimeSettings, clock: Clock, hangs: bool) -> None:
        super().__init__(settings, clock)
        self.hangs, self.wall = hangs, WallClock(clock).start()

    def close(self) -> None:
        super().close()
        if self.hangs:
            threading.Event().wait(SAFETY_TIMEOUT_SECONDS)  # its join's own limit
            raise RuntimeError("the worker thread did not stop within its join's timeout")
        self.wall.stop()


class HangingCloseBackend(_LifecycleOnly):
    name = "broken.hanging_close"
    HANGING = 2  # the runtime whose close hangs, counted from the run's first

    def __init__(self) -> None:
        self.opened = 0

    def open(self, settings: RuntimeSettings, clock: Clock) -> HangingCloseRuntime:
        self.opened += 1
        return HangingCloseRuntime(settings, clock, hangs=self.opened == self.HANGING)


class RaisingCloseRuntime(MemoryRuntime):
    """`close` raises: every case fails on it, in Behave and Robot alike."""

    def close(self) -> None:
        raise RuntimeError("close exploded")


class RaisingCloseBackend(_LifecycleOnly):
    name = "broken.raising_close"
    runtime_type = RaisingCloseRuntime


class InterruptingDispatchRuntime(MemoryRuntime):
    """`dispatch` raises KeyboardInterrupt, as Ctrl-C would inside the adapter."""

    def dispatch(self) -> None:
        raise KeyboardInterrupt


class InterruptingDispatchBackend(_LifecycleOnly):
    name = "broken.interrupting_dispatch"
    runtime_type = InterruptingDispatchRuntime


class UnknownProfileBackend(_LifecycleOnly):
    """Declares a profile the spec does not define."""

    name = "broken.unknown_profile"
    profile = "no-such-profile"


class MissingMethodsRuntime:
    """A runtime with `submit` and `close` only: every other protocol method is missing."""

    def __init__(self, runtime: MemoryRuntime) -> None:
        self.submit = runtime.submit
        self.close = runtime.close


class MissingMethodsBackend(_LifecycleOnly):
    name = "broken.missing_methods"

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MissingMethodsRuntime(MemoryRuntime(settings, clock))  # type: ignore[return-value]


class GarbageGetRuntime(MemoryRuntime):
    """`get` returns a plain dict of the record's fields instead of a record."""

    def get(self, job_id: str) -> object:  # type: ignore[override]
        job = super().get(job_id)
        return None if job is None else {"status": job.status, "job_id": job.job_id}


class GarbageGetBackend(_LifecycleOnly):
    name = "broken.garbage_get"
    runtime_type = GarbageGetRuntime


class OverflowingDelayRuntime(MemoryRuntime):
    """The delay function raises OverflowError at large attempt numbers (no clamp)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        if attempt > 50:
            raise OverflowError("(34, 'Numerical result out of range')")
        return super().compute_delay_ms(policy, attempt, jitter, draw, previous_ms,
                                        retry_after_ms)


class OverflowingDelayBackend(OverRuntime):
    name = "broken.overflowing_delay"
    capabilities = frozenset({LIFECYCLE, RETRY})
    runtime_type = OverflowingDelayRuntime


class ExitingSubmitRuntime(MemoryRuntime):
    """`submit` calls sys.exit, as an SDK's fatal-error path might."""

    def submit(self, *args: object, **kwargs: object) -> str:
        sys.exit(7)


class ExitingSubmitBackend(_LifecycleOnly):
    name = "broken.exiting_submit"
    runtime_type = ExitingSubmitRuntime


class ExitingOpenBackend(_LifecycleOnly):
    """`open` calls sys.exit (a runtime that cannot start and ends the process)."""

    name = "broken.exiting_open"

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        sys.exit(4)


class ExitingCloseRuntime(MemoryRuntime):
    """`close` calls sys.exit after closing."""

    def close(self) -> None:
        super().close()
        sys.exit(5)


class ExitingCloseBackend(_LifecycleOnly):
    name = "broken.exiting_close"
    runtime_type = ExitingCloseRuntime


hanging_dispatch = HangingDispatchBackend
hanging_settle = HangingSettleBackend
hanging_close = HangingCloseBackend
raising_close = RaisingCloseBackend
unknown_profile = UnknownProfileBackend
interrupting_dispatch = InterruptingDispatchBackend
missing_methods = MissingMethodsBackend
garbage_get = GarbageGetBackend
overflowing_delay = OverflowingDelayBackend
exiting_submit = ExitingSubmitBackend
exiting_open = ExitingOpenBackend
exiting_close = ExitingCloseBackend


# -- a process child that writes one bad line mid-session ---------------------------------

BAD_LINE_AT = 60  # the child's answer number that is not JSON


class BadLineOnceChild(ChildServer):
    """The reference child, except that its 60th answer is a line that is not JSON."""

    answered = 0

    def answer(self, line: str) -> str:
        self.answered += 1
        if self.answered == BAD_LINE_AT:
            return "this is not a JSON answer\n"
        return super().answer(line)


class BadLineOnceBackend(ProcessBackend):
    def __init__(self) -> None:
        super().__init__(command=[sys.executable, "-m", __name__])
        self.name = "broken.bad_line_once"


bad_line_once = BadLineOnceBackend

if __name__ == "__main__":
    sys.exit(child_main([], server_type=BadLineOnceChild))
