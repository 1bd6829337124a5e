"""The SQL job store: the `JobStore` contract on SQLite, PostgreSQL and MariaDB.

Each method is one transaction. The atomic steps of the contract map onto the database:

- `add` locks the submission counter row first, so the task-cap count and the insert
  happen with no other submission in between, in any number of processes;
- `claim` takes the oldest eligible queued rows with `SELECT ... FOR UPDATE SKIP LOCKED`
  on PostgreSQL and MariaDB (concurrent claimers skip each other's rows instead of
  waiting), and with one conditional `UPDATE ... RETURNING` on SQLite, whose writing
  transactions hold the database's write lock from their start;
- `claim` raises each taken row's `fencing_token` by one in the same statement;
- `update` is `UPDATE ... WHERE job_id = ? AND status = ?` plus one equality per expected
  field (an owner's fencing token; a rescuer's token and heartbeat), so a stale worker
  cannot overwrite a job that was cancelled, rescued or re-claimed meanwhile (LC-003,
  RD-006): the compare and the set are one statement.

Time comes from the caller: the store never reads a clock.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Connection,
    CursorResult,
    Engine,
    Row,
    Table,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.pool import StaticPool

from jobconform.backends.protocol import CapacityExceeded
from jobconform.backends.sql.database import (
    READ_ONLY,
    SqlStoreError,
    create_store_engine,
    migrate,
)
from jobconform.backends.sql.models import JSON_SCHEMA_VERSION, JobRow, SubmissionCounter
from jobconform.backends.store import (
    QUEUED,
    RUNNING,
    STATUSES,
    TERMINAL,
    StoredJob,
    check_changes,
)

STORED_FIELDS = tuple(field.name for field in fields(StoredJob))
SKIP_LOCKED_DATABASES = ("postgresql", "mysql", "mariadb")

# Statements run on SQLAlchemy Core against the models' tables: every method is a
# transaction of one or two statements, where the ORM's identity map and unit of work
# would only double the cost of each call.
JOBS = cast(Table, JobRow.__table__)
COUNTER = cast(Table, SubmissionCounter.__table__)


class UnknownSchemaVersion(SqlStoreError, RuntimeError):
    """A row was written with a JSON encoding this release cannot read."""


def to_stored(row: Row[Any]) -> StoredJob:
    """The frozen record of a jobs row; the row itself never leaves the store."""
    values = row._mapping
    if values["schema_version"] != JSON_SCHEMA_VERSION:
        raise UnknownSchemaVersion(
            f"job {values['job_id']} was written with JSON schema version"
            f" {values['schema_version']}; this release reads version"
            f" {JSON_SCHEMA_VERSION}: upgrade jobconform"
        )
    return StoredJob(**{name: values[name] for name in STORED_FIELDS})


def row_values(job: StoredJob) -> dict[str, Any]:
    """The columns of a new or overwritten row."""
    values = {name: getattr(job, name) for name in STORED_FIELDS}
    values["schema_version"] = JSON_SCHEMA_VERSION
    return values


def rows_matched(result: CursorResult[Any]) -> int:
    """How many rows an UPDATE or DELETE matched (on MariaDB too: SQLAlchemy connects
    with the found-rows flag, so an update to identical values still counts)."""
    return result.rowcount


class SqlJobStore:
    """A job store in a SQL database.

    Args:
        engine: from `create_store_engine` (it sets up transactions as the store needs).
        migrate_schema: bring the schema to the newest migration first; pass False when
            the database is already migrated (say, by a deployment step).
        owns_engine: dispose of the engine on `close`.
    """

    def __init__(self, engine: Engine, *, migrate_schema: bool = True,
                 owns_engine: bool = False) -> None:
        if migrate_schema:
            migrate(engine)
        self._engine = engine
        self._owns_engine = owns_engine
        # An in-memory SQLite database is a single connection: threads sharing it would
        # interleave their transactions, so they take turns.
        self._turns: AbstractContextManager[object] = (
            threading.Lock() if isinstance(engine.pool, StaticPool) else nullcontext()
        )
        self._skip_locked = engine.dialect.name in SKIP_LOCKED_DATABASES

    @classmethod
    def connect(cls, url: str, *, migrate_schema: bool = True) -> SqlJobStore:
        """A store on its own engine for `url`.

        Raises:
            DatabaseUrlError: the URL is malformed, unsupported, or its driver is missing.
            DatabaseUnavailable: the database cannot be reached.
        """
        return cls(create_store_engine(url), migrate_schema=migrate_schema, owns_engine=True)

    @contextmanager
    def _transaction(self, read_only: bool = False) -> Iterator[Connection]:
        with self._turns, self._engine.connect() as connection:
            connection.execution_options(**{READ_ONLY: read_only})
            with connection.begin():
                yield connection

    # -- the JobStore contract ---------------------------------------------------------

    def add(self, job: StoredJob, max_records: int | None) -> None:
        with self._transaction() as connection:
            order = self._next_submission_order(connection)
            if max_records is not None:
                held = connection.scalar(select(func.count()).select_from(JOBS)) or 0
                if held >= max_records:
                    raise CapacityExceeded(
                        f"task cap of {max_records} held records reached; run cleanup"
                    )
            connection.execute(insert(JOBS).values(submission_order=order, **row_values(job)))

    def add_many(self, jobs: Sequence[StoredJob]) -> None:
        """Insert many new queued jobs in one transaction, in the given order, with no task
        cap (a bulk load: the chaos benchmark fills its table so)."""
        if not jobs:
            return
        with self._transaction() as connection:
            first = self._next_submission_order(connection, len(jobs))
            connection.execute(insert(JOBS), [
                {"submission_order": first + n, **row_values(job)}
                for n, job in enumerate(jobs)])

    @staticmethod
    def _next_submission_order(connection: Connection, count: int = 1) -> int:
        """Lock the counter row (serialising submissions) and take the next `count`
        numbers; returns the first."""
        order: int = connection.execute(
            select(COUNTER.c.next_submission_order).where(COUNTER.c.id == 1).with_for_update()
        ).scalar_one()
        connection.execute(update(COUNTER).where(COUNTER.c.id == 1)
                           .values(next_submission_order=order + count))
        return order

    def get(self, job_id: str) -> StoredJob | None:
        with self._transaction(read_only=True) as connection:
            row = connection.execute(select(JOBS).where(JOBS.c.job_id == job_id)).first()
            return None if row is None else to_stored(row)

    def list(self, status: str | None = None) -> builtins.list[StoredJob]:
        query = select(JOBS).order_by(JOBS.c.submission_order)
        if status is not None:
            query = query.where(JOBS.c.status == status)
        with self._transaction(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(query)]

    def claim(self, worker_id: str, limit: int, now: datetime) -> builtins.list[StoredJob]:
        if limit <= 0:
            return []
        eligible = (
            select(JOBS.c.job_id)
            .where(JOBS.c.status == QUEUED)
            .where(JOBS.c.next_attempt_at.is_(None) | (JOBS.c.next_attempt_at <= now))
            .order_by(JOBS.c.submission_order)
            .limit(limit)
        )
        claiming = (update(JOBS).where(JOBS.c.status == QUEUED)
                    .values(status=RUNNING, started_at=now, worker_id=worker_id,
                            last_heartbeat=now, fencing_token=JOBS.c.fencing_token + 1))
        with self._transaction() as connection:
            if self._skip_locked:
                # Rows another claimer has locked are skipped, not waited for; the rows
                # taken stay locked by this transaction until it commits.
                job_ids = list(connection.scalars(eligible.with_for_update(skip_locked=True)))
                if not job_ids:
                    return []
                connection.execute(claiming.where(JOBS.c.job_id.in_(job_ids)))
                rows = connection.execute(select(JOBS).where(JOBS.c.job_id.in_(job_ids))
                                          .order_by(JOBS.c.submission_order))
                return [to_stored(row) for row in rows]
            # SQLite: one statement that only moves rows still queued.
            claimed = connection.execute(
                claiming.where(JOBS.c.job_id.in_(eligible.scalar_subquery())).returning(JOBS)
            ).all()
            # RETURNING gives rows in no set order.
            return [to_stored(row)
                    for row in sorted(claimed, key=lambda row: row.submission_order)]

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        check_changes(changes)
        unknown = set(expected or {}) - set(STORED_FIELDS)
        if unknown:
            raise TypeError(f"update cannot compare {sorted(unknown)}: not StoredJob fields")
        conditions = [JOBS.c.job_id == job_id, JOBS.c.status == expected_status]
        conditions += [JOBS.c[name] == value for name, value in (expected or {}).items()]
        with self._transaction() as connection:
            moved = connection.execute(update(JOBS).where(*conditions).values(**changes))
            if rows_matched(moved) == 0:
                return None
            # This transaction still holds the row (its lock on PostgreSQL and MariaDB,
            # the database's write lock on SQLite): it reads back its own write.
            row = connection.execute(select(JOBS).where(JOBS.c.job_id == job_id)).one()
            return to_stored(row)

    def delete_terminal(self, finished_at_or_before: datetime) -> int:
        with self._transaction() as connection:
            return rows_matched(connection.execute(
                delete(JOBS)
                .where(JOBS.c.status.in_(TERMINAL))
                .where(func.coalesce(JOBS.c.finished_at, JOBS.c.submitted_at)
                       <= finished_at_or_before)
            ))

    def counts(self) -> Mapping[str, int]:
        # One statement reads one snapshot on every database.
        query = select(JOBS.c.status, func.count()).group_by(JOBS.c.status)
        with self._transaction(read_only=True) as connection:
            counts = dict.fromkeys(STATUSES, 0)
            counts.update({status: count for status, count in connection.execute(query)})
            return counts

    def close(self) -> None:
        if self._owns_engine:
            self._engine.dispose()

    # -- the TaskStore names of seed 004 -----------------------------------------------

    def save(self, job: StoredJob) -> None:
        """Create or overwrite the record (seed 004 `TaskStore.save`); an overwrite keeps
        the job's place in submission order."""
        with self._transaction() as connection:
            order = self._next_submission_order(connection)  # serialises concurrent saves
            overwritten = connection.execute(
                update(JOBS).where(JOBS.c.job_id == job.job_id).values(**row_values(job)))
            if rows_matched(overwritten) == 0:
                connection.execute(insert(JOBS).values(submission_order=order,
                                                       **row_values(job)))

    def delete(self, job_id: str) -> None:
        """Remove the record; an unknown id is a no-op (seed 004 `TaskStore.delete`)."""
        with self._transaction() as connection:
            connection.execute(delete(JOBS).where(JOBS.c.job_id == job_id))

    def list_expired(self, before: datetime) -> builtins.list[StoredJob]:
        """Terminal records finished strictly before `before` (seed 004
        `TaskStore.list_expired`), in submission order."""
        query = (select(JOBS).where(JOBS.c.status.in_(TERMINAL))
                 .where(JOBS.c.finished_at < before).order_by(JOBS.c.submission_order))
        with self._transaction(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(query)]

    # -- for runtimes that reuse one database ------------------------------------------

    def clear(self) -> None:
        """Delete every job record, leaving an empty store on the same schema."""
        with self._transaction() as connection:
            connection.execute(delete(JOBS))
