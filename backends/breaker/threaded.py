"""The threaded backends' breaker: every breaker operation runs on a worker pool thread.

In a threaded worker, admissions and outcomes come from the pool threads that run the
bodies, never from the caller's thread. This runtime does the same: each operation is
handed to its worker's `ThreadPoolExecutor`, so concurrent callers (the harness's
`CallsAtOnce`) really race on several pool threads over the shared store. Each peer is a
worker with its own pool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from jobconform.backends.breaker.runtime import Readout, StoreBreakerRuntime

T = TypeVar("T")
# Enough threads for the harness's largest burst of concurrent callers on one worker.
POOL_THREADS = 8


class PooledBreakerRuntime:
    def __init__(self, inner: StoreBreakerRuntime) -> None:
        self._inner = inner
        self._pool = ThreadPoolExecutor(max_workers=POOL_THREADS,
                                        thread_name_prefix="breaker-worker")

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

    def record_missed_heartbeat(self, target: str) -> None:
        self._on_pool(lambda: self._inner.record_missed_heartbeat(target))

    def enqueue(self, target: str, work: str) -> str:
        return self._on_pool(lambda: self._inner.enqueue(target, work))

    def backstop(self) -> int:
        return self._on_pool(self._inner.backstop)

    def set_drain_lost(self, lost: bool) -> None:
        self._on_pool(lambda: self._inner.set_drain_lost(lost))

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
        try:
            self._on_pool(self._inner.close)
        finally:
            self._pool.shutdown(wait=True)
