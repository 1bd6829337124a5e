"""The store area's commands: plain data every front-end speaks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias

from jobconform.reference.store.oracle import TaskRecord


@dataclass(frozen=True)
class SaveTask:
    """Create the record, or replace the one held under its task id."""

    record: TaskRecord


@dataclass(frozen=True)
class PutTask:
    """Save the record through the deprecated `put` alias of one SDK (TS-013), then read
    it back: the alias must save what `save` saves, and warn as deprecated."""

    record: TaskRecord


@dataclass(frozen=True)
class GetTask:
    task_id: str


@dataclass(frozen=True)
class ListTasks:
    """Every held record, or those of one canonical status."""

    status: str | None = None


@dataclass(frozen=True)
class DeleteTask:
    task_id: str


@dataclass(frozen=True)
class ListExpired:
    """The terminal records completed strictly before `before`."""

    before: datetime


# Savers started at once by a concurrent save: enough for real contention, few enough
# that a check stays quick.
MAX_CONCURRENT_SAVERS = 8


@dataclass(frozen=True)
class SaveConcurrently:
    """Save each record on a thread of its own, all threads started at once (TS-010);
    then list the store. Each task id appears once: the order of concurrent saves of one
    id is not defined, so only saves of distinct ids have one right outcome."""

    records: tuple[TaskRecord, ...]

    def __post_init__(self) -> None:
        if not 2 <= len(self.records) <= MAX_CONCURRENT_SAVERS:
            raise ValueError(f"a concurrent save has 2 to {MAX_CONCURRENT_SAVERS} records,"
                             f" not {len(self.records)}")
        task_ids = [record.task_id for record in self.records]
        if len(set(task_ids)) != len(task_ids):
            raise ValueError(f"a concurrent save saves each task id once, not {task_ids}:"
                             " the order of concurrent saves of one id is not defined")


@dataclass(frozen=True)
class BackendOutage:
    """The store's backend becomes unreachable (down) or reachable again (TS-011). The
    harness cuts a store off through its fault seam; a store kept in memory has no
    backend to lose and goes on answering."""

    down: bool


Read: TypeAlias = GetTask | ListTasks | ListExpired
Operation: TypeAlias = SaveTask | GetTask | ListTasks | ListExpired | DeleteTask


@dataclass(frozen=True)
class AtOnce:
    """Run each operation on a thread of its own, all threads started at once (TS-012);
    then list the store. Reads (get, list, list_expired) may run beside saves and
    deletes: a read then sees each record a write touches as it was before or after that
    write, and every other record exactly. The writes name distinct task ids, so that
    the store's content afterwards has one right value; a delete must name a record the
    store holds (deleting an unknown id is TS-005's question, asked alone)."""

    operations: tuple[Operation, ...]

    def __post_init__(self) -> None:
        if not 2 <= len(self.operations) <= MAX_CONCURRENT_SAVERS:
            raise ValueError(f"a batch run at once has 2 to {MAX_CONCURRENT_SAVERS}"
                             f" operations, not {len(self.operations)}")
        written = [written_id(op) for op in self.operations if is_write(op)]
        if len(set(written)) != len(written):
            raise ValueError(f"the saves and deletes of a batch run at once name each task"
                             f" id once, not {written}: two writes of one id may land in"
                             " either order")

    @property
    def reads(self) -> tuple[Read, ...]:
        return tuple(op for op in self.operations if not isinstance(op, SaveTask | DeleteTask))

    @property
    def writes(self) -> tuple[SaveTask | DeleteTask, ...]:
        return tuple(op for op in self.operations if isinstance(op, SaveTask | DeleteTask))


def is_write(op: Operation) -> bool:
    return isinstance(op, SaveTask | DeleteTask)


def written_id(op: Operation) -> str:
    """The task id a save or delete writes."""
    if isinstance(op, SaveTask):
        return op.record.task_id
    if isinstance(op, DeleteTask):
        return op.task_id
    raise ValueError(f"{op!r} writes nothing")


StoreCommand: TypeAlias = (SaveTask | GetTask | ListTasks | DeleteTask | ListExpired
                           | SaveConcurrently | BackendOutage | AtOnce | PutTask)


def _instant(value: datetime | None) -> str:
    return "None" if value is None else value.isoformat(timespec="milliseconds")


def describe_record(record: TaskRecord) -> str:
    parts = [f"{record.task_id!r}", f"module={record.module_id!r}", record.status,
             f"submitted={_instant(record.submitted_at)}"]
    if record.started_at is not None:
        parts.append(f"started={_instant(record.started_at)}")
    if record.completed_at is not None:
        parts.append(f"completed={_instant(record.completed_at)}")
    if record.result is not None:
        parts.append(f"result={record.result!r}")
    if record.error is not None:
        parts.append(f"error={record.error!r}")
    if record.retry_count or record.max_retries:
        parts.append(f"retries={record.retry_count}/{record.max_retries}")
    return ", ".join(parts)


def describe_store(command: StoreCommand) -> str:
    """One readable line per command, for failure messages."""
    match command:
        case SaveTask():
            return f"SaveTask({describe_record(command.record)})"
        case PutTask():
            return f"PutTask({describe_record(command.record)})"
        case GetTask() | DeleteTask():
            return f"{type(command).__name__}({command.task_id!r})"
        case ListTasks():
            return "ListTasks()" if command.status is None else f"ListTasks({command.status!r})"
        case ListExpired():
            return f"ListExpired(before={_instant(command.before)})"
        case SaveConcurrently():
            saved = "; ".join(describe_record(record) for record in command.records)
            return f"SaveConcurrently({saved})"
        case BackendOutage():
            return f"BackendOutage(down={command.down})"
        case AtOnce():
            return f"AtOnce({'; '.join(describe_store(op) for op in command.operations)})"
    raise ValueError(f"not a store command: {command!r}")
