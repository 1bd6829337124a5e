"""The task store adapter protocol (seed 004 §1.1; spec/store.yaml, TS-001..TS-012).

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

A store whose backend can be lost (a database, a network service) reports an unreachable
backend with an error whose `code` is `TASK_STORE_UNAVAILABLE` (`TaskStoreError`, or a
class of the store's own with that attribute; TS-011), and offers the harness the fault
seam of `ReachabilitySeam`, `set_reachable(reachable)`, which cuts the store off its
backend as an outage would (the SQL store points at a database that cannot be reached).
A store kept in memory has no backend to lose: it offers no seam, and the harness checks
that it goes on answering. The seam is not part of `TaskStore`, so it never crosses the
process protocol.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from jobconform.backends.protocol import Clock
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.oracle import STATUSES, TERMINAL, TaskRecord

STORE = "store"
# The code of the error for a backend that cannot be reached (seed 004, TS-011).
TASK_STORE_UNAVAILABLE = "TASK_STORE_UNAVAILABLE"

__all__ = ["STATUSES", "STORE", "TASK_STORE_UNAVAILABLE", "TERMINAL", "AsyncTaskStore",
           "Clock", "ReachabilitySeam", "TaskRecord", "TaskStore", "TaskStoreError",
           "TaskView", "reachability_seam"]


class TaskStoreError(Exception):
    """Seed 004's TaskStoreError: an operation the store could not carry out, with a
    code saying why (`TASK_STORE_UNAVAILABLE`: the backend cannot be reached)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class ReachabilitySeam(Protocol):
    """The fault seam of a store whose backend can be lost (TS-011)."""

    def set_reachable(self, reachable: bool) -> None:
        """Fault injection by the harness: cut the store off its backend (False), as an
        outage would, or connect it again (True). What the backend held is kept."""
        ...


def reachability_seam(store: object) -> Callable[[bool], None] | None:
    """The store's `set_reachable`, or None for a store without a backend to lose. A
    store wrapping another offers the seam exactly when the wrapped one does."""
    seam = getattr(store, "set_reachable", None)
    return seam if callable(seam) else None


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
    """A store answering directly. No operation raises for a valid argument, except with
    `TASK_STORE_UNAVAILABLE` while the backend cannot be reached (TS-011). Every
    operation may be called from several threads at once (TS-010, TS-012)."""

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
