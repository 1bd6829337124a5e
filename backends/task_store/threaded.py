"""The threaded backend's task store: every call is served on a request thread.

A task manager's callers are many threads in a threaded deployment; this store serves each
call on a thread of a pool and the caller waits for the answer, so the store underneath
(in memory, or SQL for `threaded+sql`) is used from several real threads. It answers
directly: the sync form of the protocol.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.request_threads import REQUEST_THREADS, RequestThreads
from jobconform.backends.task_store.protocol import TaskStore, TaskView, reachability_seam
from jobconform.reference.store.oracle import TaskRecord


class RequestThreadTaskStore(RequestThreads):
    """A `TaskStore` that runs each call of `store` on a pool thread."""

    def __init__(self, store: TaskStore, threads: int = REQUEST_THREADS) -> None:
        super().__init__("store", threads)
        self._store = store
        seam = reachability_seam(store)
        if seam is not None:
            self.set_reachable = seam  # the fault seam of the store underneath (TS-011)

    def save(self, record: TaskRecord) -> None:
        self._on_request_thread(lambda: self._store.save(record))

    def put(self, record: TaskRecord) -> None:
        """Seed 004's Python `put`, the deprecated name of `save` (TS-013)."""
        warn_deprecated("TaskStore.put", "save")
        self.save(record)

    def get(self, task_id: str) -> TaskView | None:
        return self._on_request_thread(lambda: self._store.get(task_id))

    def list(self, status: str | None = None) -> builtins.list[TaskView]:
        return builtins.list(self._on_request_thread(lambda: self._store.list(status)))

    def delete(self, task_id: str) -> None:
        self._on_request_thread(lambda: self._store.delete(task_id))

    def list_expired(self, before: datetime) -> builtins.list[TaskView]:
        return builtins.list(self._on_request_thread(lambda: self._store.list_expired(before)))

    def close(self) -> None:
        super().close()
        self._store.close()
