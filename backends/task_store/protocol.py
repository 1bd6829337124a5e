"""The task store adapter protocol (seed 004 §1.1; spec/store.yaml, TS-001..TS-010).

A backend that claims the `store` capability has a method

    open_store(clock) -> TaskStore | AsyncTaskStore

returning a fresh store that holds no records. A store has five operations. Either it
answers them directly (`TaskStore`) or it returns awaitables (`AsyncTaskStore`, the form
seed 004's decision D-17 requires); the harness awaits whatever is awaitable on an event
loop of its own whose time is the virtual clock (`jobconform.bridges.VirtualLoop`), so a
store may mix the two, except under the `task-manager` profile, where every operation
must be awaitable (TS-009). The clock is given for stores that want one; time never
passes during a store check.

Records cross the boundary as `TaskRecord` values with canonical statuses; a store
returns any object with the same attributes (a `TaskView`), translating its own status
names with `jobconform.spec.Profile.to_canonical`. Nothing here needs inheriting.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from jobconform.backends.protocol import Clock
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.oracle import STATUSES, TERMINAL, TaskRecord

STORE = "store"

__all__ = ["STATUSES", "STORE", "TERMINAL", "AsyncTaskStore", "Clock", "TaskRecord",
           "TaskStore", "TaskView"]


class TaskView(Protocol):
    """A record as a store returns it; it must be a snapshot (TS-008)."""

    @property
    def task_id(self) -> str: ...
    @property
    def module_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def submitted_at(self) -> datetime: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def completed_at(self) -> datetime | None: ...
    @property
    def result(self) -> JsonValue: ...
    @property
    def error(self) -> str | None: ...
    @property
    def retry_count(self) -> int: ...
    @property
    def max_retries(self) -> int: ...


class TaskStore(Protocol):
    """A store answering directly. No operation raises for a valid argument."""

    def save(self, record: TaskRecord) -> None:
        """Create the record, or replace the one held under its task id as a whole
        (TS-001, TS-002). Several threads may call it at once; none loses its record
        (TS-010)."""
        ...

    def get(self, task_id: str) -> TaskView | None:
        """A snapshot of the record, or None for an id not held (TS-003)."""
        ...

    def list(self, status: str | None = None) -> Sequence[TaskView]:
        """Snapshots of every held record, or of those with this canonical status, each
        once, in any order (TS-004)."""
        ...

    def delete(self, task_id: str) -> None:
        """Forget the record; an id not held is a no-op (TS-005)."""
        ...

    def list_expired(self, before: datetime) -> Sequence[TaskView]:
        """Snapshots of the terminal records whose completed_at is set and strictly
        earlier than `before`, in any order (TS-006, TS-007)."""
        ...

    def close(self) -> None:
        """Release what the store holds (connections, threads)."""
        ...


class AsyncTaskStore(Protocol):
    """The same store with coroutines, as seed 004 requires (D-17). `close` may be a plain
    call or a coroutine."""

    async def save(self, record: TaskRecord) -> None: ...

    async def get(self, task_id: str) -> TaskView | None: ...

    async def list(self, status: str | None = None) -> builtins.list[TaskView]: ...

    async def delete(self, task_id: str) -> None: ...

    async def list_expired(self, before: datetime) -> builtins.list[TaskView]: ...
