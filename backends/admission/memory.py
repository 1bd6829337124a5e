"""The admission store in memory: dicts whose insertion order is the arrival order."""

from __future__ import annotations

import itertools
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from operator import attrgetter

from jobconform.backends.admission.runtime import (
    AdmissionService,
    CallRow,
    CeilingChangeRow,
    ExecutionRow,
    OwnerRow,
    ScheduleRow,
)
from jobconform.backends.protocol import Clock
from jobconform.reference.admission import AdmissionConfig

# The service's lock makes each operation atomic; the one transaction-less context serves
# every operation (a nullcontext can be entered again and by many at once).
_NO_TRANSACTION: AbstractContextManager[None] = nullcontext()
# Rows sort by their sequence number (arrival order), read in C: rows are listed on every
# admission operation.
_SEQ = attrgetter("seq")


class InMemoryAdmissionStore:
    """Single-process rows; the service's lock makes every operation atomic."""

    def __init__(self) -> None:
        self._ceiling: int | None = None
        self._ceiling_changes: list[CeilingChangeRow] = []
        self._owners: dict[str, OwnerRow] = {}
        self._executions: dict[str, ExecutionRow] = {}
        self._calls: dict[str, CallRow] = {}
        self._schedules: dict[tuple[str, str], ScheduleRow] = {}
        self._seq = itertools.count(1)
        self._writes = 0  # see version

    def version(self) -> int:
        """Every write through this store (and its peers, the same object) moves it: the
        runtime keeps what it read while it stands."""
        return self._writes

    def transaction(self) -> AbstractContextManager[None]:
        return _NO_TRANSACTION

    def next_seq(self) -> int:
        return next(self._seq)

    def read_ceiling(self) -> int | None:
        return self._ceiling

    def write_ceiling(self, value: int) -> None:
        self._ceiling = value
        self._writes += 1

    def record_ceiling_change(self, row: CeilingChangeRow) -> None:
        self._ceiling_changes.append(row)
        self._writes += 1

    def ceiling_changes(self) -> list[CeilingChangeRow]:
        return list(self._ceiling_changes)

    def owner(self, name: str) -> OwnerRow | None:
        return self._owners.get(name)

    def owners(self) -> list[OwnerRow]:
        return sorted(self._owners.values(), key=_SEQ)

    def save_owner(self, row: OwnerRow) -> None:
        self._owners[row.name] = replace(row)
        self._writes += 1

    def remove_owner(self, name: str) -> None:
        self._owners.pop(name, None)
        self._writes += 1

    def execution(self, execution_id: str) -> ExecutionRow | None:
        return self._executions.get(execution_id)

    def executions(self, owner: str | None = None,
                   state: str | None = None) -> list[ExecutionRow]:
        rows = [row for row in self._executions.values()
                if (owner is None or row.owner == owner) and (state is None or row.state == state)]
        return sorted(rows, key=_SEQ)

    def save_execution(self, row: ExecutionRow) -> None:
        self._executions[row.execution_id] = row
        self._writes += 1

    def call(self, call_id: str) -> CallRow | None:
        return self._calls.get(call_id)

    def calls(self, state: str | None = None) -> list[CallRow]:
        rows = [row for row in self._calls.values() if state is None or row.state == state]
        return sorted(rows, key=_SEQ)

    def save_call(self, row: CallRow) -> None:
        self._calls[row.call_id] = row
        self._writes += 1

    def schedules(self, owner: str) -> list[ScheduleRow]:
        rows = [row for (name, _), row in self._schedules.items() if name == owner]
        return sorted(rows, key=_SEQ)

    def save_schedule(self, row: ScheduleRow) -> None:
        self._schedules[(row.owner, row.name)] = row
        self._writes += 1

    def remove_schedule(self, owner: str, name: str) -> None:
        self._schedules.pop((owner, name), None)
        self._writes += 1

    def reopen(self) -> InMemoryAdmissionStore:
        """The dicts are this store's durable part: a restarted runtime finds them as
        they were left."""
        return self

    def peer(self) -> InMemoryAdmissionStore:
        """Another worker in this process reads and writes the same dicts."""
        return self

    def close(self) -> None:
        pass


def open_memory_admission(clock: Clock, config: AdmissionConfig) -> AdmissionService:
    """A fresh admission runtime over an empty in-memory store."""
    return AdmissionService(InMemoryAdmissionStore(), clock, config)
