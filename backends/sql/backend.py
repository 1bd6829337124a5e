"""The `sql` backend: the step runtime over the SQL job store.

The database comes from the environment variable JOBCONFORM_SQL_URL (an in-memory SQLite
database by default), because the Behave suite runs the backend in a child process.
Every runtime starts on an empty store, quickly, because conformance opens hundreds of
them: with in-memory SQLite each gets a copy of a database migrated once per process;
otherwise one engine per database and process is migrated once and the jobs table is
emptied for each runtime. Point JOBCONFORM_SQL_URL at a scratch database: the backend
deletes its jobs.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Protocol, TypeVar, cast

from sqlalchemy import Engine

from jobconform.backends.admission.runtime import AdmissionService
from jobconform.backends.admission.sql import SqlAdmissionStore, open_sql_admission
from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.breaker.sql import SqlBreakerStore
from jobconform.backends.governor.runtime import StoreGovernorRuntime
from jobconform.backends.governor.sql import SqlGovernorStore
from jobconform.backends.idempotency.protocol import IdempotencyAudit, IdempotencyConfig
from jobconform.backends.idempotency.service import IdempotencyService
from jobconform.backends.idempotency.sql import SqlKeyStore
from jobconform.backends.loops.memory import StepLoopRuntime
from jobconform.backends.loops.protocol import LoopEvents, LoopsConfig
from jobconform.backends.loops.sql import SqlLoopStore
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.reminders.protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.reminders.sql import SqlReminderStore
from jobconform.backends.restart import (
    RESTART,
    STOP_SIGNAL,
    SignalPlan,
    SignalStop,
    shutdown_on_signal,
    stop_in_process,
)
from jobconform.backends.scheduling.protocol import (
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import StepSchedulingRuntime
from jobconform.backends.scheduling.sql import SqlScheduleStore
from jobconform.backends.shipped import (
    EVERY_SHIPPED_BACKEND,
    HEALTH_AND_AUDIT,
    JOB_STORE_FAULTS,
    ShippedBackend,
)
from jobconform.backends.sql.database import (
    SQL_URL_ENV,
    create_store_engine,
    is_in_memory_sqlite,
    migrate,
    parse_url,
)
from jobconform.backends.sql.store import SqlJobStore
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import RUNNING, StoredJob
from jobconform.backends.task_store.runtime import ThreadOffloadedTaskStore
from jobconform.backends.task_store.sql import SqlTaskStore
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.governor.oracle import GovernorSettings

DEFAULT_SQL_URL = "sqlite://"


class Clearable(Protocol):
    def clear(self) -> None:
        """Delete every row the store keeps, leaving its tables."""
        ...


ClearableT = TypeVar("ClearableT", bound=Clearable)


class SqlRuntime(StepRuntime):
    """The step runtime, with bodies that outlive a shutdown as a SQL worker's do.

    Shutdown moves running jobs to cancelled from the caller's side, but a worker cannot
    stop a body: it ends later and its worker reports the outcome with a write
    conditioned on the job still running, as it last saw it. The store must absorb that
    late write (LC-003), and the suites check that it does.
    """

    def __init__(self, settings: RuntimeSettings, clock: Clock, store: SqlJobStore,
                 bodies: Mapping[str, TaskScript] | None = None) -> None:
        super().__init__(settings, clock, store, bodies=bodies)
        self._outliving_bodies: dict[str, StoredJob] = {}  # job id -> the worker's view

    def _cancel_active(self, at: datetime) -> None:
        running = [job for job in self._store.list(RUNNING) if job.job_id in self._scripts]
        super()._cancel_active(at)
        # Shutdown (or a drain's end) requested each body's cancellation, as a worker's
        # token would.
        self._outliving_bodies.update(
            (job.job_id, replace(job, cancel_requested=True)) for job in running)

    def settle(self) -> None:
        super().settle()
        for job_id, seen in list(self._outliving_bodies.items()):
            script = self._scripts[job_id]
            if script.honours_cancellation or script.decided():  # the body ends now
                del self._outliving_bodies[job_id]
                self._finish_owned(seen)


class SqlLoopRuntime(StepLoopRuntime):
    """The step loop runtime over the SQL loop tables.

    A restart also drops the store object and reads everything back from the database
    through a new one, so what survives is exactly what was written.
    """

    def __init__(self, clock: Clock, config: LoopsConfig, engine: Engine,
                 owns_engine: bool, events: LoopEvents | None = None) -> None:
        super().__init__(clock, config, SqlLoopStore(engine), events=events)
        self._engine = engine
        self._owns_engine = owns_engine

    def restart(self) -> None:
        self._store = SqlLoopStore(self._engine)
        super().restart()

    def close(self) -> None:
        super().close()
        if self._owns_engine:
            self._engine.dispose()


def _migrated_engine(url: str) -> Engine:
    """One engine per database and process, migrated once: for a server or SQLite file
    the runtimes share it, for in-memory SQLite it is the template they copy.

    Keyed by the process too: a forked child (the kit's Behave child is one) inherits the
    parent's engine with its pooled connections, and a child that used or closed one of
    those would talk over the parent's socket (PostgreSQL then ended the parent's session
    under its next query). The child makes its own and never touches the parent's."""
    return _migrated_engine_of_process(url, os.getpid())


@functools.cache
def _migrated_engine_of_process(url: str, pid: int) -> Engine:
    """`_migrated_engine` for the process `pid` (only part of the cache key)."""
    engine = create_store_engine(url)
    migrate(engine)
    return engine


def _copy_of_migrated_in_memory_database(url: str) -> Engine:
    """A new in-memory database holding the migrated schema.

    Copying a migrated template with SQLite's backup API takes about a millisecond,
    against ten for running the migrations, and conformance opens hundreds of runtimes.
    """
    engine = create_store_engine(url)
    with _migrated_engine(url).connect() as template, engine.connect() as copy:
        template_database = cast(sqlite3.Connection, template.connection.driver_connection)
        template_database.backup(cast(sqlite3.Connection, copy.connection.driver_connection))
    return engine


class SqlBackend(ShippedBackend):
    """Entry point `sql`: SQLAlchemy 2 on SQLite (default), PostgreSQL or MariaDB.

    Args:
        url: the database; None reads JOBCONFORM_SQL_URL, else in-memory SQLite.

    Raises:
        DatabaseUrlError: the URL is malformed, unsupported, or its driver is missing.
        DatabaseUnavailable: the database server cannot be reached.
    """

    name = "sql"
    capabilities = (EVERY_SHIPPED_BACKEND | HEALTH_AND_AUDIT | JOB_STORE_FAULTS
                    | {RESTART, STOP_SIGNAL})
    store_type: type[SqlJobStore] = SqlJobStore  # the self-test gallery swaps in broken ones

    def __init__(self, url: str | None = None) -> None:
        self.url = url if url is not None else os.environ.get(SQL_URL_ENV, DEFAULT_SQL_URL)
        parse_url(self.url)  # a clear error for a malformed or unsupported URL, first
        self._in_memory = is_in_memory_sqlite(self.url)
        _migrated_engine(self.url)  # fail here, at load, when the server is unreachable

    def open(self, settings: RuntimeSettings, clock: Clock) -> SqlRuntime:
        return SqlRuntime(settings, clock, self.empty_store())

    def stop_by_signal(self, runtime: SqlRuntime, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript], plan: SignalPlan) -> SignalStop:
        """SIGTERM or SIGINT to the runtime's process (RS-004..RS-008): its handler is the
        runtime's shutdown, which in cancel mode ends every active job at once, so the
        process exits; a runtime still holding active work at the grace period's end is
        killed, as a restart stops it."""
        return stop_in_process(runtime, plan, shutdown_on_signal(runtime).install,
                               lambda: self.restart(runtime, settings, clock, bodies))

    @property
    def store_outlives_process(self) -> bool:
        """Whether a new process given the same URL finds the jobs: a database file or a
        server does; an in-memory database ends with its process, so a reference child
        serving this backend claims restart only when this is true."""
        return not self._in_memory

    def open_restarted(self, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript]) -> SqlRuntime:
        """A runtime in a new process over the database an earlier one left (the process
        protocol's restart, RS-001..RS-004): its tables as they are, not emptied."""
        if self._in_memory:
            raise ValueError("an in-memory database ends with its process: nothing is left"
                             " to open after a restart; give a database file or a server")
        store = self.store_type(_migrated_engine(self.url), migrate_schema=False)
        return SqlRuntime(settings, clock, store, bodies=bodies)

    def restart(self, runtime: SqlRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> SqlRuntime:
        """A new process over the same database (RS-001..RS-003): a new store object on
        the old one's engine (an in-memory database lives as long as its engine, so the
        new store takes it over), then the old runtime closed; it writes nothing more."""
        store = cast(SqlJobStore, runtime.store).reopen()
        runtime.close()
        return SqlRuntime(settings, clock, store, bodies=bodies)

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionService:
        return open_sql_admission(self.empty_admission_store(), clock, config)

    def empty_admission_store(self) -> SqlAdmissionStore:
        """Admission tables with no rows."""
        return self._empty(SqlAdmissionStore)

    def open_loops(self, clock: Clock, config: LoopsConfig,
                   events: LoopEvents | None = None) -> SqlLoopRuntime:
        return SqlLoopRuntime(clock, config, *self.empty_loop_engine(), events=events)

    def empty_loop_engine(self) -> tuple[Engine, bool]:
        """An engine on a database without loops, and whether the caller owns it."""
        if self._in_memory:
            return _copy_of_migrated_in_memory_database(self.url), True
        engine = _migrated_engine(self.url)
        SqlLoopStore(engine).clear()
        return engine, False

    def _empty(self, open_store: Callable[..., ClearableT]) -> ClearableT:
        """A store with no rows, one recipe for every store: `open_store` over a fresh
        copy of the migrated in-memory database (the store owns that engine), or over the
        one migrated engine of a file or server database, its tables cleared."""
        if self._in_memory:
            return open_store(_copy_of_migrated_in_memory_database(self.url), owns_engine=True)
        store = open_store(_migrated_engine(self.url))
        store.clear()
        return store

    def empty_store(self) -> SqlJobStore:
        """A store with no jobs: a fresh copy in memory, or the server's tables cleared."""
        return self._empty(functools.partial(self.store_type, migrate_schema=False))

    def open_idempotency(self, clock: Clock, config: IdempotencyConfig,
                         audit: IdempotencyAudit | None = None) -> IdempotencyService:
        return IdempotencyService(self.empty_key_store(), clock, config, audit)

    def empty_key_store(self) -> SqlKeyStore:
        """A key store with no keys."""
        return self._empty(functools.partial(SqlKeyStore, migrate_schema=False))

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> StoreBreakerRuntime:
        """A breaker on the database's breaker tables, emptied; its peers are further
        workers on the same database."""
        store = self.empty_breaker_store()
        return StoreBreakerRuntime(store, clock, settings, BreakerDeployment(), store.peer)

    def empty_breaker_store(self) -> SqlBreakerStore:
        return self._empty(SqlBreakerStore)

    def open_governor(self, clock: Clock, settings: GovernorSettings) -> StoreGovernorRuntime:
        """A governor on the database's governor tables, emptied."""
        return StoreGovernorRuntime(self.empty_governor_store(), clock, settings)

    def empty_governor_store(self) -> SqlGovernorStore:
        return self._empty(SqlGovernorStore)

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: DeliveryTarget) -> StepReminderRuntime:
        return StepReminderRuntime(self.empty_reminder_store(), clock, config, target)

    def empty_reminder_store(self) -> SqlReminderStore:
        """A reminder store with no reminders. A restart reopens it over the same database
        (`SqlReminderStore.reopen`)."""
        return self._empty(functools.partial(SqlReminderStore, migrate_schema=False))

    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: SchedulingTarget) -> StepSchedulingRuntime:
        return StepSchedulingRuntime(self.empty_schedule_store(), clock, config, target)

    def empty_schedule_store(self) -> SqlScheduleStore:
        """A schedule store with no schedules and autonomy on."""
        return self._empty(functools.partial(SqlScheduleStore, migrate_schema=False))

    def open_store(self, clock: Clock) -> ThreadOffloadedTaskStore:
        """The SQL task store behind coroutines whose statements run on worker threads,
        so an event loop using it never waits on the database (D-17)."""
        return ThreadOffloadedTaskStore(self.empty_task_store())

    def empty_task_store(self) -> SqlTaskStore:
        """A task store with no records."""
        return self._empty(functools.partial(SqlTaskStore, migrate_schema=False))
