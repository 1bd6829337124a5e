"""The `threaded+sql` backend: the threaded worker over the SQL job store.

The database comes from JOBCONFORM_SQL_URL (in-memory SQLite by default), exactly as for
the `sql` backend, and each runtime starts on an empty store the way that backend makes
one. Point the variable at a scratch database: the backend deletes its jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from jobconform.backends.admission.runtime import AdmissionStore
from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.breaker.threaded import PooledBreakerRuntime
from jobconform.backends.governor.runtime import StoreGovernorRuntime
from jobconform.backends.governor.threaded import PooledGovernorRuntime
from jobconform.backends.idempotency.service import KeyStore
from jobconform.backends.loops.protocol import LoopEvents, LoopsConfig
from jobconform.backends.loops.sql import SqlLoopStore
from jobconform.backends.loops.threaded import ThreadedLoopRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.reminders.store import ReminderStore
from jobconform.backends.restart import (
    RESTART,
    STOP_SIGNAL,
    SignalPlan,
    SignalStop,
    stop_in_process,
)
from jobconform.backends.scheduling.runtime import ScheduleStore
from jobconform.backends.self_running import SELF_RUNNING
from jobconform.backends.shipped import EVERY_SHIPPED_BACKEND
from jobconform.backends.sql import SqlBackend
from jobconform.backends.sql.store import SqlJobStore
from jobconform.backends.store import JobStore
from jobconform.backends.task_store.protocol import TaskStore
from jobconform.backends.threaded.backend import ThreadedBackend, waitable
from jobconform.backends.threaded.worker import ThreadedRuntime
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.governor.oracle import GovernorSettings


class ThreadedSqlBackend(ThreadedBackend):
    """Entry point `threaded+sql`: pool threads claim, beat and finish jobs in a database.

    Args:
        url: the database; None reads JOBCONFORM_SQL_URL, else in-memory SQLite.

    Raises:
        DatabaseUrlError, DatabaseUnavailable: as for the `sql` backend.
    """

    name = "threaded+sql"
    capabilities = EVERY_SHIPPED_BACKEND | {SELF_RUNNING, RESTART, STOP_SIGNAL}

    def __init__(self, url: str | None = None) -> None:
        self._sql = SqlBackend(url)

    def open_loops(self, clock: Clock, config: LoopsConfig,
                   events: LoopEvents | None = None) -> ThreadedLoopRuntime:
        """Loop threads over the SQL loop tables; a restart reads them back through a new
        store object on the same database; the run and loop events go to `events`
        (LP-019), as on the threaded backend."""
        engine, owned = self._sql.empty_loop_engine()
        return ThreadedLoopRuntime(waitable(clock), config, lambda: SqlLoopStore(engine),
                                   on_close=engine.dispose if owned else lambda: None,
                                   events=events)

    def stop_by_signal(self, runtime: ThreadedRuntime, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript], plan: SignalPlan) -> SignalStop:
        """SIGTERM or SIGINT to the worker's process (RS-004..RS-008): the worker installs
        its own handlers, as with `install_signal_handlers`, and shuts down on the signal
        (cancel ends every active job at once, so the process exits; drain lets its work
        run on); a worker still holding active work at the grace period's end is
        killed, as a restart stops it."""
        return stop_in_process(runtime, plan, runtime.take_stop_signals,
                               lambda: self.restart(runtime, settings, clock, bodies),
                               taken=runtime.wait_signal_stop)

    def restart(self, runtime: ThreadedRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> ThreadedRuntime:
        """A new worker process over the same database (RS-001..RS-003): the old worker
        halts (its threads end, it writes nothing more), its store object hands the
        database to a new one, and a new worker claims from it; a job submitted before the
        restart runs the body given for its id."""
        store = cast(SqlJobStore, runtime.store).reopen()
        runtime.halt()
        runtime.close()
        return self.worker_over(store, settings, clock,
                                bodies=lambda job: bodies.get(job.job_id))

    def new_store(self) -> JobStore:
        # The sql backend's own recipe: a fresh in-memory database, or one migrated engine
        # per server database with its jobs table emptied.
        return self._sql.empty_store()

    def new_key_store(self) -> KeyStore:
        return self._sql.empty_key_store()

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> PooledBreakerRuntime:
        store = self._sql.empty_breaker_store()
        return PooledBreakerRuntime(StoreBreakerRuntime(store, clock, settings,
                                                        BreakerDeployment(), store.peer))

    def open_governor(self, clock: Clock, settings: GovernorSettings) -> PooledGovernorRuntime:
        return PooledGovernorRuntime(StoreGovernorRuntime(self._sql.empty_governor_store(),
                                                          clock, settings))

    def new_reminder_store(self) -> ReminderStore:
        return self._sql.empty_reminder_store()

    def new_schedule_store(self) -> ScheduleStore:
        return self._sql.empty_schedule_store()

    def new_admission_store(self) -> AdmissionStore:
        return self._sql.empty_admission_store()

    def new_task_store(self) -> TaskStore:
        return self._sql.empty_task_store()
