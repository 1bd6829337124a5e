"""The reminders store in SQL: the `ReminderStore` contract on SQLite, PostgreSQL, MariaDB.

Each method is one transaction. A transition is `UPDATE ... WHERE reminder_id = ? AND
status = ?`, so of two writers only the one that saw the current status moves the
reminder (a scheduler marking it firing, a cancel): the row is the single source of
truth that makes a fire single (RM-007). Creation order is the table's autoincrement key.
"""

from __future__ import annotations

import builtins
from dataclasses import fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Engine, Row, Table, delete, func, insert, select, update

from jobconform.backends.faults import SqlWriteFaults
from jobconform.backends.reminders.store import FINAL, FIRING, PENDING, StoredReminder
from jobconform.backends.sql.engine_store import FaultableEngineStore
from jobconform.backends.sql.models import ReminderRow

REMINDERS = cast(Table, ReminderRow.__table__)
STORED_FIELDS = tuple(field.name for field in fields(StoredReminder))


def to_stored(row: Row[Any]) -> StoredReminder:
    values = row._mapping
    return StoredReminder(**{name: values[name] for name in STORED_FIELDS})


class SqlReminderStore(FaultableEngineStore):
    """Reminders in a SQL database; store faults strike its INSERTs and UPDATEs (one per
    write). Arguments as `FaultableEngineStore`'s."""

    def __init__(self, engine: Engine, *, migrate_schema: bool = True,
                 owns_engine: bool = False, faults: SqlWriteFaults | None = None) -> None:
        super().__init__(engine, migrate_schema=migrate_schema, owns_engine=owns_engine,
                         faults=faults)
        # The agent's autonomy switch (RM-015) lives on the agent's record, not in this
        # table; the store keeps it beside the table and hands it on at `reopen`.
        self._autonomy = True

    def add(self, reminder: StoredReminder) -> None:
        with self._transaction() as connection:
            connection.execute(insert(REMINDERS).values(
                **{name: getattr(reminder, name) for name in STORED_FIELDS}))

    def get(self, reminder_id: str) -> StoredReminder | None:
        with self._transaction(read_only=True) as connection:
            row = connection.execute(
                select(REMINDERS).where(REMINDERS.c.reminder_id == reminder_id)).first()
            return None if row is None else to_stored(row)

    def list(self, status: str | None = None) -> builtins.list[StoredReminder]:
        query = select(REMINDERS).order_by(REMINDERS.c.seq)
        if status is not None:
            query = query.where(REMINDERS.c.status == status)
        with self._transaction(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(query)]

    def count(self, status: str) -> int:
        with self._transaction(read_only=True) as connection:
            return connection.scalar(select(func.count()).select_from(REMINDERS)
                                     .where(REMINDERS.c.status == status)) or 0

    def live_with_key(self, idempotency_key: str, created_after: datetime,
                      derived: bool = False) -> StoredReminder | None:
        column = REMINDERS.c.derived_key if derived else REMINDERS.c.idempotency_key
        query = (select(REMINDERS)
                 .where(column == idempotency_key,
                        REMINDERS.c.status.in_((PENDING, FIRING)),
                        REMINDERS.c.created_at > created_after)
                 .order_by(REMINDERS.c.seq.desc()).limit(1))
        with self._transaction(read_only=True) as connection:
            row = connection.execute(query).first()
            return None if row is None else to_stored(row)

    def count_created_after(self, instant: datetime) -> int:
        with self._transaction(read_only=True) as connection:
            return connection.scalar(select(func.count()).select_from(REMINDERS)
                                     .where(REMINDERS.c.created_at > instant)) or 0

    def due(self, now: datetime) -> builtins.list[StoredReminder]:
        if not self._autonomy:
            return []
        query = (select(REMINDERS)
                 .where(REMINDERS.c.status == PENDING, REMINDERS.c.due_at <= now)
                 .order_by(REMINDERS.c.due_at, REMINDERS.c.seq))
        with self._transaction(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(query)]

    def next_due(self) -> datetime | None:
        if not self._autonomy:
            return None
        with self._transaction(read_only=True) as connection:
            earliest: datetime | None = connection.scalar(
                select(func.min(REMINDERS.c.due_at)).where(REMINDERS.c.status == PENDING))
            return earliest

    def transition(self, reminder_id: str, expected_status: str,
                   **changes: Any) -> StoredReminder | None:
        changeable = set(STORED_FIELDS) - {"reminder_id"}
        if not set(changes) <= changeable:
            raise ValueError(f"a transition changes only {sorted(changeable)},"
                             f" not {sorted(set(changes) - changeable)}")
        with self._transaction() as connection:
            moved = connection.execute(
                update(REMINDERS)
                .where(REMINDERS.c.reminder_id == reminder_id,
                       REMINDERS.c.status == expected_status)
                .values(**changes))
            if moved.rowcount == 0:
                return None
            row = connection.execute(
                select(REMINDERS).where(REMINDERS.c.reminder_id == reminder_id)).one()
            return to_stored(row)

    def set_autonomy(self, enabled: bool) -> None:
        self._autonomy = enabled

    def delete_final_before(self, instant: datetime) -> int:
        with self._transaction() as connection:
            deleted = connection.execute(
                delete(REMINDERS).where(REMINDERS.c.status.in_(FINAL),
                                        REMINDERS.c.created_at < instant))
            return deleted.rowcount

    def clear(self) -> None:
        """Delete every reminder (conformance starts each check on an empty store)."""
        with self._transaction() as connection:
            connection.execute(delete(REMINDERS))

    def reopen(self) -> SqlReminderStore:
        """A new store over the same database, as a restarted process opens it. The
        engine (for in-memory SQLite, the database itself) passes to the new store."""
        reopened = SqlReminderStore(self._engine, migrate_schema=False,
                                    owns_engine=self._hand_over_engine(), faults=self._faults)
        reopened._autonomy = self._autonomy  # the agent's switch outlives the process
        return reopened
