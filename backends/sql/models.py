"""The SQL store's tables as SQLAlchemy 2 typed declarative models, private to the store.

The jobs table follows the `async_jobs` design of seed 000: a UUID primary key, a status
column guarded by a CHECK constraint, indexes for status polling, worker lookups and
age ordering, an error message column, JSON values under a schema version, and UTC
timestamps. Rows never leave the store: it converts them to the frozen `StoredJob` at its
boundary, so callers never hold something that reads through to the database.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    Double,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

from jobconform.backends.reminders.store import REMINDER_STATUSES
from jobconform.backends.store import STATUSES

# Bumped whenever the encoding of the JSON columns (result, retry_policy) changes, so that
# a store can tell rows it knows how to read from rows a newer release wrote (seed 000,
# "Payload Serialization").
JSON_SCHEMA_VERSION = 1

# Explicit constraint names: migrations and the autogenerate comparison need them stable
# on every database.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "pk": "pk_%(table_name)s",
}


def one_of(column: str, values: tuple[str, ...]) -> str:
    """A CHECK condition that `column` holds one of `values` (plain words, quoted as
    they are)."""
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


STATUS_CHECK = one_of("status", STATUSES)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC instant on every database.

    PostgreSQL keeps the offset (timestamptz). SQLite and MariaDB keep naive values, so the
    store writes them in UTC and attaches UTC when reading. MariaDB's DATETIME drops
    microseconds unless declared with fsp=6.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError(f"the job store keeps UTC instants; {value!r} has no timezone")
        value = value.astimezone(UTC)
        return value if dialect.name == "postgresql" else value.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None,
                             dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class JobRow(Base):
    """One job. Columns named as the `StoredJob` fields map one to one; the rest is
    bookkeeping (submission order, JSON schema version)."""

    __tablename__ = "async_jobs"

    job_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # Submission order: timestamps tie under a virtual clock and in busy systems, so
    # listing and claiming order by this strictly increasing number instead.
    submission_order: Mapped[int] = mapped_column(BigInteger, unique=True)
    status: Mapped[str] = mapped_column(String(20))
    submitted_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    result: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    # LONGTEXT on MySQL and MariaDB, whose TEXT holds 65 535 bytes (LC-039, migration 0046).
    error: Mapped[str | None] = mapped_column(Text().with_variant(mysql.LONGTEXT(), "mysql",
                                                                   "mariadb"))
    worker_id: Mapped[str | None] = mapped_column(String(255), index=True)
    last_heartbeat: Mapped[datetime | None] = mapped_column(UtcDateTime)
    cancel_requested: Mapped[bool] = mapped_column(server_default=false())
    retry_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    max_retries: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    retry_policy: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    redelivery_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    alerted: Mapped[bool] = mapped_column(server_default=false())
    poisoned: Mapped[bool] = mapped_column(server_default=false())
    # Claims so far: the fencing token every owner write and rescue is conditioned on.
    fencing_token: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    # What the submission named (LC-033, LC-035); the owners filter reads `owner`.
    owner: Mapped[str | None] = mapped_column(String(255), index=True)
    trigger: Mapped[str | None] = mapped_column(String(255))
    options: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    # The job's arguments as submitted (LC-036), JSON text as the result is.
    arguments: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    schema_version: Mapped[int] = mapped_column(
        Integer, server_default=text(str(JSON_SCHEMA_VERSION)))

    __table_args__ = (
        CheckConstraint(STATUS_CHECK, name="status"),
        # Status polling: the claim reads the oldest queued jobs, in submission order.
        Index(None, "status", "submission_order"),
    )


class SubmissionCounter(Base):
    """A single row holding the next submission order.

    Adding a job locks this row first, so that on every database concurrent submissions
    are serialised: the task-cap check and the insert are one atomic step, and the
    submission order is strictly increasing without relying on per-database sequences.
    """

    __tablename__ = "async_jobs_submission_counter"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    next_submission_order: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)


class OperatorRequestRow(Base):
    """One request a job parked for a human operator (seed 002 §10.13's operator queue,
    RD-008). Its id is minted here; the agent's own string is `request_id`, unique per
    agent, so two agents reusing one string hold two rows and a re-park finds the first.
    `seq` is the parking order."""

    __tablename__ = "operator_requests"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    queue_id: Mapped[str] = mapped_column(String(36), unique=True)
    agent: Mapped[str] = mapped_column(String(255))
    request_id: Mapped[str] = mapped_column(String(255))

    __table_args__ = (UniqueConstraint("agent", "request_id"),)


KEY_STATES = ("in_flight", "completed")
KEY_STATE_CHECK = one_of("state", KEY_STATES)


class IdempotencyKeyRow(Base):
    """One idempotency key (seed 002 §10.10): the primary key on (scope, key) makes the
    first insert of a key the one claim that starts the work; the rest carries the replay.

    `claim_token` names the claim that holds the key, and every later write is
    conditioned on it, so a holder that lost its claim (released, taken over) cannot
    write. `created_at` is the TTL's start and is indexed for the purge.
    """

    __tablename__ = "idempotency_keys"

    scope: Mapped[str] = mapped_column(String(255), primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(255))
    claim_token: Mapped[str] = mapped_column(String(36), unique=True)
    state: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    claimed_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # {"result": value} or {"error_type": name, "message": text}; null while in flight.
    outcome: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    schema_version: Mapped[int] = mapped_column(
        Integer, server_default=text(str(JSON_SCHEMA_VERSION)))

    __table_args__ = (CheckConstraint(KEY_STATE_CHECK, name="state"),)

# -- the breaker area (spec/breaker.yaml) ------------------------------------------------------

WORK_STATUSES = ("queued", "failed")


class BreakerStateRow(Base):
    """One target's dispatch circuit breaker, shared by every worker on the database.

    Every write is `UPDATE ... WHERE version = <the version read>` (or an INSERT of a
    target's first row, which the primary key lets only one writer win), so concurrent
    workers never both take the half-open probe slot.
    """

    __tablename__ = "breaker_states"

    target: Mapped[str] = mapped_column(String(255), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    cooldown_seconds: Mapped[float] = mapped_column(Double)
    open_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    probe: Mapped[str | None] = mapped_column(String(255))
    probe_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    version: Mapped[int] = mapped_column(BigInteger)


class BreakerWorkRow(Base):
    """Work waiting for a target, or failed by its breaker's trip; `id` keeps the order."""

    __tablename__ = "breaker_work"

    # SQLite numbers rows only for an INTEGER primary key.
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    target: Mapped[str] = mapped_column(String(255))
    work: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(10))

    __table_args__ = (
        CheckConstraint("status IN ('queued', 'failed')", name="status"),
        Index(None, "target", "status", "id"),
    )


# -- the governor area (spec/governor.yaml) ----------------------------------------------------


class GovernorDeliveryRow(Base):
    """A re-delivery the governor accepted; the caps count these over sliding windows."""

    __tablename__ = "governor_deliveries"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    target: Mapped[str] = mapped_column(String(255))
    accepted_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)

    __table_args__ = (Index(None, "target", "accepted_at"),)


class GovernorResultRow(Base):
    """A failure result already counted: a replay of its id is not counted again."""

    __tablename__ = "governor_results"

    result_id: Mapped[str] = mapped_column(String(255), primary_key=True)


class GovernorFailureRow(Base):
    """The latest counted failure of one class at one target: distinct targets count."""

    __tablename__ = "governor_failures"

    failure_class: Mapped[str] = mapped_column(String(32), primary_key=True)
    target: Mapped[str] = mapped_column(String(255), primary_key=True)
    counted_at: Mapped[datetime] = mapped_column(UtcDateTime)


class GovernorPauseRow(Base):
    """The single row holding the shared-cause pause. Every governor decision locks it
    first, so decisions of concurrent processes are serialised."""

    __tablename__ = "governor_pause"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    paused_until: Mapped[datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

REMINDER_STATUS_CHECK = one_of("status", REMINDER_STATUSES)


class ReminderRow(Base):
    """One self-reminder (seed 002 §10.14's dedicated, durable reminders table).

    `seq` is the creation order: timestamps tie under a virtual clock, so listing orders
    by this increasing key instead.
    """

    __tablename__ = "reminders"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reminder_id: Mapped[str] = mapped_column(String(36), unique=True)
    message: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    fire_at: Mapped[datetime] = mapped_column(UtcDateTime)
    due_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    fired_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # The creation's idempotency key (RM-017), if it carried one.
    idempotency_key: Mapped[str | None] = mapped_column(String(255), index=True)
    # Created without a key: the key derived from its message and schedule as given, a
    # SHA-256 digest in hex (RM-018).
    derived_key: Mapped[str | None] = mapped_column(String(64), index=True)

    __table_args__ = (
        CheckConstraint(REMINDER_STATUS_CHECK, name="status"),
        # The scheduler's poll: pending reminders by due time.
        Index(None, "status", "due_at"),
    )
