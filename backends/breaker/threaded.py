"""The threaded backends' breaker: every breaker operation runs on a worker pool thread.

In a threaded worker, admissions and outcomes come from the pool threads that run the
bodies, never from the caller's thread. This runtime does the same: each operation is
handed to its worker's `ThreadPoolExecutor`, so concurrent callers (the harness's
`CallsAtOnce`) really race on several pool threads over the shared store. Each peer is a
worker with its own pool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

from jobconform.backends.breaker.runtime import Readout, StoreBreakerRuntime
from jobconform.backends.protocol import Clock
from jobconform.backends.threaded.clock import sleep_until

T = TypeVar("T")
# Enough threads for the harness's largest burst of concurrent callers on one worker.
POOL_THREADS = 8
# A real-time bound on settle: it never lets time pass (the clock is virtual), it only
# turns a hung sweeper thread into an error.
SETTLE_LIMIT_SECONDS = 10.0


class BackstopSettleTimeout(RuntimeError):
    """The sweeper thread did not go back to sleep within the real-time safety limit."""


class BackstopSweeper:
    """The worker's maintenance thread for the breaker (SR-007): it sleeps on the clock
    until the next interval boundary counted from its start, runs the backstop sweep
    (CB-014) and sleeps again. `settle()` waits until it sleeps towards a boundary the
    clock has not reached."""

    def __init__(self, sweep: Callable[[], object], clock: Clock,
                 interval_seconds: float) -> None:
        self._sweep, self._clock = sweep, clock
        self._interval = timedelta(seconds=interval_seconds)
        self._state = threading.Condition()
        self._stopping = False
        self._next = clock.now() + self._interval
        self._asleep = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="breaker-backstop")
        self._thread.start()

    def _run(self) -> None:
        with self._state:
            while not self._stopping:
                if self._clock.now() >= self._next:
                    self._sweep()
                    self._next += self._interval
                    continue
                self._asleep = True
                self._state.notify_all()
                sleep_until(self._clock, self._state, self._next)
                self._asleep = False


    def _quiet(self) -> bool:
        return self._asleep and self._clock.now() < self._next

    def settle(self) -> None:
        with self._state:
            if not self._state.wait_for(self._quiet, timeout=SETTLE_LIMIT_SECONDS):
                raise BackstopSettleTimeout(
                    f"the breaker's sweeper thread did not sleep again within"
                    f" {SETTLE_LIMIT_SECONDS:g} s of real time (next sweep {self._next})")

    def stop(self) -> None:
        with self._state:
            self._stopping = True
            self._state.notify_all()
        self._thread.join()


class PooledBreakerRuntime:
    def __init__(self, inner: StoreBreakerRuntime) -> None:
        self._inner = inner
        self._pool = ThreadPoolExecutor(max_workers=POOL_THREADS,
                                        thread_name_prefix="breaker-worker")
        self._sweeper: BackstopSweeper | None = None

    def _on_pool(self, operation: Callable[[], T]) -> T:
        return self._pool.submit(operation).result()

    def set_global_switch(self, on: bool) -> None:
        self._on_pool(lambda: self._inner.set_global_switch(on))

    def set_opt_in(self, target: str, on: bool) -> None:
        self._on_pool(lambda: self._inner.set_opt_in(target, on))

    def admit(self, target: str, call: str) -> str:
        return self._on_pool(lambda: self._inner.admit(target, call))

    def record(self, target: str, call: str, outcome: str, failure_class: str | None) -> None:
        self._on_pool(lambda: self._inner.record(target, call, outcome, failure_class))

    def record_end(self, target: str, call: str, signal: str | None, exit_code: int | None,
                   output: bool, error_text: str) -> str:
        return self._on_pool(lambda: self._inner.record_end(target, call, signal, exit_code,
                                                            output, error_text))

    def report_end(self, signal: str | None, exit_code: int | None, output: bool,
                   error_text: str) -> dict[str, object]:
        return self._on_pool(lambda: self._inner.report_end(signal, exit_code, output,
                                                            error_text))

    def record_missed_heartbeat(self, target: str) -> None:
        self._on_pool(lambda: self._inner.record_missed_heartbeat(target))

    def enqueue(self, target: str, work: str) -> str:
        return self._on_pool(lambda: self._inner.enqueue(target, work))

    def backstop(self) -> int:
        return self._on_pool(self._inner.backstop)

    def set_drain_lost(self, lost: bool) -> None:
        self._on_pool(lambda: self._inner.set_drain_lost(lost))

    def start_backstop(self, interval_seconds: float) -> None:
        """Start the worker's own sweeper thread (SR-007)."""
        if self._sweeper is None:
            self._sweeper = BackstopSweeper(self._inner.backstop, self._inner.clock,
                                            interval_seconds)

    def settle(self) -> None:
        if self._sweeper is not None:
            self._sweeper.settle()

    def queued(self, target: str) -> Sequence[str]:
        return self._on_pool(lambda: self._inner.queued(target))

    def failed_work(self, target: str) -> Sequence[str]:
        return self._on_pool(lambda: self._inner.failed_work(target))

    def reset(self, target: str) -> None:
        self._on_pool(lambda: self._inner.reset(target))

    def read(self, target: str) -> Readout | None:
        return self._on_pool(lambda: self._inner.read(target))

    def logged_outages(self) -> int:
        return self._inner.logged_outages()

    def set_store_available(self, available: bool) -> None:
        self._on_pool(lambda: self._inner.set_store_available(available))

    def peer(self) -> PooledBreakerRuntime:
        return PooledBreakerRuntime(self._inner.peer())

    def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.stop()
        try:
            self._on_pool(self._inner.close)
        finally:
            self._pool.shutdown(wait=True)
