"""The threaded backends' governor: every governor operation runs on a worker pool thread,
as a threaded worker's bodies offer re-deliveries and report results from pool threads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TypeVar

from jobconform.backends.governor.runtime import StoreGovernorRuntime, Verdict

T = TypeVar("T")
POOL_THREADS = 4


class PooledGovernorRuntime:
    def __init__(self, inner: StoreGovernorRuntime) -> None:
        self._inner = inner
        self._pool = ThreadPoolExecutor(max_workers=POOL_THREADS,
                                        thread_name_prefix="governor-worker")

    def _on_pool(self, operation: Callable[[], T]) -> T:
        return self._pool.submit(operation).result()

    def redelivery_wait_ms(self, previous_ms: float | None, draw: float,
                           retry_after_ms: float | None) -> float:
        return self._on_pool(lambda: self._inner.redelivery_wait_ms(previous_ms, draw,
                                                                    retry_after_ms))

    def offer(self, target: str) -> Verdict:
        return self._on_pool(lambda: self._inner.offer(target))

    def record_failure(self, target: str, failure_class: str, result_id: str) -> None:
        self._on_pool(lambda: self._inner.record_failure(target, failure_class, result_id))

    def record_rate_limited(self, target: str, result_id: str) -> None:
        self._on_pool(lambda: self._inner.record_rate_limited(target, result_id))

    def record_raw_end(self, target: str, result_id: str, signal: str | None,
                       exit_code: int | None, output: bool, error_text: str) -> None:
        self._on_pool(lambda: self._inner.record_raw_end(target, result_id, signal,
                                                         exit_code, output, error_text))

    def paused_until(self) -> datetime | None:
        return self._on_pool(self._inner.paused_until)

    def restart(self, draw: float) -> None:
        self._on_pool(lambda: self._inner.restart(draw))

    def resend_sweep_at(self) -> datetime | None:
        return self._on_pool(self._inner.resend_sweep_at)

    def set_store_available(self, available: bool) -> None:
        self._on_pool(lambda: self._inner.set_store_available(available))

    def set_enabled(self, enabled: bool) -> None:
        self._on_pool(lambda: self._inner.set_enabled(enabled))

    def resend_times(self, draws: Sequence[float]) -> list[datetime] | None:
        return self._on_pool(lambda: self._inner.resend_times(draws))

    def peer(self) -> PooledGovernorRuntime:
        return PooledGovernorRuntime(self._inner.peer())

    def close(self) -> None:
        try:
            self._on_pool(self._inner.close)
        finally:
            self._pool.shutdown(wait=True)
