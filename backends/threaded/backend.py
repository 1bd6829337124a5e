"""The `threaded` backend: the threaded worker over the in-memory job store.

The conformance harness drives it with a virtual clock. The worker polls only at dispatch
points (`poll_interval=None`), because the oracle starts jobs only there; its pool has as
many threads as the check's `max_concurrent`. Its polls do not beat for the running jobs:
heartbeats are the bodies' own (`heartbeat(job_id)`), so a job is stuck, or its lease
expires, when its body falls silent, as the spec and the oracle have it. The environment's
JOBCONFORM_ASYNC_* variables configure real deployments, not conformance runs, so that a
run depends on its seed alone.

Opened self-running (`open_self_running`, SR-001..SR-005), the same worker polls every poll
interval on the virtual clock by itself: each poll fails the jobs silent past the job
timeout and claims queued work, and a lease pass runs every poll interval too; its reaper
runs from the opening, sweeping every sweep interval.
"""

from __future__ import annotations

from collections.abc import Callable

from jobconform.backends.admission.memory import InMemoryAdmissionStore
from jobconform.backends.admission.runtime import AdmissionStore
from jobconform.backends.admission.threaded import ThreadedAdmissionRuntime
from jobconform.backends.breaker.memory import InMemoryBreakerStore
from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.breaker.threaded import PooledBreakerRuntime
from jobconform.backends.governor.runtime import InMemoryGovernorStore, StoreGovernorRuntime
from jobconform.backends.governor.threaded import PooledGovernorRuntime
from jobconform.backends.idempotency.memory import MemoryKeyStore
from jobconform.backends.idempotency.protocol import IdempotencyAudit, IdempotencyConfig
from jobconform.backends.idempotency.service import IdempotencyService, KeyStore
from jobconform.backends.idempotency.threaded import RequestThreadIdempotency
from jobconform.backends.loops.memory import InMemoryLoopStore
from jobconform.backends.loops.protocol import LoopEvents, LoopsConfig
from jobconform.backends.loops.threaded import ThreadedLoopRuntime
from jobconform.backends.protocol import REAPER, Clock, RuntimeSettings, TaskScript
from jobconform.backends.reminders.protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.store import InMemoryReminderStore, ReminderStore
from jobconform.backends.reminders.threaded import ThreadedReminderRuntime
from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import (
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import ScheduleStore
from jobconform.backends.scheduling.threaded import ThreadedSchedulingRuntime
from jobconform.backends.self_running import SELF_RUNNING, Clockwork
from jobconform.backends.shipped import EVERY_SHIPPED_BACKEND, HEALTH_AND_AUDIT, ShippedBackend
from jobconform.backends.store import InMemoryJobStore, JobStore, StoredJob
from jobconform.backends.task_store.memory import InMemoryTaskStore
from jobconform.backends.task_store.protocol import TaskStore
from jobconform.backends.task_store.threaded import RequestThreadTaskStore
from jobconform.backends.threaded.clock import WaitableClock
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.worker import ThreadedRuntime
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.governor.oracle import GovernorSettings


def waitable(clock: Clock) -> WaitableClock:
    if not isinstance(clock, WaitableClock):
        raise TypeError(f"the threaded backend sleeps on its clock; {type(clock).__name__}"
                        " has no wait_until(condition, deadline)")
    return clock


def conformance_config(settings: RuntimeSettings) -> WorkerConfig:
    """The worker configuration for one conformance check."""
    return WorkerConfig(enabled=True, max_workers=settings.max_concurrent, poll_interval=None,
                        poll_beats_jobs=False)


def _whole_seconds(seconds: float, name: str) -> int:
    if not float(seconds).is_integer():
        raise ValueError(f"the threaded worker counts {name} in whole seconds, not {seconds}")
    return int(seconds)


def self_running_config(settings: RuntimeSettings, clockwork: Clockwork) -> WorkerConfig:
    """The worker configuration of a self-running check (SR-001..SR-005): it polls every
    poll interval, and each poll fails the jobs silent past the job timeout; its lease
    passes run every poll interval too. Heartbeats stay the bodies' own, as in
    `conformance_config`, so a job falls silent when its body does."""
    return WorkerConfig(enabled=True, max_workers=settings.max_concurrent,
                        poll_interval=clockwork.poll_interval_seconds, poll_beats_jobs=False,
                        job_timeout=_whole_seconds(clockwork.job_timeout_seconds,
                                                   "job_timeout_seconds"),
                        lease_seconds=_whole_seconds(clockwork.lease_seconds, "lease_seconds"),
                        recovery_interval=clockwork.poll_interval_seconds)


# Why the threaded job runtime does not claim store-faults:redelivery or :reaper (RD-007,
# RP-008): its poll thread runs the reaper's sweeps and its own recovery lease passes, and
# its pool threads write outcomes and heartbeats, all beside the caller's command, so the
# write a planned fault strikes would depend on the threads' timing, not on the plan.
NO_JOB_STORE_FAULTS_NOTE = (
    "Store faults in lease passes and sweeps (store-faults:redelivery, store-faults:reaper)"
    " are not claimed: the poll and pool threads write to the job store beside the"
    " command, so the write a fault strikes would depend on timing; RD-007 and RP-008"
    " are reported not claimed.")


class ThreadedBackend(ShippedBackend):
    """Entry point `threaded`: jobs really run in pool threads, up to max_concurrent; each
    admitted execution's body runs in a thread of its own."""

    report_notes = (NO_JOB_STORE_FAULTS_NOTE,)

    name = "threaded"
    capabilities = EVERY_SHIPPED_BACKEND | HEALTH_AND_AUDIT | {SELF_RUNNING}

    def open_loops(self, clock: Clock, config: LoopsConfig,
                   events: LoopEvents | None = None) -> ThreadedLoopRuntime:
        """Loops whose runs execute on threads of their own, over an in-memory store that
        outlives a restart of the runtime (the process's memory stands in for a disk)."""
        store = InMemoryLoopStore()
        return ThreadedLoopRuntime(waitable(clock), config, lambda: store, events=events)

    def open(self, settings: RuntimeSettings, clock: Clock) -> ThreadedRuntime:
        return self.worker_over(self.new_store(), settings, clock)

    def worker_over(self, store: JobStore, settings: RuntimeSettings, clock: Clock,
                    bodies: Callable[[StoredJob], TaskScript | None] | None = None,
                    runtime: type[ThreadedRuntime] = ThreadedRuntime) -> ThreadedRuntime:
        """A worker in the commanded mode over `store`; `bodies` as ThreadedRuntime's;
        `runtime` the worker's class (a subclass of it: the self-test's broken workers,
        which take every setting the shipped one does)."""
        return runtime(store, clock, conformance_config(settings),
                               max_tasks=settings.max_tasks, bodies=bodies,
                               reaper_ttl_seconds=settings.reaper_ttl_seconds,
                               reaper_sweep_interval_ms=settings.reaper_sweep_interval_ms,
                               max_redelivery=settings.max_redelivery,
                               cancel_interrupts=settings.cancel_interrupts,
                               shutdown_mode=settings.shutdown_mode,
                               drain_timeout_seconds=settings.drain_timeout_seconds,
                               modules=settings.modules, page_size=settings.page_size,
                               queued_execution=settings.queued_execution)

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> ThreadedRuntime:
        """The same worker, polling on its clock by itself (SR-001..SR-004); its poll
        thread runs the reaper's sweeps from the opening, with the settings' TTL and sweep
        interval and no start_reaper call (SR-005)."""
        runtime = ThreadedRuntime(self.new_store(), waitable(clock),
                                  self_running_config(settings, clockwork),
                                  max_tasks=settings.max_tasks,
                                  reaper_ttl_seconds=settings.reaper_ttl_seconds,
                                  reaper_sweep_interval_ms=settings.reaper_sweep_interval_ms,
                                  max_redelivery=settings.max_redelivery,
                                  page_size=settings.page_size)
        if REAPER in self.capabilities:
            runtime.start_reaper()
        return runtime

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> ThreadedAdmissionRuntime:
        return ThreadedAdmissionRuntime(self.new_admission_store(), clock, config)

    def new_store(self) -> JobStore:
        """An empty store for one runtime."""
        return InMemoryJobStore()

    def open_idempotency(self, clock: Clock, config: IdempotencyConfig,
                         audit: IdempotencyAudit | None = None) -> RequestThreadIdempotency:
        return RequestThreadIdempotency(
            IdempotencyService(self.new_key_store(), clock, config, audit))

    def new_key_store(self) -> KeyStore:
        """An empty key store for one runtime."""
        return MemoryKeyStore()

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> PooledBreakerRuntime:
        return PooledBreakerRuntime(StoreBreakerRuntime(InMemoryBreakerStore(), clock,
                                                        settings, BreakerDeployment()))

    def open_governor(self, clock: Clock, settings: GovernorSettings) -> PooledGovernorRuntime:
        return PooledGovernorRuntime(StoreGovernorRuntime(InMemoryGovernorStore(), clock,
                                                          settings))

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: DeliveryTarget) -> ThreadedReminderRuntime:
        return ThreadedReminderRuntime(self.new_reminder_store(), clock, config, target)

    def new_reminder_store(self) -> ReminderStore:
        """An empty reminder store for one runtime."""
        return InMemoryReminderStore()

    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: SchedulingTarget) -> ThreadedSchedulingRuntime:
        return ThreadedSchedulingRuntime(self.new_schedule_store(), clock, config, target)

    def new_schedule_store(self) -> ScheduleStore:
        """An empty schedule store for one scheduler (and its peers)."""
        return InMemoryScheduleStore()

    def new_admission_store(self) -> AdmissionStore:
        """An empty admission store for one admission runtime."""
        return InMemoryAdmissionStore()

    def open_store(self, clock: Clock) -> RequestThreadTaskStore:
        """A sync task store whose calls are served on request threads."""
        return RequestThreadTaskStore(self.new_task_store())

    def new_task_store(self) -> TaskStore:
        """An empty task store for one check."""
        return InMemoryTaskStore()
