"""An async store over any blocking one: each call runs on a worker thread.

A store doing blocking I/O (the SQL store) must not stall the event loop it serves, which
is why seed 004 makes the TaskStore async (D-17). `ThreadOffloadedTaskStore` gives such a
store the async interface by running every call with `asyncio.to_thread`: the coroutine
waits, the loop goes on with other work.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Sequence
from datetime import datetime

from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.task_store.protocol import TaskStore, TaskView, reachability_seam
from jobconform.reference.store.oracle import TaskRecord


class ThreadOffloadedTaskStore:
    """An `AsyncTaskStore` running each call of `store` on a worker thread."""

    def __init__(self, store: TaskStore) -> None:
        self._store = store
        seam = reachability_seam(store)
        if seam is not None:
            self.set_reachable = seam  # the fault seam of the store underneath (TS-011)

    async def save(self, record: TaskRecord) -> None:
        await asyncio.to_thread(self._store.save, record)

    async def put(self, record: TaskRecord) -> None:
        """Seed 004's Python `put`, the deprecated name of `save` (TS-013)."""
        warn_deprecated("TaskStore.put", "save")
        await self.save(record)

    async def get(self, task_id: str) -> TaskView | None:
        return await asyncio.to_thread(self._store.get, task_id)

    async def list(self, status: str | None = None) -> builtins.list[TaskView]:
        found: Sequence[TaskView] = await asyncio.to_thread(self._store.list, status)
        return builtins.list(found)

    async def delete(self, task_id: str) -> None:
        await asyncio.to_thread(self._store.delete, task_id)

    async def list_expired(self, before: datetime) -> builtins.list[TaskView]:
        found: Sequence[TaskView] = await asyncio.to_thread(self._store.list_expired, before)
        return builtins.list(found)

    def close(self) -> None:
        self._store.close()
