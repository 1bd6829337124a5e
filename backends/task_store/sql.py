"""The task store in SQL: the TaskStore contract on SQLite, PostgreSQL and MariaDB.

One row per task id, the primary key. `save` is an update of the whole row, or an insert
when no row matched, in one transaction; of two savers inserting one new id at once the
database lets one commit, and the other's retry then finds the row and replaces it, so the
later save wins either way (TS-002). `list_expired` is one query on the indexed
completion instant, with the terminal statuses in its WHERE clause (TS-006, TS-007).
Rows never leave the store: callers get frozen `TaskRecord` values (TS-008).

The database may be out of reach. A transaction that cannot connect or begin, or whose
connection is lost, raises `TaskStoreError(TASK_STORE_UNAVAILABLE)` instead of the
driver's error (TS-011); any other database error (a constraint) stays what it is. The
fault seam `set_reachable(False)` makes the outage real: the store's statements go to an
engine for the same kind of database that cannot connect (a closed port, or a file in a
missing folder), as the SQL breaker's do; `set_reachable(True)` goes back to the database,
which kept everything.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    CheckConstraint,
    Connection,
    Engine,
    Index,
    Integer,
    Row,
    String,
    Table,
    Text,
    delete,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from jobconform.backends.sql.database import (
    OutageSwitch,
    redacted,
    transaction,
)
from jobconform.backends.sql.engine_store import EngineStore
from jobconform.backends.sql.models import JSON_SCHEMA_VERSION, Base, UtcDateTime, one_of
from jobconform.backends.sql.store import readable_columns, rows_matched
from jobconform.backends.task_store.protocol import TASK_STORE_UNAVAILABLE, TaskStoreError
from jobconform.reference.store.oracle import STATUSES, TERMINAL, TaskRecord

TASK_STATUS_CHECK = one_of("status", STATUSES)
# A save that lost an insert race retries as an update; more tries than this means the
# row keeps vanishing under it (someone deleting it in a loop), which is reported.
SAVE_ATTEMPTS = 5


class TaskRecordRow(Base):
    """One task record (seed 004's task info)."""

    __tablename__ = "task_records"

    task_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    module_id: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(20))
    submitted_at: Mapped[datetime] = mapped_column(UtcDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # The reaper's question, list_expired, reads by completion instant.
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, index=True)
    # JSON text the store encodes itself: a JSON column has NUMERIC affinity on SQLite,
    # which turns the text 1.0 into the integer 1, and TS-001 keeps them apart.
    result_json: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    retry_count: Mapped[int] = mapped_column(Integer)
    max_retries: Mapped[int] = mapped_column(Integer)
    schema_version: Mapped[int] = mapped_column(
        Integer, server_default=text(str(JSON_SCHEMA_VERSION)))

    __table_args__ = (
        CheckConstraint(TASK_STATUS_CHECK, name="status"),
        CheckConstraint("retry_count >= 0 AND max_retries >= 0", name="retry_counts"),
        Index(None, "status"),
    )


TASKS = cast(Table, TaskRecordRow.__table__)
RECORD_FIELDS = tuple(item.name for item in fields(TaskRecord))


def to_record(row: Row[Any]) -> TaskRecord:
    values = readable_columns(row, lambda values: f"task record {values['task_id']!r}")
    stored = {name: values[name] for name in RECORD_FIELDS if name != "result"}
    return TaskRecord(**stored, result=json.loads(values["result_json"]))


def record_values(record: TaskRecord) -> dict[str, Any]:
    values = {name: getattr(record, name) for name in RECORD_FIELDS if name != "result"}
    values["result_json"] = json.dumps(record.result, ensure_ascii=False, allow_nan=False)
    values["schema_version"] = JSON_SCHEMA_VERSION
    return values


class SqlTaskStoreError(RuntimeError):
    """A save kept losing its row to concurrent deletes and inserts."""


class SqlTaskStore(EngineStore):
    """A `TaskStore` in the `task_records` table. Arguments as `EngineStore`'s."""

    def __init__(self, engine: Engine, *, migrate_schema: bool = True,
                 owns_engine: bool = False) -> None:
        super().__init__(engine, migrate_schema=migrate_schema, owns_engine=owns_engine)
        # The engine statements go to: `engine`, or while cut off an unreachable one.
        self._outage = OutageSwitch(engine)

    def set_reachable(self, reachable: bool) -> None:
        """Fault injection (TS-011): cut the store off its database, or connect it again."""
        self._outage.set_reachable(reachable)

    @contextmanager
    def _transaction(self, read_only: bool = False) -> Iterator[Connection]:
        begun = False
        try:
            with transaction(self._outage.engine, self._turns, read_only) as connection:
                begun = True
                yield connection
        except DBAPIError as error:
            # Unreachable: no transaction could begin, or its connection was lost.
            # Anything else (a constraint, a lost insert race) is the caller's to handle.
            if begun and not error.connection_invalidated:
                raise
            raise TaskStoreError(
                TASK_STORE_UNAVAILABLE,
                f"the task store's database at {redacted(self._engine.url)} cannot be"
                f" reached: {' '.join(str(error.orig).split())}") from error

    def save(self, record: TaskRecord) -> None:
        values = record_values(record)
        for _ in range(SAVE_ATTEMPTS):
            try:
                with self._transaction() as connection:
                    replaced = connection.execute(
                        update(TASKS).where(TASKS.c.task_id == record.task_id).values(**values))
                    if rows_matched(replaced) == 0:
                        connection.execute(insert(TASKS).values(**values))
                return
            except IntegrityError:
                continue  # another saver inserted the id first: replace its row
        raise SqlTaskStoreError(f"saving task {record.task_id!r} lost its row {SAVE_ATTEMPTS}"
                                " times to concurrent writers")

    def get(self, task_id: str) -> TaskRecord | None:
        with self._transaction(read_only=True) as connection:
            row = connection.execute(select(TASKS).where(TASKS.c.task_id == task_id)).first()
            return None if row is None else to_record(row)

    def list(self, status: str | None = None) -> builtins.list[TaskRecord]:
        query = select(TASKS).order_by(TASKS.c.task_id)
        if status is not None:
            query = query.where(TASKS.c.status == status)
        with self._transaction(read_only=True) as connection:
            return [to_record(row) for row in connection.execute(query)]

    def delete(self, task_id: str) -> None:
        with self._transaction() as connection:
            connection.execute(delete(TASKS).where(TASKS.c.task_id == task_id))

    def list_expired(self, before: datetime) -> builtins.list[TaskRecord]:
        query = (select(TASKS)
                 .where(TASKS.c.status.in_(sorted(TERMINAL)),
                        TASKS.c.completed_at.is_not(None), TASKS.c.completed_at < before)
                 .order_by(TASKS.c.completed_at, TASKS.c.task_id))
        with self._transaction(read_only=True) as connection:
            return [to_record(row) for row in connection.execute(query)]

    def clear(self) -> None:
        """Delete every record, leaving an empty table on the same schema."""
        with self._transaction() as connection:
            connection.execute(delete(TASKS))

    def close(self) -> None:
        self._outage.close()
        super().close()
