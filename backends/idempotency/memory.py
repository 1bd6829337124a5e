"""The memory backend's idempotency keys: a dict of entries behind one lock.

The lock makes `insert_if_absent` and `swap` atomic when several threads share the store
(the threaded backend's request threads); on the single-threaded memory backend it is
never contended.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

from jobconform.backends.faults import WriteFaults
from jobconform.backends.idempotency.protocol import Clock, IdempotencyConfig
from jobconform.backends.idempotency.service import IdempotencyService, KeyEntry
from jobconform.reference.commands import Outcome
from jobconform.reference.faults import StoreFault


class MemoryKeyStore:
    """A `KeyStore` in a dict keyed by (scope, key)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], KeyEntry] = {}
        self._lock = threading.Lock()
        self._faults = WriteFaults()  # the injection point: every change is one write

    def insert_if_absent(self, entry: KeyEntry) -> KeyEntry | None:
        self._faults.before_write()
        with self._lock:
            held = self._entries.get((entry.scope, entry.key))
            if held is None:
                self._entries[(entry.scope, entry.key)] = entry
            return held

    def swap(self, expected: KeyEntry, new: KeyEntry) -> bool:
        self._faults.before_write()
        with self._lock:
            held = self._entries.get((expected.scope, expected.key))
            if held is None or (held.holder, held.in_flight) != (expected.holder,
                                                                 expected.in_flight):
                return False
            self._entries[(new.scope, new.key)] = new
            return True

    def _held_by(self, holder: str, created_after: datetime) -> KeyEntry | None:
        for entry in self._entries.values():
            if entry.holder == holder and entry.in_flight and entry.created_at > created_after:
                return entry
        return None

    def complete(self, holder: str, outcome: Outcome, created_after: datetime) -> bool:
        self._faults.before_write()
        with self._lock:
            entry = self._held_by(holder, created_after)
            if entry is None:
                return False
            self._entries[(entry.scope, entry.key)] = replace(entry, outcome=outcome)
            return True

    def release(self, holder: str, created_after: datetime) -> bool:
        self._faults.before_write()
        with self._lock:
            entry = self._held_by(holder, created_after)
            if entry is None:
                return False
            del self._entries[(entry.scope, entry.key)]
            return True

    def purge(self, created_at_or_before: datetime) -> int:
        self._faults.before_write()
        with self._lock:
            expired = [place for place, entry in self._entries.items()
                       if entry.created_at <= created_at_or_before]
            for place in expired:
                del self._entries[place]
            return len(expired)

    def inject_fault(self, fault: StoreFault | None) -> None:
        self._faults.arm(fault)

    def fault_struck(self) -> bool:
        return self._faults.struck()

    def close(self) -> None:
        pass


def open_memory_idempotency(clock: Clock, config: IdempotencyConfig) -> IdempotencyService:
    return IdempotencyService(MemoryKeyStore(), clock, config)
