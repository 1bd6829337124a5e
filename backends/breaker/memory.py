"""The memory backend's breaker store: rows and queues in dicts under one lock.

Peers of one check share the store object, as worker threads of one process share
memory; the lock makes each compare-and-swap atomic.
"""

from __future__ import annotations

import threading

from jobconform.backends.breaker.runtime import (
    BreakerDeployment,
    BreakerRow,
    StoreBreakerRuntime,
    StoreUnavailable,
)
from jobconform.backends.protocol import Clock
from jobconform.reference.breaker.oracle import BreakerSettings


class InMemoryBreakerStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, BreakerRow] = {}
        self._queues: dict[str, list[str]] = {}
        self._failed: dict[str, list[str]] = {}
        self._available = True

    def _reachable(self) -> None:
        if not self._available:
            raise StoreUnavailable("the in-memory breaker store is marked unavailable")

    def load(self, target: str) -> BreakerRow | None:
        with self._lock:
            self._reachable()
            return self._rows.get(target)

    def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
        with self._lock:
            self._reachable()
            if self._rows.get(target := new.target) != expected:
                return False
            self._rows[target] = new
            return True

    def enqueue(self, target: str, work: str) -> None:
        with self._lock:
            self._queues.setdefault(target, []).append(work)

    def queued(self, target: str) -> list[str]:
        with self._lock:
            return list(self._queues.get(target, []))

    def queued_targets(self) -> list[str]:
        with self._lock:
            return [target for target, work in self._queues.items() if work]

    def fail_queued(self, target: str) -> int:
        with self._lock:
            work = self._queues.pop(target, [])
            self._failed.setdefault(target, []).extend(work)
            return len(work)

    def failed(self, target: str) -> list[str]:
        with self._lock:
            return list(self._failed.get(target, []))

    def set_available(self, available: bool) -> None:
        with self._lock:
            self._available = available

    def close(self) -> None:
        """Nothing to release: peers share the dicts, and the garbage collector frees them."""


def open_memory_breaker(clock: Clock, settings: BreakerSettings) -> StoreBreakerRuntime:
    return StoreBreakerRuntime(InMemoryBreakerStore(), clock, settings, BreakerDeployment())
