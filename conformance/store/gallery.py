"""The store gallery: the memory backend with its task store broken the way stores get
seed 004's TaskStore contract wrong.

`GALLERY` joins the self-test: every suite must catch each entry, naming the requirement
in `catches`. Each broken store answers through the memory backend's async wrapper, as
the memory backend's own store does.
"""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import DEPRECATED_ALIASES
from jobconform.backends.task_store.memory import AsyncInMemoryTaskStore, InMemoryTaskStore
from jobconform.conformance.gallery import GalleryEntry, declares, subclass_entry
from jobconform.reference.store.oracle import TERMINAL, TaskRecord, is_expired

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


def _entry(name: str, broken: type, catches: str, source: str,
           open_broken: Callable[[], object]) -> GalleryEntry:
    """The memory backend with a broken task store, loadable as `<this module>:<name>`."""
    members: dict[str, Any] = {"open_store": lambda _, clock: open_broken()}
    # A store written without seed 004's deprecated put does not claim to keep it.
    if not callable(getattr(broken, "put", None)) and not issubclass(broken, InMemoryTaskStore):
        members["capabilities"] = MemoryBackend.capabilities - {DEPRECATED_ALIASES}
    return subclass_entry(__name__, name, MemoryBackend, members, broken, catches, source)


@declares(GALLERY)
def memory_entry(name: str, store: type[InMemoryTaskStore], catches: str,
                 source: str) -> GalleryEntry:
    """A broken in-memory store behind the memory backend's coroutines."""
    return _entry(name, store, catches, source, lambda: AsyncInMemoryTaskStore(store()))


@declares(GALLERY)
def own_entry(name: str, store: type, catches: str, source: str) -> GalleryEntry:
    """A broken store of its own (coroutines and all) behind the memory backend."""
    return _entry(name, store, catches, source, store)


@memory_entry("store_expiry_inclusive", "TS-006",
              "seed 004 TaskStore.list_expired: strictly before")
class InclusiveExpiryStore(InMemoryTaskStore):
    """list_expired keeps records completed at or before the cut-off, the cleanup rule,
    so a record completed exactly at the cut-off is reaped one sweep early."""

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        return [record for record in self.list() if record.status in TERMINAL
                and record.completed_at is not None and record.completed_at <= before]


@memory_entry("store_expiry_ignores_status", "TS-007",
              "seed 004 TaskStore.list_expired: terminal tasks only")
class ExpiryByInstantOnlyStore(InMemoryTaskStore):
    """list_expired looks at completed_at alone: a task re-queued for a retry still
    carries its failed attempt's completion instant, and the reaper deletes it while it
    waits in backoff."""

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        return [record for record in self.list()
                if record.completed_at is not None and record.completed_at < before]


@memory_entry("store_first_save_kept", "TS-002", "seed 004 §1.1: save creates or overwrites")
class FirstSaveKeptStore(InMemoryTaskStore):
    """save inserts only when the id is new (an INSERT that ignores a duplicate key), so
    a task's later states never reach the store."""

    def save(self, record: TaskRecord) -> None:
        with self._lock:
            self._records.setdefault(record.task_id, record)


@memory_entry("store_unknown_delete_raises", "TS-005",
              "seed 004 TaskStore.delete: a non-existent id is a no-op")
class UnknownDeleteRaisesStore(InMemoryTaskStore):
    """delete of an id the store does not hold raises KeyError (a `del` on the dict),
    so a reaper racing a manual cleanup crashes its sweep."""

    def delete(self, task_id: str) -> None:
        with self._lock:
            del self._records[task_id]


@memory_entry("store_float_result_narrowed", "TS-001", "seed 004 TaskStore.get: the stored record")
class NarrowedFloatStore(InMemoryTaskStore):
    """Results go through a numeric column that narrows whole floats: 1.0 reads back as
    the integer 1 (SQLite's NUMERIC affinity on a JSON column does this)."""

    def save(self, record: TaskRecord) -> None:
        text = json.dumps(record.result)
        narrowed = json.loads(text, parse_float=lambda f: int(float(f))
                              if float(f).is_integer() else float(f))
        super().save(TaskRecord(**{**asdict(record), "result": narrowed}))


@own_entry("store_live_records", "TS-008", "seed 004 D-23: snapshots, never live references")
class LiveRecordStore:
    """Records are mutable objects, saved into in place; get and list hand out the held
    objects themselves, so a record read earlier changes when the task is saved again
    (the live reference seed 004's D-23 retired)."""

    def __init__(self) -> None:
        self._live: dict[str, SimpleNamespace] = {}

    async def save(self, record: TaskRecord) -> None:
        held = self._live.get(record.task_id)
        if held is None:
            self._live[record.task_id] = SimpleNamespace(**asdict(record))
        else:
            held.__dict__.update(asdict(record))

    async def get(self, task_id: str) -> SimpleNamespace | None:
        return self._live.get(task_id)

    async def list(self, status: str | None = None) -> builtins.list[SimpleNamespace]:
        return [held for held in self._live.values() if status is None or held.status == status]

    async def delete(self, task_id: str) -> None:
        self._live.pop(task_id, None)

    async def list_expired(self, before: datetime) -> builtins.list[SimpleNamespace]:
        return [held for held in self._live.values()
                if is_expired(TaskRecord(**held.__dict__), before)]

    def close(self) -> None:
        self._live.clear()


@memory_entry("store_connection_per_thread", "TS-010", "seed 004 TaskStore.save: thread_safe")
class ConnectionPerThreadStore(InMemoryTaskStore):
    """save takes a connection of the calling thread's own, so that saves can run side by
    side, and on an in-memory SQLite database each connection is a database of its own:
    a save made on any thread but the one that opened the store lands where no reader
    looks, so concurrent savers lose their records (the other operations share the
    opener's connection, and every operation from that thread works)."""

    def __init__(self) -> None:
        super().__init__()
        self._opener = threading.get_ident()
        self._per_thread = threading.local()

    def save(self, record: TaskRecord) -> None:
        if threading.get_ident() == self._opener:
            super().save(record)
            return
        own: dict[str, TaskRecord] | None = getattr(self._per_thread, "records", None)
        if own is None:
            own = self._per_thread.records = {}
        own[record.task_id] = record


@memory_entry("store_reads_on_own_connection", "TS-012",
              "seed 004 TaskStore.get/list/delete/list_expired: thread_safe")
class ReadsOnOwnConnectionStore(InMemoryTaskStore):
    """Saves share the store's one connection under a lock (the fix made when saves from
    several threads were lost), but get, list, list_expired and delete still open a
    connection of the calling thread's own, each an empty in-memory database: made from
    any thread but the one that opened the store, a get answers None, a list nothing and
    a delete removes nothing (every operation from the opener's thread works)."""

    def __init__(self) -> None:
        super().__init__()
        self._opener = threading.get_ident()

    def _seen(self) -> dict[str, TaskRecord]:
        return self._records if threading.get_ident() == self._opener else {}

    def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            return self._seen().get(task_id)

    def list(self, status: str | None = None) -> builtins.list[TaskRecord]:
        with self._lock:
            return [record for record in self._seen().values()
                    if status is None or record.status == status]

    def delete(self, task_id: str) -> None:
        with self._lock:
            self._seen().pop(task_id, None)

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        with self._lock:
            return [record for record in self._seen().values() if is_expired(record, before)]


@memory_entry("store_unreachable_driver_error", "TS-011",
              "seed 004 TaskStore contracts: TaskStoreError(TASK_STORE_UNAVAILABLE)")
class DriverErrorWhenUnreachableStore(InMemoryTaskStore):
    """A store over a network service whose client lets the driver's own error through:
    while the service cannot be reached, save and delete raise ConnectionRefusedError,
    and get, list and list_expired answer from an empty local cache (None, nothing), so a
    caller takes an outage for an empty store; none raises TASK_STORE_UNAVAILABLE."""

    def __init__(self) -> None:
        super().__init__()
        self._reachable = True

    def set_reachable(self, reachable: bool) -> None:
        self._reachable = reachable

    def _connect(self) -> None:
        if not self._reachable:
            raise ConnectionRefusedError(111, "Connection refused")

    def save(self, record: TaskRecord) -> None:
        self._connect()
        super().save(record)

    def delete(self, task_id: str) -> None:
        self._connect()
        super().delete(task_id)

    def get(self, task_id: str) -> TaskRecord | None:
        return super().get(task_id) if self._reachable else None

    def list(self, status: str | None = None) -> builtins.list[TaskRecord]:
        return super().list(status) if self._reachable else []

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        return super().list_expired(before) if self._reachable else []


@own_entry("store_put_alias_drops_a_field", "TS-013",
           "seed 004 §1.1: put, a deprecated thin wrapper that calls save")
class PutDropsRetryBudgetStore(AsyncInMemoryTaskStore):
    """The deprecated put was kept from before the retry budget was a field: it saves the
    record without max_retries, so a caller still on put loses every task's budget."""

    async def put(self, record: TaskRecord) -> None:
        warn_deprecated("TaskStore.put", "save")
        await self.save(replace(record, max_retries=0))
