"""The SQL job store on SQLite, PostgreSQL and MariaDB: the JobStore contract, the schema
and its migrations, URL errors, and the `sql` backend built on it.

The multi-process checks (atomic claim, atomic cap, a killed worker) are in
test_sql_concurrency.py.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sql_databases import DATABASES, migrations_on, scratch_database
from sqlalchemy import Engine, event, inspect, make_url, text
from sqlalchemy.exc import IntegrityError, OperationalError, StatementError
from sqlalchemy.pool import QueuePool

from jobconform.backends import ownership
from jobconform.backends.loading import BackendLoadError, backend_names, load_backend
from jobconform.backends.protocol import CapacityExceeded, RuntimeSettings, TaskScript
from jobconform.backends.shipped import EVERY_SHIPPED_BACKEND
from jobconform.backends.sql import (
    SQL_URL_ENV,
    DatabaseUnavailable,
    DatabaseUrlError,
    SqlBackend,
    SqlJobStore,
    SqlRuntime,
    UnknownSchemaVersion,
    create_store_engine,
)
from jobconform.backends.sql.models import Base, JobRow
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    StoredJob,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.gallery.sql import UnconditionedWriteStore
from jobconform.reference.commands import Succeed
from jobconform.reference.lifecycle import LONG_TEXT, long_text

ALL_FIELDS = tuple(field.name for field in dataclasses.fields(StoredJob))


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def queued(job_id: str, seconds: float = 0) -> StoredJob:
    return StoredJob(job_id, QUEUED, at(seconds))


@pytest.fixture
def store(database_url: str) -> Iterator[SqlJobStore]:
    store = SqlJobStore.connect(database_url)
    store.clear()
    yield store
    store.close()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """A second engine on the store's database, for writing around the store."""
    engine = create_store_engine(database_url)
    yield engine
    engine.dispose()


# -- the JobStore contract ------------------------------------------------------------------


def test_add_get_and_list_in_submission_order(store: SqlJobStore) -> None:
    # Equal submission times, as the virtual clock gives: order is still submission order.
    for job_id in ("c", "a", "b"):
        store.add(queued(job_id), None)
    assert [job.job_id for job in store.list()] == ["c", "a", "b"]
    assert store.get("a") == queued("a")
    assert store.get("nope") is None
    store.update("a", QUEUED, status=CANCELLED, finished_at=at(1))
    assert [job.job_id for job in store.list(QUEUED)] == ["c", "b"]
    assert [job.job_id for job in store.list(CANCELLED)] == ["a"]


def every_field_set(job_id: str) -> StoredJob:
    """A record with no field at its default, so that a field the table drops shows."""
    plus_two = timezone(timedelta(hours=2))
    return StoredJob(
        job_id=job_id,
        status=FAILED,
        submitted_at=datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=plus_two),
        started_at=at(1.000001),
        finished_at=at(2.5),
        result={"nested": [1, 2.5, True, None, "é"], "empty": {}},
        error="ValueError: a: b",
        worker_id="worker-7",
        last_heartbeat=at(2),
        cancel_requested=True,
        retry_count=3,
        max_retries=5,
        retry_policy={"max_retries": 5, "initial_delay_ms": 1000.0, "non_retryable": ["X"]},
        next_attempt_at=at(9),
        redelivery_count=2,
        alerted=True,
        poisoned=True,
        fencing_token=4,
        owner="ann",
        trigger="schedule",
        options={"model": "opus", "tiers": [1, 2]},
        arguments={"plan": "01HXYZ", "big": 2**63 - 1, "past a double": 2**53 + 1,
                   "text": "𝄞 e\u0301 \u0000", "float": -0.0, "list": [[], {}, None]},
    )


def test_every_stored_job_field_round_trips(store: SqlJobStore) -> None:
    defaults = StoredJob("d", QUEUED, EPOCH)
    job = every_field_set("j")
    unset = [name for name in ALL_FIELDS
             if name != "job_id" and getattr(job, name) == getattr(defaults, name)]
    assert not unset, f"give these fields a non-default value in every_field_set: {unset}"
    store.add(job, None)
    stored = store.get("j")
    assert stored == job
    assert stored is not None
    # Aware UTC on every database, microseconds kept, whatever offset came in.
    assert stored.submitted_at.tzinfo is UTC
    assert stored.submitted_at == datetime(2026, 3, 1, 10, 0, 0, 123456, tzinfo=UTC)
    assert stored.started_at == at(1.000001)


def test_naive_timestamps_are_refused(store: SqlJobStore) -> None:
    with pytest.raises(StatementError, match="has no timezone") as caught:
        store.add(StoredJob("n", QUEUED, datetime(2026, 1, 1)), None)
    assert isinstance(caught.value.orig, ValueError)
    assert store.list() == []


def test_add_refuses_at_the_cap_and_keeps_nothing(store: SqlJobStore) -> None:
    store.add(queued("a"), 2)
    store.update("a", QUEUED, status=CANCELLED, finished_at=at(0))
    store.add(queued("b"), 2)  # the cap counts terminal records too (LC-009)
    with pytest.raises(CapacityExceeded, match="task cap of 2"):
        store.add(queued("c"), 2)
    assert [job.job_id for job in store.list()] == ["a", "b"]
    store.add(queued("c"), None)
    assert store.get("c") is not None


def test_claim_takes_the_oldest_eligible_queued_jobs(store: SqlJobStore) -> None:
    for job_id in ("a", "b", "c", "d"):
        store.add(queued(job_id), None)
    store.update("a", QUEUED, next_attempt_at=at(11))  # in backoff until second 11
    store.update("b", QUEUED, next_attempt_at=at(10))  # eligible exactly now
    claimed = store.claim("w1", 2, at(10))
    assert [job.job_id for job in claimed] == ["b", "c"]
    for job in claimed:
        assert (job.status, job.worker_id, job.started_at, job.last_heartbeat) == (
            RUNNING, "w1", at(10), at(10))
        assert store.get(job.job_id) == job
    assert [job.job_id for job in store.claim("w2", 5, at(10))] == ["d"]
    assert store.claim("w2", 5, at(10)) == []
    assert [job.job_id for job in store.claim("w2", 5, at(11))] == ["a"]


def test_claim_of_nothing(store: SqlJobStore) -> None:
    assert store.claim("w", 3, EPOCH) == []
    store.add(queued("a"), None)
    assert store.claim("w", 0, EPOCH) == []
    assert store.get("a") == queued("a")


def test_update_only_moves_a_job_still_in_the_expected_state(store: SqlJobStore) -> None:
    store.add(queued("a"), None)
    (claimed,) = store.claim("w", 1, EPOCH)
    token = {"fencing_token": claimed.fencing_token}
    cancelled = store.update("a", RUNNING, expected=token, status=CANCELLED,
                             finished_at=at(1))
    assert cancelled is not None and cancelled.status == CANCELLED
    # The worker's late completion is absorbed (LC-003).
    assert store.update("a", RUNNING, expected=token, status=SUCCEEDED, result=1,
                        finished_at=at(2)) is None
    assert store.get("a") == cancelled
    assert store.update("ghost", QUEUED, status=CANCELLED) is None


def test_update_to_identical_values_still_reports_the_record(store: SqlJobStore) -> None:
    # MariaDB counts changed rows unless told to count matched ones.
    store.add(queued("a"), None)
    assert store.update("a", QUEUED, status=QUEUED) == queued("a")


def test_update_refuses_what_is_not_a_changeable_field(store: SqlJobStore) -> None:
    store.add(queued("a"), None)
    with pytest.raises(TypeError, match=r"cannot change \['colour', 'submission_order'\]"):
        store.update("a", QUEUED, colour="red", submission_order=0)


def test_delete_terminal_removes_old_terminal_jobs_only(store: SqlJobStore) -> None:
    for job_id in ("done", "boundary", "young", "queued", "running", "never-started"):
        store.add(queued(job_id), None)
    store.update("done", QUEUED, status=SUCCEEDED, finished_at=at(5))
    store.update("boundary", QUEUED, status=FAILED, finished_at=at(10))
    store.update("young", QUEUED, status=SUCCEEDED, finished_at=at(10.000001))
    store.update("never-started", QUEUED, status=CANCELLED)  # no finished_at: submitted_at
    store.claim("w", 1, EPOCH)  # "queued" is claimed: it was added first of the three left
    assert store.delete_terminal(at(10)) == 3  # inclusive cutoff (LC-020)
    assert [(job.job_id, job.status) for job in store.list()] == [
        ("young", SUCCEEDED), ("queued", RUNNING), ("running", QUEUED)]


def test_counts(store: SqlJobStore) -> None:
    assert store.counts() == dict.fromkeys((QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED), 0)
    for job_id in "abcd":
        store.add(queued(job_id), None)
    store.claim("w", 2, EPOCH)
    store.update("a", RUNNING, expected={"fencing_token": 1}, status=SUCCEEDED,
                 finished_at=EPOCH)
    assert store.counts() == {QUEUED: 2, RUNNING: 1, SUCCEEDED: 1, FAILED: 0, CANCELLED: 0}


def test_clear_empties_the_store(store: SqlJobStore) -> None:
    store.add(queued("a"), None)
    store.clear()
    assert store.list() == []
    store.add(queued("b"), 1)  # the cap sees the empty store


# -- what a claim and a completion cost (issue 20) -----------------------------------------

# The statements a claim of one job and its owner's fenced completion send, by their first
# word: one each where UPDATE ... RETURNING exists (PostgreSQL's claim picks its rows in a
# WITH clause; SQLite's transactions begin with the store's BEGIN IMMEDIATE, in process);
# MariaDB locks and reads before its claim's UPDATE, and reads its completion back.
STATEMENTS_PER_JOB = {"sqlite": ["BEGIN", "UPDATE", "BEGIN", "UPDATE"],
                      "postgresql": ["WITH", "UPDATE"],
                      "mysql": ["SELECT", "UPDATE", "UPDATE", "SELECT"]}


@dataclasses.dataclass
class Statement:
    sql: str
    compiled: Any  # the compiled form the engine executed
    options: dict[str, Any]  # the connection's execution options


@pytest.fixture
def watched(database_url: str) -> Iterator[tuple[SqlJobStore, list[Statement]]]:
    """A store on an engine that records every statement it sends."""
    engine = create_store_engine(database_url)
    sent: list[Statement] = []

    def record(connection: Any, cursor: Any, sql: str, parameters: Any, context: Any,
               executemany: bool) -> None:
        sent.append(Statement(sql, context.compiled,
                              dict(connection.get_execution_options())))

    store = SqlJobStore(engine)
    store.clear()
    event.listen(engine, "before_cursor_execute", record)
    yield store, sent
    store.close()
    engine.dispose()


def claim_and_finish(store: SqlJobStore, job_id: str) -> None:
    (job,) = store.claim("w", 1, at(1))
    assert job.job_id == job_id
    assert ownership.finish(store, job_id, job.fencing_token, SUCCEEDED, at(2),
                            result=1) is not None


def test_a_claim_and_a_completion_are_a_statement_each_built_once(
        database_url: str, watched: tuple[SqlJobStore, list[Statement]]) -> None:
    store, sent = watched
    for job_id in ("a", "b"):
        store.add(queued(job_id), None)
    sent.clear()
    claim_and_finish(store, "a")  # compiles the statements
    first_job = [statement.compiled for statement in sent]
    sent.clear()
    claim_and_finish(store, "b")
    database = make_url(database_url).get_backend_name()
    assert [statement.sql.split()[0] for statement in sent] == STATEMENTS_PER_JOB[database]
    # The second job ran the first job's compiled statements: nothing was rebuilt.
    assert all(statement.compiled is compiled
               for statement, compiled in zip(sent, first_job, strict=True))
    if database == "postgresql":
        # Each statement is its own transaction: no BEGIN or COMMIT round trips.
        assert {statement.options.get("isolation_level") for statement in sent} == {
            "AUTOCOMMIT"}


def test_a_claim_takes_exactly_its_limit_in_submission_order(store: SqlJobStore) -> None:
    # The planner may run a `job_id IN (SELECT ... LIMIT n)` subquery once per row it
    # joins, taking more than n rows: the claim must not be written so.
    for n in range(6):
        store.add(queued(f"j{n}"), None)
    assert [job.job_id for job in store.claim("w", 2, EPOCH)] == ["j0", "j1"]
    assert [job.job_id for job in store.claim("w", 3, EPOCH)] == ["j2", "j3", "j4"]
    assert store.counts()[RUNNING] == 5


def test_the_store_gives_its_connections_back(database_url: str) -> None:
    engine = create_store_engine(database_url)
    try:
        store = SqlJobStore(engine)
        store.clear()
        store.add(queued("a"), None)
        claim_and_finish(store, "a")
        assert store.get("a") is not None
        # PostgreSQL keeps one autocommit connection for the next statement; no more.
        assert cast(QueuePool, engine.pool).checkedout() <= 1
        # A failing statement gives its connection back, broken or not.
        with pytest.raises(StatementError, match="has no timezone"):
            store.update("a", SUCCEEDED, finished_at=datetime(2026, 1, 1))
        assert cast(QueuePool, engine.pool).checkedout() == 0
        assert store.get("a") is not None  # and the store goes on
        store.close()  # on an engine it does not own, too
        assert cast(QueuePool, engine.pool).checkedout() == 0
    finally:
        engine.dispose()


# -- the TaskStore names of seed 004 -------------------------------------------------------


def test_save_creates_and_overwrites_in_place(store: SqlJobStore) -> None:
    store.save(queued("a"))
    store.save(queued("b"))
    overwrite = dataclasses.replace(queued("a"), status=SUCCEEDED, finished_at=at(3), result=7)
    store.save(overwrite)
    assert store.list() == [overwrite, queued("b")]


def test_delete_of_an_absent_id_is_a_no_op(store: SqlJobStore) -> None:
    store.add(queued("a"), None)
    store.delete("ghost")
    store.delete("a")
    store.delete("a")
    assert store.list() == []


def test_list_expired_is_strict_and_terminal_only(store: SqlJobStore) -> None:
    for job_id in ("old", "boundary", "running", "never-finished"):
        store.add(queued(job_id), None)
    store.update("old", QUEUED, status=SUCCEEDED, finished_at=at(1))
    store.update("boundary", QUEUED, status=FAILED, finished_at=at(2))
    store.update("running", QUEUED, status=RUNNING, finished_at=at(0))  # not terminal
    store.update("never-finished", QUEUED, status=CANCELLED)
    assert [job.job_id for job in store.list_expired(at(2))] == ["old"]


# -- the schema -----------------------------------------------------------------------------


def test_table_has_a_column_for_every_stored_job_field(store: SqlJobStore,
                                                       engine: Engine) -> None:
    # Fails when StoredJob gains a field that the model or the migrations lack.
    model_columns = set(JobRow.__table__.columns.keys())
    assert set(ALL_FIELDS) <= model_columns, set(ALL_FIELDS) - model_columns
    database_columns = {column["name"] for column in inspect(engine).get_columns("async_jobs")}
    assert set(ALL_FIELDS) <= database_columns, set(ALL_FIELDS) - database_columns


@pytest.mark.parametrize("statement", [
    "INSERT INTO async_jobs (job_id, submission_order, status, submitted_at)"
    " VALUES ('x', 999, 'paused', '2026-01-01 00:00:00')",
    "UPDATE async_jobs SET status = 'paused' WHERE job_id = 'a'",
])
def test_check_constraint_refuses_an_unknown_status(store: SqlJobStore, engine: Engine,
                                                    statement: str) -> None:
    store.add(queued("a"), None)
    with (pytest.raises((IntegrityError, OperationalError), match=r"(?i)check|constraint"),
          engine.begin() as connection):
        connection.execute(text(statement))
    assert store.list() == [queued("a")]


def test_an_error_and_a_result_past_a_text_columns_width_are_kept_whole(
        store: SqlJobStore) -> None:
    # LC-039: a TEXT column holds 65 535 bytes on MySQL and MariaDB, which refused such an
    # error before migration 0046 (strict mode; a server in non-strict mode cuts it).
    error, result = "ValueError: " + long_text(LONG_TEXT), long_text(LONG_TEXT)
    store.add(dataclasses.replace(every_field_set("a"), error=error), None)
    store.add(dataclasses.replace(every_field_set("b"), status=SUCCEEDED, error=None,
                                  result=result), None)
    assert store.get("a").error == error  # type: ignore[union-attr]
    assert store.get("b").result == result  # type: ignore[union-attr]


def test_a_row_from_a_newer_json_schema_is_refused(store: SqlJobStore, engine: Engine) -> None:
    store.add(queued("a"), None)
    with engine.begin() as connection:
        connection.execute(text("UPDATE async_jobs SET schema_version = 2"))
    with pytest.raises(UnknownSchemaVersion, match=r"schema version 2.*upgrade jobconform"):
        store.get("a")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migrations_build_exactly_the_models(kind: str) -> None:
    def compare(url: str) -> list[Any]:
        engine = create_store_engine(url)
        try:
            SqlJobStore(engine)  # migrates
            with engine.connect() as connection:
                return list(compare_metadata(MigrationContext.configure(connection),
                                             Base.metadata))
        finally:
            engine.dispose()

    if kind == "sqlite":
        assert compare("sqlite://") == []
        return
    with scratch_database(kind) as url:
        assert compare(url) == []


def test_migrations_downgrade_to_nothing_and_back() -> None:
    engine = create_store_engine("sqlite://")
    with engine.begin() as connection:
        config = migrations_on(connection)
        command.upgrade(config, "heads")
        command.downgrade(config, "base")
        assert inspect(connection).get_table_names() == ["alembic_version"]
        command.upgrade(config, "heads")
        assert "async_jobs" in inspect(connection).get_table_names()
    engine.dispose()


def test_server_options_in_a_postgresql_url_are_kept() -> None:
    # The store sets its own server options (UTC, READ COMMITTED); options the URL gives
    # (CI turns off waiting for the disk at commit) must come on top, not be dropped.
    with scratch_database("postgresql") as url:
        given = make_url(url).update_query_dict({"options": "-c synchronous_commit=off"})
        engine = create_store_engine(given.render_as_string(hide_password=False))
        try:
            with engine.connect() as connection:
                settings = [connection.execute(text(f"SHOW {name}")).scalar() for name in
                            ("synchronous_commit", "timezone", "default_transaction_isolation")]
        finally:
            engine.dispose()
    assert settings == ["off", "UTC", "read committed"]


def test_migrating_twice_changes_nothing(database_url: str) -> None:
    SqlJobStore.connect(database_url).close()
    store = SqlJobStore.connect(database_url)
    store.clear()
    store.add(queued("a"), None)
    SqlJobStore.connect(database_url).close()
    assert store.list() == [queued("a")]
    store.close()


# -- URLs and errors ----------------------------------------------------------------------


def test_a_malformed_url_says_how_to_write_one() -> None:
    with pytest.raises(DatabaseUrlError) as caught:
        SqlJobStore.connect("not a url")
    assert isinstance(caught.value, ValueError)
    assert "postgresql+psycopg://" in str(caught.value)
    assert SQL_URL_ENV in str(caught.value)


def test_an_unsupported_database_is_named_without_its_password() -> None:
    with pytest.raises(DatabaseUrlError) as caught:
        SqlJobStore.connect("oracle://scott:tiger@db.example/orcl")
    message = str(caught.value)
    assert "oracle://scott:***@db.example/orcl" in message
    assert "tiger" not in message
    assert "SQLite, PostgreSQL and MariaDB/MySQL" in message


@pytest.mark.parametrize("url", [
    "postgresql+psycopg://jobs:s3cret-pw@127.0.0.1:1/jobs",
    "mysql+pymysql://jobs:s3cret-pw@127.0.0.1:1/jobs",
])
def test_an_unreachable_server_is_named_without_its_password(url: str) -> None:
    with pytest.raises(DatabaseUnavailable) as caught:
        SqlJobStore.connect(url)
    message = str(caught.value)
    assert isinstance(caught.value, ConnectionError)
    assert "s3cret-pw" not in message
    assert "jobs:***@127.0.0.1:1/jobs" in message
    assert "Start the database server" in message
    assert SQL_URL_ENV in message


def test_the_sql_backend_reports_a_bad_url_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SQL_URL_ENV, "postgresql+psycopg://jobs:s3cret-pw@127.0.0.1:1/jobs")
    with pytest.raises(BackendLoadError) as caught:
        load_backend("sql")
    message = str(caught.value)
    assert "DatabaseUnavailable" in message
    assert "jobs:***@127.0.0.1:1/jobs" in message
    assert "s3cret-pw" not in message


# -- the sql backend -----------------------------------------------------------------------


def test_sql_is_an_installed_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SQL_URL_ENV, raising=False)
    assert "sql" in backend_names()
    backend = load_backend("sql")
    assert isinstance(backend, SqlBackend)
    # Every shipped backend's claims, the health report, submissions from threads at once
    # and the audit events, planned faults in its job store, and a restart (by signal too).
    assert (backend.name, backend.profile, backend.capabilities) == (
        "sql", "canonical", EVERY_SHIPPED_BACKEND | {
            "health-report", "concurrent-submit", "audit-events", "store-faults:redelivery",
            "store-faults:reaper", "restart", "stop-signal"})
    assert backend.url == "sqlite://"


SETTINGS = RuntimeSettings(max_concurrent=2, max_tasks=None)


@pytest.mark.parametrize("kind", DATABASES)
def test_every_runtime_starts_empty(kind: str) -> None:
    def two_runtimes(backend: SqlBackend) -> None:
        first = backend.open(SETTINGS, VirtualClock())
        first.submit(TaskScript())
        first.close()
        second = backend.open(SETTINGS, VirtualClock())
        assert second.list_jobs() == []
        second.close()

    if kind == "sqlite":
        two_runtimes(SqlBackend("sqlite://"))
        return
    with scratch_database(kind) as url:
        two_runtimes(SqlBackend(url))


def test_in_memory_runtimes_open_together_are_independent() -> None:
    backend = SqlBackend("sqlite://")
    first = backend.open(SETTINGS, VirtualClock())
    second = backend.open(SETTINGS, VirtualClock())
    first.submit(TaskScript())
    assert second.list_jobs() == []
    assert len(first.list_jobs()) == 1
    first.close()
    second.close()


def run_past_shutdown(store: SqlJobStore) -> tuple[StoredJob | None, int]:
    """A body ignoring cancellation outlives shutdown, then returns: what is recorded?"""
    clock = VirtualClock()
    runtime = SqlRuntime(SETTINGS, clock, store)
    script = TaskScript(honours_cancellation=False)
    job_id = runtime.submit(script)
    runtime.dispatch()
    clock.advance(2)
    runtime.shutdown()
    clock.advance(3)
    script.decide(Succeed("late"))
    runtime.settle()
    record, cancelled = store.get(job_id), runtime.cancelled
    runtime.close()
    return record, cancelled


def test_a_body_outliving_shutdown_reports_with_a_conditioned_write() -> None:
    record, cancelled = run_past_shutdown(SqlJobStore.connect("sqlite://"))
    assert record is not None
    assert (record.status, record.finished_at, record.result, cancelled) == (
        CANCELLED, at(2), None, 1)
    # The gallery's store drops the condition: the late write lands (caught as LC-003).
    record, cancelled = run_past_shutdown(UnconditionedWriteStore.connect("sqlite://"))
    assert record is not None
    assert (record.status, record.finished_at, cancelled) == (CANCELLED, at(5), 2)


def test_a_forked_child_makes_its_own_engine_and_leaves_the_parents_connections(
        tmp_path: Path) -> None:
    # The kit's Behave child is a fork: one that took the parent's cached engine would
    # talk over (and close) the parent's pooled connections.
    from jobconform.backends.sql.backend import _migrated_engine

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    parent_engine = _migrated_engine(url)
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report whether its engine is the parent's, and leave at once
        os.write(writing, b"same" if _migrated_engine(url) is parent_engine else b"own")
        os._exit(0)
    os.close(writing)
    answer = os.read(reading, 16)
    os.waitpid(pid, 0)
    os.close(reading)
    assert answer == b"own"
    assert _migrated_engine(url) is parent_engine  # the parent's cache is unchanged
