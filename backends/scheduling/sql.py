"""The schedule store in SQL: the `ScheduleStore` contract on SQLite, PostgreSQL, MariaDB.

Each method is one transaction. A claim is `UPDATE schedules SET next_fire_at = :following
WHERE schedule_id = :id AND next_fire_at = :expected`: of two schedulers racing for one
fire, only the one whose update changes a row executes it (SC-008). Executions are rows of
their own, in the order made; an execution's end is set once, by an update that lands only
on a row with no outcome yet (SC-019), with its business status and validation run in the
same transaction (SC-021); a verdict moves the business status from pending_validation by
the same kind of update, and writes the operator alert of a failed one with it (SC-022,
SC-024). The autonomy switch is the one row of scheduling_switch.
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager
from dataclasses import fields, replace
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Connection,
    Double,
    Engine,
    ForeignKey,
    Index,
    Integer,
    Row,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column

from jobconform.backends.scheduling.runtime import (
    Judge,
    StoredExecution,
    StoredSchedule,
    StoredValidationRun,
)
from jobconform.backends.sql.engine_store import EngineStore
from jobconform.backends.sql.models import Base, UtcDateTime
from jobconform.reference.scheduling.oracle import BusinessStatus, ExecutionStatus

SWITCH_ROW = 1


class ScheduleRow(Base):
    """One schedule. `seq` is the creation order: timestamps tie under a virtual clock."""

    __tablename__ = "schedules"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    schedule_id: Mapped[str] = mapped_column(String(36), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    message: Mapped[str] = mapped_column(Text)
    expression: Mapped[str | None] = mapped_column(String(200))
    timezone: Mapped[str | None] = mapped_column(String(64))
    pre_check: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # The scheduler's poll: the earliest next fire.
    next_fire_at: Mapped[datetime | None] = mapped_column(UtcDateTime, index=True)
    # Business validation of its successes (SC-020; migration 0038).
    validation: Mapped[bool] = mapped_column(Boolean, default=False)
    validation_timeout: Mapped[float | None] = mapped_column(Double)

    __table_args__ = (CheckConstraint("kind IN ('once', 'cron')", name="kind"),)


class ScheduleExecutionRow(Base):
    """One execution of a schedule (seed 002's schedule_executions)."""

    __tablename__ = "schedule_executions"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    schedule_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("schedules.schedule_id", ondelete="CASCADE"))
    scheduled_for: Mapped[datetime] = mapped_column(UtcDateTime)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # "trigger" is a reserved word in MariaDB.
    fired_by: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(10))
    message: Mapped[str | None] = mapped_column(Text)
    cost: Mapped[float | None] = mapped_column(Double)
    pre_check: Mapped[str | None] = mapped_column(String(10))
    # How a dispatched execution ended, once the runtime learns it (SC-019; migration 0035).
    outcome: Mapped[str | None] = mapped_column(String(10))
    # Its id, its business status and its validation run (SC-021; migration 0038).
    execution_id: Mapped[str | None] = mapped_column(String(36))
    business_status: Mapped[str | None] = mapped_column(String(20))
    validation_run: Mapped[str | None] = mapped_column(String(36))

    __table_args__ = (
        CheckConstraint("fired_by IN ('schedule', 'catch_up', 'manual')", name="fired_by"),
        CheckConstraint("status IN ('dispatched', 'skipped')", name="status"),
        CheckConstraint("outcome IN ('succeeded', 'failed', 'cancelled')", name="outcome"),
        CheckConstraint("business_status IN ('pending_validation', 'validated',"
                        " 'failed_validation', 'skipped')", name="business_status"),
        Index(None, "schedule_id"),
    )


class ScheduleValidationRunRow(Base):
    """One validation run, started for an execution's technical success (SC-021)."""

    __tablename__ = "schedule_validation_runs"

    run_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    schedule_id: Mapped[str] = mapped_column(String(36), index=True)
    validates: Mapped[str] = mapped_column(String(36))
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    timeout_seconds: Mapped[float] = mapped_column(Double)


class SchedulingAlertRow(Base):
    """An operator alert of a failed validation (SC-024); `seq` is the order raised."""

    __tablename__ = "scheduling_alerts"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    execution_id: Mapped[str] = mapped_column(String(36))


class SchedulingSwitchRow(Base):
    """The autonomy master switch; no row means on."""

    __tablename__ = "scheduling_switch"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    autonomy: Mapped[bool] = mapped_column(Boolean)


SCHEDULES = cast(Table, ScheduleRow.__table__)
EXECUTIONS = cast(Table, ScheduleExecutionRow.__table__)
SWITCH = cast(Table, SchedulingSwitchRow.__table__)
VALIDATION_RUNS = cast(Table, ScheduleValidationRunRow.__table__)
ALERTS = cast(Table, SchedulingAlertRow.__table__)
# By start, then fire time, then as recorded (SC-015).
HISTORY_ORDER = (EXECUTIONS.c.started_at, EXECUTIONS.c.scheduled_for, EXECUTIONS.c.seq)
SCHEDULE_FIELDS = tuple(item.name for item in fields(StoredSchedule))
EXECUTION_FIELDS = tuple(item.name for item in fields(StoredExecution))
RUN_FIELDS = tuple(item.name for item in fields(StoredValidationRun))


def to_schedule(row: Row[Any]) -> StoredSchedule:
    values = row._mapping
    return StoredSchedule(**{name: values[name] for name in SCHEDULE_FIELDS})


def to_execution(row: Row[Any]) -> StoredExecution:
    values = dict(row._mapping)
    values["trigger"] = values.pop("fired_by")
    return StoredExecution(**{name: values[name] for name in EXECUTION_FIELDS})


def run_values(run: StoredValidationRun) -> dict[str, Any]:
    return {name: getattr(run, name) for name in RUN_FIELDS}


def execution_values(execution: StoredExecution) -> dict[str, Any]:
    values = {name: getattr(execution, name) for name in EXECUTION_FIELDS}
    values["fired_by"] = values.pop("trigger")
    return values


class SqlScheduleStore(EngineStore):
    """Schedules in a SQL database. Arguments as `EngineStore`'s; `turns` are those of
    another store on the same in-memory database, which is one connection that every
    store object over it must take turns on."""

    def __init__(self, engine: Engine, *, migrate_schema: bool = True,
                 owns_engine: bool = False,
                 turns: AbstractContextManager[object] | None = None) -> None:
        super().__init__(engine, migrate_schema=migrate_schema, owns_engine=owns_engine,
                         turns=turns)

    def add(self, schedule: StoredSchedule) -> None:
        with self._transaction() as connection:
            connection.execute(insert(SCHEDULES).values(
                **{name: getattr(schedule, name) for name in SCHEDULE_FIELDS}))

    def get(self, schedule_id: str) -> StoredSchedule | None:
        with self._transaction(read_only=True) as connection:
            row = connection.execute(
                select(SCHEDULES).where(SCHEDULES.c.schedule_id == schedule_id)).first()
            return None if row is None else to_schedule(row)

    def list(self) -> builtins.list[StoredSchedule]:
        with self._transaction(read_only=True) as connection:
            return [to_schedule(row) for row in
                    connection.execute(select(SCHEDULES).order_by(SCHEDULES.c.seq))]

    def due(self, now: datetime) -> builtins.list[StoredSchedule]:
        query = (select(SCHEDULES).where(SCHEDULES.c.next_fire_at <= now)
                 .order_by(SCHEDULES.c.next_fire_at, SCHEDULES.c.seq))
        with self._transaction(read_only=True) as connection:
            return [to_schedule(row) for row in connection.execute(query)]

    def next_due(self) -> datetime | None:
        with self._transaction(read_only=True) as connection:
            earliest: datetime | None = connection.scalar(
                select(func.min(SCHEDULES.c.next_fire_at)))
            return earliest

    def claim(self, schedule_id: str, expected: datetime | None,
              following: datetime | None) -> bool:
        matches = (SCHEDULES.c.next_fire_at.is_(None) if expected is None
                   else SCHEDULES.c.next_fire_at == expected)
        with self._transaction() as connection:
            moved = connection.execute(
                update(SCHEDULES)
                .where(SCHEDULES.c.schedule_id == schedule_id, matches)
                .values(next_fire_at=following))
            return moved.rowcount == 1

    def replace(self, schedule: StoredSchedule) -> bool:
        with self._transaction() as connection:
            changed = connection.execute(
                update(SCHEDULES).where(SCHEDULES.c.schedule_id == schedule.schedule_id)
                .values(**{name: getattr(schedule, name) for name in SCHEDULE_FIELDS
                           if name != "schedule_id"}))
            return changed.rowcount == 1

    def remove(self, schedule_id: str) -> bool:
        with self._transaction() as connection:
            # Executions first: not every database enforces the foreign key's cascade.
            connection.execute(delete(EXECUTIONS).where(EXECUTIONS.c.schedule_id == schedule_id))
            connection.execute(delete(VALIDATION_RUNS)
                               .where(VALIDATION_RUNS.c.schedule_id == schedule_id))
            removed = connection.execute(
                delete(SCHEDULES).where(SCHEDULES.c.schedule_id == schedule_id))
            return removed.rowcount == 1

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> bool:
        with self._transaction() as connection:
            changed = connection.execute(
                update(SCHEDULES).where(SCHEDULES.c.schedule_id == schedule_id)
                .values(validation=enabled, validation_timeout=timeout_seconds))
            return changed.rowcount == 1

    def record(self, execution: StoredExecution) -> None:
        with self._transaction() as connection:
            connection.execute(insert(EXECUTIONS).values(**execution_values(execution)))

    def end(self, schedule_id: str, scheduled_for: datetime, outcome: str,
            cost: float | None, business_status: str | None = None,
            validation: StoredValidationRun | None = None) -> bool:
        """A compare-and-set per execution: the update lands only on a row still without
        an outcome, so of two ends racing for one execution the first stays (SC-019). The
        validation run is written in the same transaction, naming that row's execution."""
        open_ends = (select(EXECUTIONS.c.seq, EXECUTIONS.c.execution_id)
                     .where(EXECUTIONS.c.schedule_id == schedule_id,
                            EXECUTIONS.c.scheduled_for == scheduled_for,
                            EXECUTIONS.c.status == ExecutionStatus.DISPATCHED.value,
                            EXECUTIONS.c.outcome.is_(None))
                     .order_by(*HISTORY_ORDER))
        run_id = None if validation is None else validation.run_id
        with self._transaction() as connection:
            for seq, execution_id in connection.execute(open_ends).all():
                ended = connection.execute(
                    update(EXECUTIONS)
                    .where(EXECUTIONS.c.seq == seq, EXECUTIONS.c.outcome.is_(None))
                    .values(outcome=outcome, cost=cost, business_status=business_status,
                            validation_run=run_id))
                if ended.rowcount == 1:
                    if validation is not None:
                        connection.execute(insert(VALIDATION_RUNS).values(
                            **run_values(replace(validation, validates=execution_id))))
                    return True
            return False

    def decide(self, schedule_id: str, scheduled_for: datetime, judge: Judge) -> bool:
        """The same compare-and-set on pending_validation: of two verdicts racing for one
        execution the first stays, and only the one that lands alerts (SC-022, SC-024)."""
        pending = BusinessStatus.PENDING_VALIDATION.value
        waiting = (select(EXECUTIONS.c.seq, EXECUTIONS.c.execution_id, VALIDATION_RUNS)
                   .join(VALIDATION_RUNS,
                         VALIDATION_RUNS.c.run_id == EXECUTIONS.c.validation_run)
                   .where(EXECUTIONS.c.schedule_id == schedule_id,
                          EXECUTIONS.c.scheduled_for == scheduled_for,
                          EXECUTIONS.c.business_status == pending)
                   .order_by(*HISTORY_ORDER))
        with self._transaction() as connection:
            for row in connection.execute(waiting).all():
                values = row._mapping
                status = judge(StoredValidationRun(**{name: values[name]
                                                      for name in RUN_FIELDS}))
                decided = connection.execute(
                    update(EXECUTIONS)
                    .where(EXECUTIONS.c.seq == values["seq"],
                           EXECUTIONS.c.business_status == pending)
                    .values(business_status=status.value))
                if decided.rowcount == 1:
                    if status is BusinessStatus.FAILED_VALIDATION:
                        self._alert(connection, values["execution_id"])
                    return True
            return False

    def _alert(self, connection: Connection, execution_id: str) -> None:
        """Notify the operator of a failed validation (SC-024), in the verdict's
        transaction: the alert and the status stand or fall together."""
        connection.execute(insert(ALERTS).values(execution_id=execution_id))

    def validation_run(self, run_id: str) -> StoredValidationRun | None:
        with self._transaction(read_only=True) as connection:
            row = connection.execute(
                select(VALIDATION_RUNS).where(VALIDATION_RUNS.c.run_id == run_id)).first()
            return None if row is None else StoredValidationRun(
                **{name: row._mapping[name] for name in RUN_FIELDS})

    def alerts(self) -> builtins.list[str]:
        with self._transaction(read_only=True) as connection:
            return list(connection.scalars(select(ALERTS.c.execution_id)
                                           .order_by(ALERTS.c.seq)))

    def history(self, schedule_id: str) -> builtins.list[StoredExecution]:
        query = (select(EXECUTIONS).where(EXECUTIONS.c.schedule_id == schedule_id)
                 .order_by(*HISTORY_ORDER))
        with self._transaction(read_only=True) as connection:
            return [to_execution(row) for row in connection.execute(query)]

    def autonomy(self) -> bool:
        with self._transaction(read_only=True) as connection:
            value = connection.scalar(select(SWITCH.c.autonomy)
                                      .where(SWITCH.c.id == SWITCH_ROW))
            return True if value is None else bool(value)

    def set_autonomy(self, enabled: bool) -> None:
        with self._transaction() as connection:
            connection.execute(delete(SWITCH).where(SWITCH.c.id == SWITCH_ROW))
            connection.execute(insert(SWITCH).values(id=SWITCH_ROW, autonomy=enabled))

    def clear(self) -> None:
        """Delete every schedule, execution, validation run, alert and the switch (a
        check starts empty)."""
        with self._transaction() as connection:
            connection.execute(delete(ALERTS))
            connection.execute(delete(VALIDATION_RUNS))
            connection.execute(delete(EXECUTIONS))
            connection.execute(delete(SCHEDULES))
            connection.execute(delete(SWITCH))

    def reopen(self) -> SqlScheduleStore:
        """A new store over the same database, as a restarted process opens it. The
        engine (for in-memory SQLite, the database itself) passes to the new store."""
        return SqlScheduleStore(self._engine, migrate_schema=False,
                                owns_engine=self._hand_over_engine(), turns=self._turns)

    def share(self) -> SqlScheduleStore:
        """A second store over the same database, for a second scheduler; it never
        disposes of the engine."""
        return SqlScheduleStore(self._engine, migrate_schema=False, turns=self._turns)
