"""The SQL job store: the `JobStore` contract on SQLite, PostgreSQL and MariaDB.

Every method is one transaction, as short as the database allows. The atomic steps of the
contract map onto the database:

- `add` locks the submission counter row first, so the task-cap count and the insert
  happen with no other submission in between, in any number of processes;
- `claim` is one statement on PostgreSQL and SQLite: `UPDATE ... WHERE job_id IN (SELECT
  ... FOR UPDATE SKIP LOCKED) RETURNING ...` (concurrent claimers skip each other's rows
  instead of waiting; SQLite has no row locks, and its writing transactions hold the
  database's write lock from their start). MariaDB has no `UPDATE ... RETURNING`: its
  claim locks the rows with `SELECT ... FOR UPDATE SKIP LOCKED` and moves them with one
  `UPDATE` in the same transaction;
- `claim` raises each taken row's `fencing_token` by one in the same statement;
- `update` is `UPDATE ... WHERE job_id = ? AND status = ?` plus one equality per expected
  field (an owner's fencing token; a rescuer's token and heartbeat), so a stale worker
  cannot overwrite a job that was cancelled, rescued or re-claimed meanwhile (LC-003,
  RD-006): the compare and the set are one statement, which returns the new record
  (MariaDB reads it back in the same transaction, still holding the row's lock).

On PostgreSQL a method that is one statement runs in autocommit mode: the statement is its
own transaction, one round trip with no BEGIN or COMMIT around it. A claim and a
completion then cost one round trip each.

The statements are built once, at import, with bound parameters for every value, and
reused: SQLAlchemy compiles each once per database and keeps it in the engine's cache, so a
call only binds its values. Building a `select()` or `update()` per call (and its cache
key) used to cost more client time than the database's own work.

Time comes from the caller: the store never reads a clock.
"""

from __future__ import annotations

import builtins
import functools
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    Connection,
    CursorResult,
    Engine,
    Integer,
    Row,
    RowMapping,
    String,
    Table,
    Update,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool

from jobconform.backends.faults import CrashedInStatement, ProcessCrashed, SqlWriteFaults
from jobconform.backends.protocol import CapacityExceeded
from jobconform.backends.sql.database import (
    READ_ONLY,
    SqlStoreError,
    create_store_engine,
    migrate,
)
from jobconform.backends.sql.models import (
    JSON_SCHEMA_VERSION,
    JobRow,
    OperatorRequestRow,
    SubmissionCounter,
    UtcDateTime,
)
from jobconform.backends.store import (
    QUEUED,
    RUNNING,
    STATUSES,
    TERMINAL,
    StoredJob,
    check_changes,
    check_fenced,
)
from jobconform.reference.faults import StoreFault

STORED_FIELDS = tuple(field.name for field in fields(StoredJob))

# Statements run on SQLAlchemy Core against the models' tables: every method is a
# transaction of one or two statements, where the ORM's identity map and unit of work
# would only double the cost of each call.
JOBS = cast(Table, JobRow.__table__)
COUNTER = cast(Table, SubmissionCounter.__table__)
REQUESTS = cast(Table, OperatorRequestRow.__table__)


class UnknownSchemaVersion(SqlStoreError, RuntimeError):
    """A row was written with a JSON encoding this release cannot read."""


def readable_columns(row: Row[Any], record: Callable[[RowMapping], str]) -> RowMapping:
    """The row's columns by name, once its JSON schema version is this release's; else
    UnknownSchemaVersion, naming the row as `record` does ("job 7")."""
    values = row._mapping
    if values["schema_version"] != JSON_SCHEMA_VERSION:
        raise UnknownSchemaVersion(
            f"{record(values)} was written with JSON schema version"
            f" {values['schema_version']}; this release reads version"
            f" {JSON_SCHEMA_VERSION}: upgrade jobconform")
    return values


def to_stored(row: Row[Any]) -> StoredJob:
    """The frozen record of a jobs row; the row itself never leaves the store."""
    values = readable_columns(row, lambda values: f"job {values['job_id']}")
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


# -- the statements, built once ----------------------------------------------------------------

# What a record is read from: its fields, then the schema version `to_stored` checks.
RECORD = (*(JOBS.c[name] for name in STORED_FIELDS), JOBS.c.schema_version)

# One parameter object per value, so that a statement using it in several places binds it
# once. Their names are not column names: an UPDATE reserves those for its SET clause.
NOW = bindparam("now", type_=UtcDateTime())
CLAIMER = bindparam("claimer", type_=String())
LIMIT = bindparam("claim_limit", type_=Integer())
JOB_ID = bindparam("the_job_id", type_=String())
JOB_IDS = bindparam("the_job_ids", expanding=True, type_=String())
STATUS = bindparam("the_status", type_=String())
CUTOFF = bindparam("cutoff", type_=UtcDateTime())

GET = select(*RECORD).where(JOBS.c.job_id == JOB_ID)
LIST_ALL = select(*RECORD).order_by(JOBS.c.submission_order)
LIST_BY_STATUS = LIST_ALL.where(JOBS.c.status == STATUS)
COUNTS = select(JOBS.c.status, func.count()).group_by(JOBS.c.status)
DELETE_TERMINAL = (delete(JOBS).where(JOBS.c.status.in_(TERMINAL))
                   .where(func.coalesce(JOBS.c.finished_at, JOBS.c.submitted_at) <= CUTOFF))
LIST_EXPIRED = (select(*RECORD).where(JOBS.c.status.in_(TERMINAL))
                .where(JOBS.c.finished_at < CUTOFF).order_by(JOBS.c.submission_order))
DELETE_ONE = delete(JOBS).where(JOBS.c.job_id == JOB_ID)
OVERWRITE = update(JOBS).where(JOBS.c.job_id == JOB_ID)  # SET: every column, as passed
DELETE_ALL = delete(JOBS)
COUNT_ALL = select(func.count()).select_from(JOBS)
LOCK_COUNTER = (select(COUNTER.c.next_submission_order).where(COUNTER.c.id == 1)
                .with_for_update())
ADVANCE_COUNTER = (update(COUNTER).where(COUNTER.c.id == 1)
                   .values(next_submission_order=bindparam("next_order")))
INSERT_JOB = insert(JOBS)
# The operator queue (RD-008): a request by its key, every request in parking order.
REQUEST_BY_KEY = (select(REQUESTS.c.queue_id).where(REQUESTS.c.agent == bindparam("agent"))
                  .where(REQUESTS.c.request_id == bindparam("request_id")))
INSERT_REQUEST = insert(REQUESTS)
LIST_REQUESTS = select(REQUESTS.c.queue_id, REQUESTS.c.agent,
                       REQUESTS.c.request_id).order_by(REQUESTS.c.seq)
DELETE_REQUESTS = delete(REQUESTS)

# The oldest eligible queued jobs: not in backoff, or out of it by `now`.
ELIGIBLE_ROWS = (
    select(JOBS.c.job_id)
    .where(JOBS.c.status == QUEUED)
    .where(JOBS.c.next_attempt_at.is_(None) | (JOBS.c.next_attempt_at <= NOW))
    .order_by(JOBS.c.submission_order)
    .limit(LIMIT)
)
# What a claim writes; the fencing token is raised in the statement, from the row's value.
CLAIMED = {"status": RUNNING, "started_at": NOW, "worker_id": CLAIMER,
           "last_heartbeat": NOW, "fencing_token": JOBS.c.fencing_token + 1}


# PostgreSQL: the rows are picked and locked in a materialized CTE, which runs exactly
# once. Written as `job_id IN (SELECT ... LIMIT n)`, the planner may run the subquery
# again for each row it joins, and one claim of 2 took 3 jobs in the tests.
PICKED = ELIGIBLE_ROWS.with_for_update(skip_locked=True).cte("picked").prefix_with(
    "MATERIALIZED")
CLAIM_POSTGRESQL = (update(JOBS).where(JOBS.c.job_id == PICKED.c.job_id).values(CLAIMED)
                    .returning(*RECORD, JOBS.c.submission_order))
# SQLite has no row locks (a writing transaction holds the database's write lock from its
# start) and evaluates an IN subquery once, into a temporary table.
CLAIM_SQLITE = (update(JOBS).where(JOBS.c.job_id.in_(ELIGIBLE_ROWS.scalar_subquery()))
                .values(CLAIMED).returning(*RECORD, JOBS.c.submission_order))
# MariaDB: lock and read the records, then move the locked rows by id.
LOCK_ELIGIBLE = (ELIGIBLE_ROWS.with_only_columns(*RECORD)
                 .with_for_update(skip_locked=True))
TAKE_LOCKED = update(JOBS).where(JOBS.c.job_id.in_(JOB_IDS)).values(CLAIMED)


@functools.cache
def conditioned_update(expected: tuple[tuple[str, bool], ...], returning: bool) -> Update:
    """`UPDATE jobs WHERE job_id = ? AND status = ?` and one condition per expected field,
    given as (name, expected to be null). The SET clause comes from the keys of the
    parameters each execution passes, so one statement serves every set of changes.
    Built once per shape: rescuers, owners and shutdown each use one or two shapes."""
    conditions = [JOBS.c.job_id == JOB_ID, JOBS.c.status == STATUS]
    conditions += [JOBS.c[name].is_(None) if null
                   else JOBS.c[name] == bindparam(f"expected_{name}")
                   for name, null in expected]
    statement = update(JOBS).where(*conditions)
    return statement.returning(*RECORD) if returning else statement


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
        self._reader = engine.execution_options(**{READ_ONLY: True})
        self._owns_engine = owns_engine
        # An in-memory SQLite database is a single connection: threads sharing it would
        # interleave their transactions, so they take turns.
        self._turns: AbstractContextManager[object] = (
            threading.Lock() if isinstance(engine.pool, StaticPool) else nullcontext()
        )
        database = engine.dialect.name
        self._postgresql = database == "postgresql"
        self._returning = database in ("postgresql", "sqlite")  # UPDATE ... RETURNING
        # Autocommit connections kept for PostgreSQL's lone statements (see _statement).
        self._idle: builtins.list[Connection] = []
        self._idle_lock = threading.Lock()
        self._closed = False
        # Store faults strike the INSERT, UPDATE and DELETE statements (one per write).
        self._faults = SqlWriteFaults(engine)

    def inject_fault(self, fault: StoreFault | None) -> None:
        self._faults.arm(fault)

    def fault_struck(self) -> bool:
        return self._faults.struck()

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
        """A connection in a transaction, committed on leaving."""
        try:
            with (self._turns, (self._reader if read_only else self._engine).connect()
                  as connection, connection.begin()):
                yield connection
        except CrashedInStatement as crash:
            raise ProcessCrashed(str(crash)) from None  # rolled back: the write never happened

    @contextmanager
    def _statement(self, read_only: bool = False) -> Iterator[Connection]:
        """A connection for ONE statement, which is then its own transaction: in autocommit
        mode on PostgreSQL (no BEGIN, no COMMIT), in a short transaction elsewhere."""
        if not self._postgresql:
            with self._transaction(read_only) as connection:
                yield connection
            return
        # An autocommit connection is kept for the next statement instead of going back
        # to the pool: a checkout and a checkin, with the isolation level set and reset,
        # cost as much client time as the statement itself. The store keeps at most as
        # many as its callers used at once, and gives them back on `close`.
        with self._idle_lock:
            kept = self._idle.pop() if self._idle else None
        # The option is set on the connection, not on an engine made by
        # `engine.execution_options`: such an engine dispatches (empty) execution events
        # around every statement. Closing the connection resets the isolation level.
        connection = (self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
                      if kept is None else kept)
        try:
            yield connection
        except CrashedInStatement as crash:
            connection.close()
            raise ProcessCrashed(str(crash)) from None  # the statement never ran
        except BaseException:
            connection.close()  # back to the pool, which discards it if it is broken
            raise
        with self._idle_lock:
            if not self._closed:
                self._idle.append(connection)
                return
        connection.close()

    # -- the JobStore contract ---------------------------------------------------------

    def add(self, job: StoredJob, max_records: int | None) -> None:
        with self._transaction() as connection:
            order = self._next_submission_order(connection)
            if max_records is not None:
                held = connection.scalar(COUNT_ALL) or 0
                if held >= max_records:
                    raise CapacityExceeded(
                        f"task cap of {max_records} held records reached; run cleanup"
                    )
            connection.execute(INSERT_JOB, {"submission_order": order, **row_values(job)})

    def add_many(self, jobs: Sequence[StoredJob]) -> None:
        """Insert many new queued jobs in one transaction, in the given order, with no task
        cap (a bulk load: the chaos benchmark fills its table so)."""
        if not jobs:
            return
        with self._transaction() as connection:
            first = self._next_submission_order(connection, len(jobs))
            connection.execute(INSERT_JOB, [
                {"submission_order": first + n, **row_values(job)}
                for n, job in enumerate(jobs)])

    @staticmethod
    def _next_submission_order(connection: Connection, count: int = 1) -> int:
        """Lock the counter row (serialising submissions) and take the next `count`
        numbers; returns the first."""
        order: int = connection.execute(LOCK_COUNTER).scalar_one()
        connection.execute(ADVANCE_COUNTER, {"next_order": order + count})
        return order

    def get(self, job_id: str) -> StoredJob | None:
        with self._statement(read_only=True) as connection:
            row = connection.execute(GET, {"the_job_id": job_id}).first()
            return None if row is None else to_stored(row)

    def list(self, status: str | None = None) -> builtins.list[StoredJob]:
        with self._statement(read_only=True) as connection:
            rows = (connection.execute(LIST_ALL) if status is None
                    else connection.execute(LIST_BY_STATUS, {"the_status": status}))
            return [to_stored(row) for row in rows]

    def claim(self, worker_id: str, limit: int, now: datetime) -> builtins.list[StoredJob]:
        if limit <= 0:
            return []
        values = {"now": now, "claimer": worker_id, "claim_limit": limit}
        if not self._returning:
            return self._lock_then_claim(values)
        statement = CLAIM_POSTGRESQL if self._postgresql else CLAIM_SQLITE
        with self._statement() as connection:
            claimed = connection.execute(statement, values).all()
        # RETURNING gives rows in no set order.
        return [to_stored(row)
                for row in sorted(claimed, key=lambda row: row.submission_order)]

    def _lock_then_claim(self, values: dict[str, Any]) -> builtins.list[StoredJob]:
        """MariaDB's claim: its rows stay locked by this transaction from the read until
        the commit, so the records read are current and only the claim's changes need
        applying to them."""
        with self._transaction() as connection:
            seen = [to_stored(row) for row in connection.execute(LOCK_ELIGIBLE, values)]
            if not seen:
                return []
            connection.execute(TAKE_LOCKED, {**values,
                                             "the_job_ids": [job.job_id for job in seen]})
        # As the database returns them: in UTC.
        now = cast(datetime, values["now"]).astimezone(UTC)
        return [replace(job, status=RUNNING, started_at=now, worker_id=values["claimer"],
                        last_heartbeat=now, fencing_token=job.fencing_token + 1)
                for job in seen]

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        check_changes(changes)
        check_fenced(expected_status, expected)
        expected = expected or {}
        unknown = set(expected) - set(STORED_FIELDS)
        if unknown:
            raise TypeError(f"update cannot compare {sorted(unknown)}: not StoredJob fields")
        shape = tuple(sorted((name, value is None) for name, value in expected.items()))
        statement = conditioned_update(shape, self._returning)
        values = {"the_job_id": job_id, "the_status": expected_status, **changes}
        values.update((f"expected_{name}", value) for name, value in expected.items()
                      if value is not None)
        if self._returning:
            with self._statement() as connection:
                row = connection.execute(statement, values).first()
            return None if row is None else to_stored(row)
        with self._transaction() as connection:
            if rows_matched(connection.execute(statement, values)) == 0:
                return None
            # This transaction still holds the row's lock: it reads back its own write.
            return to_stored(connection.execute(GET, {"the_job_id": job_id}).one())

    def delete_terminal(self, finished_at_or_before: datetime) -> int:
        with self._statement() as connection:
            return rows_matched(connection.execute(DELETE_TERMINAL,
                                                   {"cutoff": finished_at_or_before}))

    def counts(self) -> Mapping[str, int]:
        # One statement reads one snapshot on every database.
        with self._statement(read_only=True) as connection:
            counts = dict.fromkeys(STATUSES, 0)
            counts.update({status: count for status, count in connection.execute(COUNTS)})
            return counts

    def reopen(self) -> SqlJobStore:
        """A new store object on the same database, as a restarted process opens it: it
        knows only what the tables hold (RS-001). It takes the engine over, so this object's
        `close` leaves the database to it; this object is not used again."""
        owns, self._owns_engine = self._owns_engine, False
        return type(self)(self._engine, migrate_schema=False, owns_engine=owns)

    def close(self) -> None:
        self._faults.arm(None)
        with self._idle_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        if self._owns_engine:
            self._engine.dispose()

    # -- the TaskStore names of seed 004 -----------------------------------------------

    def save(self, job: StoredJob) -> None:
        """Create or overwrite the record (seed 004 `TaskStore.save`); an overwrite keeps
        the job's place in submission order."""
        values = row_values(job)
        with self._transaction() as connection:
            order = self._next_submission_order(connection)  # serialises concurrent saves
            overwritten = connection.execute(OVERWRITE, {"the_job_id": job.job_id, **values})
            if rows_matched(overwritten) == 0:
                connection.execute(INSERT_JOB, {"submission_order": order, **values})

    def delete(self, job_id: str) -> None:
        """Remove the record; an unknown id is a no-op (seed 004 `TaskStore.delete`)."""
        with self._statement() as connection:
            connection.execute(DELETE_ONE, {"the_job_id": job_id})

    def list_expired(self, before: datetime) -> builtins.list[StoredJob]:
        """Terminal records finished strictly before `before` (seed 004
        `TaskStore.list_expired`), in submission order."""
        with self._statement(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(LIST_EXPIRED,
                                                                 {"cutoff": before})]

    # -- the operator queue (RD-008) ----------------------------------------------------

    def park_request(self, agent: str, request_id: str) -> str:
        """Insert the request unless (agent, request_id) is held; the unique key decides
        a race between two parkers, and the loser reads the winner's row."""
        key = {"agent": agent, "request_id": request_id}
        for _ in range(2):
            with self._transaction() as connection:
                held = connection.scalar(REQUEST_BY_KEY, key)
                if held is not None:
                    return str(held)
            minted = str(uuid.uuid4())
            try:
                with self._transaction() as connection:
                    connection.execute(INSERT_REQUEST, {"queue_id": minted, **key})
                return minted
            except IntegrityError:
                continue  # parked by another caller between the read and the insert
        raise SqlStoreError(f"request {request_id!r} of agent {agent!r} was neither found"
                            " nor inserted")

    def operator_requests(self) -> builtins.list[tuple[str, str, str]]:
        with self._statement(read_only=True) as connection:
            return [(row.queue_id, row.agent, row.request_id)
                    for row in connection.execute(LIST_REQUESTS)]

    # -- for runtimes that reuse one database ------------------------------------------

    def clear(self) -> None:
        """Delete every job record and operator request, leaving an empty store on the
        same schema."""
        with self._statement() as connection:
            connection.execute(DELETE_ALL)
        with self._statement() as connection:
            connection.execute(DELETE_REQUESTS)
