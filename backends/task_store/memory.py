"""In-memory task stores: a dict of frozen records behind one lock.

`InMemoryTaskStore` answers directly; `AsyncInMemoryTaskStore` is the same store behind
coroutines, the shape seed 004 gives its default store (D-17: async even though nothing
in it waits). Records are frozen values, so handing out the held ones is handing out
snapshots (TS-008).
"""

from __future__ import annotations

import builtins
import threading
from datetime import datetime

from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.task_store.protocol import TERMINAL, TaskRecord, reachability_seam


class InMemoryTaskStore:
    """A `TaskStore` in a dict; the lock makes it safe for the threaded backend's request
    threads. It has no backend to lose, so it offers no reachability seam and never
    raises TASK_STORE_UNAVAILABLE (TS-011)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, TaskRecord] = {}

    def save(self, record: TaskRecord) -> None:
        with self._lock:
            self._records[record.task_id] = record

    def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            return self._records.get(task_id)

    def list(self, status: str | None = None) -> builtins.list[TaskRecord]:
        with self._lock:
            return [record for record in self._records.values()
                    if status is None or record.status == status]

    def delete(self, task_id: str) -> None:
        with self._lock:
            self._records.pop(task_id, None)

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        with self._lock:
            # Finished (TS-007) strictly before `before` (TS-006), as the SQL store's query.
            return [record for record in self._records.values()
                    if record.status in TERMINAL and record.completed_at is not None
                    and record.completed_at < before]

    def close(self) -> None:
        with self._lock:
            self._records.clear()


class AsyncInMemoryTaskStore:
    """An `AsyncTaskStore` over an `InMemoryTaskStore`: nothing awaits, the calls are
    coroutines only so that callers compose every store the same way."""

    def __init__(self, store: InMemoryTaskStore | None = None) -> None:
        self._store = store if store is not None else InMemoryTaskStore()
        seam = reachability_seam(self._store)
        if seam is not None:
            self.set_reachable = seam  # a wrapped store with a backend to lose (TS-011)

    async def save(self, record: TaskRecord) -> None:
        self._store.save(record)

    async def put(self, record: TaskRecord) -> None:
        """Seed 004's Python `put`, the deprecated name of `save` (TS-013)."""
        warn_deprecated("TaskStore.put", "save")
        await self.save(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        return self._store.get(task_id)

    async def list(self, status: str | None = None) -> builtins.list[TaskRecord]:
        return self._store.list(status)

    async def delete(self, task_id: str) -> None:
        self._store.delete(task_id)

    async def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        return self._store.list_expired(before)

    def close(self) -> None:
        self._store.close()
