"""The task store oracle (TS-001..TS-012): what a store holds after each operation.

A store is a map from task id to record, and the rules are few: `save` replaces the whole
record of its id, `delete` forgets one, `list` filters by status, and `list_expired` keeps
the terminal records completed strictly before its cut-off. While the store's backend is
unreachable, every operation is refused with TASK_STORE_UNAVAILABLE and changes nothing
(TS-011). The oracle also remembers the
history of every id (saved how often, deleted), because that history decides which rule a
wrong answer about the id breaks. Instants are fields of records; no clock is read.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import datetime

from jobconform.reference.lifecycle import JsonValue

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    "queued", "running", "succeeded", "failed", "cancelled")
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL = frozenset({SUCCEEDED, FAILED, CANCELLED})
OPERATIONS = ("save", "get", "list", "delete", "list_expired")
# The code of seed 004's TaskStoreError for a backend that cannot be reached (TS-011).
UNAVAILABLE = "TASK_STORE_UNAVAILABLE"


@dataclass(frozen=True)
class TaskRecord:
    """One task's record, with the fields of seed 004's task info.

    Statuses are canonical (queued, running, succeeded, failed, cancelled); instants are
    timezone-aware UTC; the result is a JSON value.
    """

    task_id: str
    module_id: str
    status: str
    submitted_at: datetime
    started_at: datetime | None = None
    completed_at: datetime | None = None
    result: JsonValue = None
    error: str | None = None
    retry_count: int = 0
    max_retries: int = 0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not canonical; use one of"
                             f" {', '.join(STATUSES)}")
        for name in ("submitted_at", "started_at", "completed_at"):
            instant = getattr(self, name)
            if instant is not None and instant.utcoffset() is None:
                raise ValueError(f"{name} {instant!r} has no timezone; records keep UTC"
                                 " instants")
        if self.retry_count < 0 or self.max_retries < 0:
            raise ValueError("retry_count and max_retries are counts, at least 0")

    def __repr__(self) -> str:
        # Short enough for a failure message's list of commands: fields left at their
        # defaults are omitted and instants are ISO 8601.
        shown = [f"{self.task_id!r}", f"module_id={self.module_id!r}",
                 f"status={self.status!r}"]
        for name in ("submitted_at", "started_at", "completed_at"):
            instant = getattr(self, name)
            if instant is not None:
                shown.append(f"{name}={instant.isoformat()}")
        for name, default in (("result", None), ("error", None), ("retry_count", 0),
                              ("max_retries", 0)):
            if getattr(self, name) != default:
                shown.append(f"{name}={getattr(self, name)!r}")
        return f"TaskRecord({', '.join(shown)})"


def is_expired(record: TaskRecord, before: datetime) -> bool:
    """list_expired's rule: terminal (TS-007) and completed strictly before (TS-006)."""
    return (record.status in TERMINAL and record.completed_at is not None
            and record.completed_at < before)


@dataclass(frozen=True)
class Unavailable:
    """The answer of every operation while the store's backend is unreachable: an error
    with this code (TS-011)."""

    code: str = UNAVAILABLE


@dataclass
class IdHistory:
    saves: int = 0
    deleted: bool = False  # deleted since its last save


@dataclass
class StoreOracle:
    """The records a conforming store holds, and the history of every id."""

    records: dict[str, TaskRecord] = field(default_factory=dict)
    history: dict[str, IdHistory] = field(default_factory=dict)
    # The backend cannot be reached: every operation is refused (TS-011). Only a store
    # with a backend to lose is ever unreachable; one kept in memory never is.
    unreachable: bool = False

    def backend_outage(self, down: bool, has_backend: bool) -> None:
        """The store's backend goes down or comes back; a store without a backend (kept
        in memory) is not touched by it."""
        self.unreachable = down and has_backend

    def save(self, record: TaskRecord) -> None:
        self.records[record.task_id] = record
        seen = self.history.setdefault(record.task_id, IdHistory())
        seen.saves += 1
        seen.deleted = False

    def save_concurrently(self, records: tuple[TaskRecord, ...]) -> None:
        """Saves made at once from several threads (TS-010) end as if made one after
        another in some order; with distinct task ids every order holds the same records,
        so nothing any thread saved may be missing."""
        for record in records:
            self.save(record)

    def get(self, task_id: str) -> TaskRecord | None:
        return self.records.get(task_id)

    def list(self, status: str | None = None) -> list[TaskRecord]:
        return [r for r in self.records.values() if status is None or r.status == status]

    def delete(self, task_id: str) -> None:
        if self.records.pop(task_id, None) is not None:
            self.history[task_id].deleted = True

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        return [r for r in self.records.values() if is_expired(r, before)]

    def explaining(self, task_id: str) -> tuple[str, ...]:
        """The requirements that decide what the store must show for `task_id`, the most
        specific first: a replaced record's (TS-002), a deleted one's (TS-005), a
        never-saved one's (TS-003), else the plain round trip (TS-001)."""
        seen = self.history.get(task_id)
        if seen is None:
            return ("TS-003",)
        if seen.deleted:
            return ("TS-005", "TS-003")
        if seen.saves > 1:
            return ("TS-002", "TS-001")
        return ("TS-001",)

    def explaining_expiry(self, task_id: str) -> tuple[str, ...]:
        """Why the held record of `task_id` is, or is not, in a list_expired answer."""
        record = self.records.get(task_id)
        if record is None:
            return (*self.explaining(task_id), "TS-006")
        if record.status not in TERMINAL:
            return ("TS-007", "TS-006")
        return ("TS-006",)
