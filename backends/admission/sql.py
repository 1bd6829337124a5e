"""The admission area in SQL: seed 002's capacity tables on SQLite, PostgreSQL and MariaDB.

Tables (on the job store's metadata, created by migration 0004):

- `admission_settings`: a generic key/value store of whole numbers. The fleet ceiling
  lives here, as seed 002 keeps it in its system settings, with NO range check: a stray
  value must be storable, since the runtime's duty is to clamp it on read (AD-003).
- `admission_owners`: each owner's stored parallel cap, backlog depth and execution
  timeout, range-checked by the database as well as by the runtime.
- `admission_executions`: admitted work; the backlog is the owner's `queued` rows in
  arrival order, served by an index on (owner, state, arrival).
- `admission_calls`, `admission_schedules`: outbound calls and per-owner schedules.
- `admission_ceiling_changes` (migration 0036): each accepted write of the fleet ceiling,
  who made it and when (AD-022).
- `admission_sequence`: one row holding the next arrival number. Every operation locks it
  first (`SELECT ... FOR UPDATE`), so operations from several processes on one database
  are serialised: the running count an admission checks cannot change before it writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Connection,
    Engine,
    Index,
    Integer,
    String,
    Table,
    delete,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.pool import StaticPool

from jobconform.backends.admission import terms
from jobconform.backends.admission.runtime import (
    AdmissionService,
    CallRow,
    CeilingChangeRow,
    ExecutionRow,
    OwnerRow,
    ScheduleRow,
)
from jobconform.backends.protocol import Clock
from jobconform.backends.sql.models import Base, UtcDateTime, one_of
from jobconform.reference.admission import AdmissionConfig

CEILING_KEY = "max_parallel_tasks_ceiling"
EXECUTION_STATES = (terms.QUEUED, terms.RUNNING, *sorted(terms.ENDED_STATES))
CALL_STATES = (terms.CALL_IN_FLIGHT, terms.CALL_WAITING, terms.CALL_ENDED, terms.CALL_WITHDRAWN,
               terms.CALL_REFUSED)


class AdmissionSetting(Base):
    __tablename__ = "admission_settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    int_value: Mapped[int] = mapped_column(BigInteger)


class AdmissionOwner(Base):
    __tablename__ = "admission_owners"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    parallel_cap: Mapped[int] = mapped_column(Integer)
    backlog_depth: Mapped[int] = mapped_column(Integer)
    execution_timeout_seconds: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)

    __table_args__ = (
        CheckConstraint("parallel_cap >= 1", name="parallel_cap"),
        CheckConstraint("backlog_depth BETWEEN 1 AND 200", name="backlog_depth"),
        CheckConstraint("execution_timeout_seconds BETWEEN 60 AND 7200",
                        name="execution_timeout"),
    )


class AdmissionExecution(Base):
    __tablename__ = "admission_executions"

    execution_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    # Not a foreign key: running work outlives a deleted owner (AD-009).
    owner: Mapped[str] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(20))
    arrived_at: Mapped[datetime] = mapped_column(UtcDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)
    # Migration 0031: the timeout fixed on arrival and the identity captured then, so
    # that queued work drains after a restart as it arrived (AD-015, AD-019).
    timeout_seconds: Mapped[int] = mapped_column(Integer, server_default=text("900"))
    identity: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (
        CheckConstraint(one_of("state", EXECUTION_STATES), name="state"),
        CheckConstraint("timeout_seconds BETWEEN 60 AND 7200", name="timeout"),
        # The backlog read and the running count: one owner's rows of one state, in order.
        Index(None, "owner", "state", "seq"),
    )


class AdmissionCall(Base):
    __tablename__ = "admission_calls"

    call_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    execution_id: Mapped[str] = mapped_column(String(255))
    target: Mapped[str] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(20))
    arrived_at: Mapped[datetime] = mapped_column(UtcDateTime)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)

    __table_args__ = (
        CheckConstraint(one_of("state", CALL_STATES), name="state"),
        Index(None, "state", "seq"),
    )


class AdmissionSchedule(Base):
    __tablename__ = "admission_schedules"

    owner: Mapped[str] = mapped_column(String(255), primary_key=True)
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    timeout_seconds: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)

    __table_args__ = (
        CheckConstraint("timeout_seconds BETWEEN 60 AND 7200", name="timeout"),
    )


class AdmissionCeilingChange(Base):
    """Migration 0036: each accepted write of the fleet ceiling, who made it and when
    (AD-022), in write order."""

    __tablename__ = "admission_ceiling_changes"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    value: Mapped[int] = mapped_column(Integer)
    set_by: Mapped[str | None] = mapped_column(String(255))
    set_at: Mapped[datetime] = mapped_column(UtcDateTime)


class AdmissionSequence(Base):
    __tablename__ = "admission_sequence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    next_seq: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)


SETTINGS = cast(Table, AdmissionSetting.__table__)
OWNERS = cast(Table, AdmissionOwner.__table__)
EXECUTIONS = cast(Table, AdmissionExecution.__table__)
CALLS = cast(Table, AdmissionCall.__table__)
SCHEDULES = cast(Table, AdmissionSchedule.__table__)
CEILING_CHANGES = cast(Table, AdmissionCeilingChange.__table__)
SEQUENCE = cast(Table, AdmissionSequence.__table__)
ALL_TABLES = (SETTINGS, OWNERS, EXECUTIONS, CALLS, SCHEDULES, CEILING_CHANGES)


def _values(row: Any) -> dict[str, Any]:
    return dict(row._mapping)


class SqlAdmissionStore:
    """The admission rows in a database; see backends/admission_runtime.AdmissionStore.

    Args:
        engine: from `create_store_engine`, already migrated to the admission revision.
        owns_engine: dispose of the engine on `close`.
    """

    def __init__(self, engine: Engine, *, owns_engine: bool = False) -> None:
        self._engine = engine
        self._owns_engine = owns_engine
        self._connection: Connection | None = None
        # An in-memory SQLite database is one connection shared by every thread.
        self._in_memory = isinstance(engine.pool, StaticPool)

    @contextmanager
    def _open(self) -> Iterator[None]:
        with self._engine.connect() as connection, connection.begin():
            self._connection = connection
            try:
                # Take the sequence row first: it serialises every admission operation
                # on this database, whichever process runs it.
                connection.execute(select(SEQUENCE.c.next_seq).where(SEQUENCE.c.id == 1)
                                   .with_for_update()).scalar_one()
                yield
            finally:
                self._connection = None

    def version(self) -> None:
        """Other workers write the same tables: no count of this object's writes says
        that nothing changed."""
        return None

    def transaction(self) -> AbstractContextManager[None]:
        if self._connection is not None:
            return nullcontext()  # already inside this store's transaction
        return self._open()

    @property
    def _db(self) -> Connection:
        if self._connection is None:
            raise RuntimeError("admission store used outside a transaction")
        return self._connection

    def next_seq(self) -> int:
        value: int = self._db.execute(select(SEQUENCE.c.next_seq)
                                      .where(SEQUENCE.c.id == 1)).scalar_one()
        self._db.execute(update(SEQUENCE).where(SEQUENCE.c.id == 1).values(next_seq=value + 1))
        return value

    def read_ceiling(self) -> int | None:
        value: int | None = self._db.execute(
            select(SETTINGS.c.int_value).where(SETTINGS.c.key == CEILING_KEY)).scalar()
        return value

    def write_ceiling(self, value: int) -> None:
        changed = self._db.execute(update(SETTINGS).where(SETTINGS.c.key == CEILING_KEY)
                                   .values(int_value=value)).rowcount
        if not changed:
            self._db.execute(insert(SETTINGS).values(key=CEILING_KEY, int_value=value))

    def record_ceiling_change(self, row: CeilingChangeRow) -> None:
        self._db.execute(insert(CEILING_CHANGES).values(
            seq=row.seq, value=row.value, set_by=row.set_by, set_at=row.set_at))

    def ceiling_changes(self) -> list[CeilingChangeRow]:
        rows = self._db.execute(select(CEILING_CHANGES).order_by(CEILING_CHANGES.c.seq))
        return [CeilingChangeRow(**_values(row)) for row in rows]

    def owner(self, name: str) -> OwnerRow | None:
        row = self._db.execute(select(OWNERS).where(OWNERS.c.name == name)).first()
        return None if row is None else OwnerRow(**_values(row))

    def owners(self) -> list[OwnerRow]:
        rows = self._db.execute(select(OWNERS).order_by(OWNERS.c.seq))
        return [OwnerRow(**_values(row)) for row in rows]

    def save_owner(self, row: OwnerRow) -> None:
        values = {"parallel_cap": row.parallel_cap, "backlog_depth": row.backlog_depth,
                  "execution_timeout_seconds": row.execution_timeout_seconds, "seq": row.seq}
        changed = self._db.execute(update(OWNERS).where(OWNERS.c.name == row.name)
                                   .values(**values)).rowcount
        if not changed:
            self._db.execute(insert(OWNERS).values(name=row.name, **values))

    def remove_owner(self, name: str) -> None:
        self._db.execute(delete(OWNERS).where(OWNERS.c.name == name))

    def execution(self, execution_id: str) -> ExecutionRow | None:
        row = self._db.execute(select(EXECUTIONS)
                               .where(EXECUTIONS.c.execution_id == execution_id)).first()
        return None if row is None else ExecutionRow(**_values(row))

    def executions(self, owner: str | None = None,
                   state: str | None = None) -> list[ExecutionRow]:
        query = select(EXECUTIONS).order_by(EXECUTIONS.c.seq)
        if owner is not None:
            query = query.where(EXECUTIONS.c.owner == owner)
        if state is not None:
            query = query.where(EXECUTIONS.c.state == state)
        return [ExecutionRow(**_values(row)) for row in self._db.execute(query)]

    def save_execution(self, row: ExecutionRow) -> None:
        values = {"owner": row.owner, "state": row.state, "arrived_at": row.arrived_at,
                  "started_at": row.started_at, "ended_at": row.ended_at, "seq": row.seq,
                  "timeout_seconds": row.timeout_seconds, "identity": row.identity}
        changed = self._db.execute(update(EXECUTIONS)
                                   .where(EXECUTIONS.c.execution_id == row.execution_id)
                                   .values(**values)).rowcount
        if not changed:
            self._db.execute(insert(EXECUTIONS).values(execution_id=row.execution_id,
                                                       **values))

    def call(self, call_id: str) -> CallRow | None:
        row = self._db.execute(select(CALLS).where(CALLS.c.call_id == call_id)).first()
        return None if row is None else CallRow(**_values(row))

    def calls(self, state: str | None = None) -> list[CallRow]:
        query = select(CALLS).order_by(CALLS.c.seq)
        if state is not None:
            query = query.where(CALLS.c.state == state)
        return [CallRow(**_values(row)) for row in self._db.execute(query)]

    def save_call(self, row: CallRow) -> None:
        values = {"execution_id": row.execution_id, "target": row.target, "state": row.state,
                  "arrived_at": row.arrived_at, "seq": row.seq}
        changed = self._db.execute(update(CALLS).where(CALLS.c.call_id == row.call_id)
                                   .values(**values)).rowcount
        if not changed:
            self._db.execute(insert(CALLS).values(call_id=row.call_id, **values))

    def schedules(self, owner: str) -> list[ScheduleRow]:
        rows = self._db.execute(select(SCHEDULES).where(SCHEDULES.c.owner == owner)
                                .order_by(SCHEDULES.c.seq))
        return [ScheduleRow(**_values(row)) for row in rows]

    def save_schedule(self, row: ScheduleRow) -> None:
        match = (SCHEDULES.c.owner == row.owner) & (SCHEDULES.c.name == row.name)
        changed = self._db.execute(update(SCHEDULES).where(match).values(
            timeout_seconds=row.timeout_seconds, seq=row.seq)).rowcount
        if not changed:
            self._db.execute(insert(SCHEDULES).values(owner=row.owner, name=row.name,
                                                      timeout_seconds=row.timeout_seconds,
                                                      seq=row.seq))

    def remove_schedule(self, owner: str, name: str) -> None:
        self._db.execute(delete(SCHEDULES).where((SCHEDULES.c.owner == owner)
                                                 & (SCHEDULES.c.name == name)))

    def clear(self) -> None:
        """Delete every admission row (settings included), leaving the schema."""
        with self.transaction():
            for table in ALL_TABLES:
                self._db.execute(delete(table))

    def reopen(self) -> SqlAdmissionStore:
        """A new store object on the same database, as a restarted process opens it: it
        knows only what the tables hold."""
        return SqlAdmissionStore(self._engine, owns_engine=self._owns_engine)

    def peer(self) -> SqlAdmissionStore:
        """A second store object on the same database, as another worker opens it: its
        own connections, the same tables. The engine stays this store's to dispose of."""
        return SqlAdmissionStore(self._engine, owns_engine=False)

    def close(self) -> None:
        if self._owns_engine:
            self._engine.dispose()


def open_sql_admission(store: SqlAdmissionStore, clock: Clock,
                       config: AdmissionConfig) -> AdmissionService:
    """An admission runtime over `store` (emptied by the caller when it is shared)."""
    return AdmissionService(store, clock, config)
