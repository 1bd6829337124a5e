"""The restart gallery: runtimes that break a restart over the same store the ways issue 32
names.

`GALLERY` joins the self-test: every suite must catch each entry, naming the requirement
in `catches`. Each is the memory backend given a restart: `KeptMemoryBackend` keeps its
store object across the restart (the process's memory stands in for a database, so only
the bug differs from a correct restart), and each broken one loses what a restart must
keep.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import cast

from jobconform.backends import ownership
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.restart import (
    RESTART,
    STOP_SIGNAL,
    SignalPlan,
    SignalStop,
    StopSignalHandlers,
    shutdown_on_signal,
    stop_in_process,
)
from jobconform.backends.store import (
    CANCELLED,
    QUEUED,
    RUNNING,
    TERMINAL,
    InMemoryJobStore,
    StoredJob,
)
from jobconform.conformance.gallery import bug_text, register


class KeptMemoryBackend(MemoryBackend):
    """The memory backend with a restart that keeps its store object: a correct restart,
    which the broken ones below change in one way each."""

    capabilities = MemoryBackend.capabilities | {RESTART}

    def restart(self, runtime: MemoryRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> MemoryRuntime:
        store = self.reopened(cast(InMemoryJobStore, runtime.store))
        return MemoryRuntime(settings, clock, store, bodies=bodies)

    def reopened(self, store: InMemoryJobStore) -> InMemoryJobStore:
        """The store the new process finds."""
        return store


class RecordsLostOnRestart(KeptMemoryBackend):
    """Each runtime keeps its jobs in a dict of its own: a restarted runtime starts with
    no records at all."""

    def reopened(self, store: InMemoryJobStore) -> InMemoryJobStore:
        return InMemoryJobStore()


class StackedBacklogStore(InMemoryJobStore):
    """A store whose claims take the jobs that were queued when it was opened from a stack
    (the newest first), before any job queued since."""

    def __init__(self, kept: InMemoryJobStore) -> None:
        super().__init__()
        self._jobs, self._lock = kept._jobs, kept._lock
        self._stacked = [job_id for job_id, job in self._jobs.items() if job.status == QUEUED]

    def claim(self, worker_id: str, limit: int, now: datetime) -> builtins.list[StoredJob]:
        self._faults.before_write()
        with self._lock:
            stacked = [self._jobs[job_id] for job_id in reversed(self._stacked)
                       if job_id in self._jobs]
            rest = [job for job in self._jobs.values() if job.job_id not in self._stacked]
            eligible = [job for job in (*stacked, *rest) if job.status == QUEUED
                        and (job.next_attempt_at is None or job.next_attempt_at <= now)]
            claimed = [replace(job, status=RUNNING, started_at=now, worker_id=worker_id,
                               last_heartbeat=now, fencing_token=job.fencing_token + 1)
                       for job in eligible[:max(limit, 0)]]
            for job in claimed:
                self._jobs[job.job_id] = job
            return claimed


class QueueOrderLostOnRestart(KeptMemoryBackend):
    """A restarted runtime rebuilds its ready queue by pushing the stored queued jobs on a
    stack: of the jobs queued before the restart, the newest starts first."""

    def reopened(self, store: InMemoryJobStore) -> InMemoryJobStore:
        return StackedBacklogStore(store)


class RequeuedAtStartup(KeptMemoryBackend):
    """A restarted runtime runs a lease pass with no lease as it starts: every job it finds
    running is taken for lost at once and re-queued, though its lease has not lapsed (a
    worker elsewhere may still be running it)."""

    def restart(self, runtime: MemoryRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> MemoryRuntime:
        restarted = super().restart(runtime, settings, clock, bodies)
        restarted.expire_leases(0)
        return restarted


class SignalledMemoryBackend(KeptMemoryBackend):
    """The kept memory backend with a stop by signal (RS-004..RS-008): its handlers for
    SIGTERM and SIGINT run the runtime's shutdown and put the host's back, as in the sql
    backend."""

    capabilities = KeptMemoryBackend.capabilities | {STOP_SIGNAL}

    def stop_by_signal(self, runtime: MemoryRuntime, settings: RuntimeSettings,
                       clock: Clock, bodies: Mapping[str, TaskScript],
                       plan: SignalPlan) -> SignalStop:
        return stop_in_process(runtime, plan, self.handlers(runtime).install,
                               lambda: self.restart(runtime, settings, clock, bodies))

    def handlers(self, runtime: MemoryRuntime) -> StopSignalHandlers:
        """The handlers the runtime installs for the stop signals."""
        return shutdown_on_signal(runtime)


class SigtermIgnored(SignalledMemoryBackend):
    """The runtime installs no handler for SIGTERM (or one that only logs): it keeps
    running its work through the grace period and is killed, so jobs it was running are
    left running in the store and queued ones are never cancelled."""

    def handlers(self, runtime: MemoryRuntime) -> StopSignalHandlers:
        return shutdown_on_signal(runtime, handled=("SIGINT",))


class SigintIgnored(SignalledMemoryBackend):
    """The runtime installs a handler for SIGTERM only: Ctrl-C (SIGINT) reaches the
    host's handler, its work runs on through the grace period and it is killed."""

    def handlers(self, runtime: MemoryRuntime) -> StopSignalHandlers:
        return shutdown_on_signal(runtime, handled=("SIGTERM",))


class HandlersLeftInstalled(SignalledMemoryBackend):
    """The runtime shuts down on the signal but never puts the host's handlers back: a
    program that embeds it loses its own Ctrl-C and SIGTERM handling after it stops."""

    def handlers(self, runtime: MemoryRuntime) -> StopSignalHandlers:
        return StopSignalHandlers(lambda name: runtime.shutdown())


class KilledAtTheSignal(SignalledMemoryBackend):
    """Under drain its handler kills the running bodies at the signal and then waits
    out the grace period for them: a body that would have ended in the grace period
    never ends (its job stays running in the store for a lease pass), so the process
    still holds work at the grace period's end and is killed. With nothing ending in
    the grace period it looks like a correct drain; with shutdown_mode cancel it shuts
    down as it should."""

    def stop_by_signal(self, runtime: MemoryRuntime, settings: RuntimeSettings,
                       clock: Clock, bodies: Mapping[str, TaskScript],
                       plan: SignalPlan) -> SignalStop:
        if settings.shutdown_mode != "drain":
            return super().stop_by_signal(runtime, settings, clock, bodies, plan)
        health = runtime.health()
        restarted = self.restart(runtime, settings, clock, bodies)  # the bodies die here
        for step in plan.steps:
            step()
        return SignalStop(restarted, escalated=health.queued + health.running > 0)


class SubmittedHereRuntime(MemoryRuntime):
    """A runtime whose shutdown ends its running work and the queued jobs submitted to it,
    and spares the ones it found queued in the store when it opened."""

    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 store: InMemoryJobStore | None = None,
                 bodies: Mapping[str, TaskScript] | None = None) -> None:
        super().__init__(settings, clock, store, bodies)
        self._found_at_open = frozenset(bodies or {})

    def _cancel_active(self, at: datetime) -> None:
        for job in self._store.list():
            spared = job.status == QUEUED and job.job_id in self._found_at_open
            if (job.status not in TERMINAL and not spared
                    and ownership.stop_as_seen(self._store, job, at) is not None):
                self._count_outcome(CANCELLED)


class ShutdownSparesEarlierQueue(SignalledMemoryBackend):
    """Its shutdown cancels only what this runtime instance submitted or runs: after a
    restart, jobs queued before it stay queued through SIGTERM, so the runtime still
    holds work at the grace period's end and is killed."""

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return SubmittedHereRuntime(settings, clock)

    def restart(self, runtime: MemoryRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> MemoryRuntime:
        store = self.reopened(cast(InMemoryJobStore, runtime.store))
        return SubmittedHereRuntime(settings, clock, store, bodies=bodies)


class CutShortAtTheSignalRuntime(MemoryRuntime):
    """A runtime whose signal handler shuts it down as in cancel mode, whatever its
    shutdown_mode; its shutdown method keeps the mode (LC-028)."""

    def shut_down_at_once(self) -> None:
        self._cancel_active(self._now())
        self._shut_down = True


class DrainCutShort(SignalledMemoryBackend):
    """Its stop by signal has one mode, whatever the profile says: SIGTERM cancels every
    active job at once, so under drain the running work is cut short at the signal
    instead of running on until the grace period is over. A shutdown called in the
    program drains as it should: until issue 33 the whole runtime was opened in cancel
    mode, which broke LC-028's drain too, a second cause in every area's run."""

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return CutShortAtTheSignalRuntime(settings, clock)

    def restart(self, runtime: MemoryRuntime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> MemoryRuntime:
        store = self.reopened(cast(InMemoryJobStore, runtime.store))
        return CutShortAtTheSignalRuntime(settings, clock, store, bodies=bodies)

    def handlers(self, runtime: MemoryRuntime) -> StopSignalHandlers:
        def on_signal(name: str) -> None:
            handlers.restore()
            cast(CutShortAtTheSignalRuntime, runtime).shut_down_at_once()

        handlers = StopSignalHandlers(on_signal)
        return handlers


GALLERY = (
    register(__name__, "restart_records_lost", RecordsLostOnRestart,
             bug_text(RecordsLostOnRestart), "RS-001",
             "seed 004 §1.1: a task store outlives the process (persistence across process"
             " restarts)"),
    register(__name__, "restart_newest_first", QueueOrderLostOnRestart,
             bug_text(QueueOrderLostOnRestart), "RS-002",
             "seed 004 §1.1 and seed 000's polling loop: queued work is claimed in its order"),
    register(__name__, "restart_requeues_running_at_once", RequeuedAtStartup,
             bug_text(RequeuedAtStartup), "RS-003",
             "seed 002 §10.13: work comes back when its lease lapses, not before"),
    register(__name__, "stop_signal_ignored", SigtermIgnored, bug_text(SigtermIgnored),
             "RS-004",
             "seed 002 §10.4: a stop asks politely first and kills only after the grace"
             " period"),
    register(__name__, "stop_signal_spares_earlier_queue", ShutdownSparesEarlierQueue,
             bug_text(ShutdownSparesEarlierQueue), "RS-004",
             "seed 004 AsyncTaskManager.shutdown and seed 002 §10.4: the stop ends every"
             " active job in the store, whichever process submitted it"),
    replace(register(__name__, "stop_signal_drain_cut_short", DrainCutShort,
                     bug_text(DrainCutShort), "RS-005",
                     "seed 000 Graceful Shutdown and seed 002 §10.4: a drain lets work run"
                     " on until the grace period ends"), profile="draining-worker"),
    replace(register(__name__, "stop_signal_kills_at_once", KilledAtTheSignal,
                     bug_text(KilledAtTheSignal), "RS-006",
                     "seed 002 §10.4 and seed 000 Graceful Shutdown: bodies that end within"
                     " the grace period end normally; only what is left at its end is"
                     " killed"), profile="draining-worker"),
    register(__name__, "stop_signal_sigint_ignored", SigintIgnored, bug_text(SigintIgnored),
             "RS-007", "seed 000 Startup: handlers for SIGINT and SIGTERM, a graceful"
             " shutdown on either"),
    register(__name__, "stop_signal_handlers_left", HandlersLeftInstalled,
             bug_text(HandlersLeftInstalled), "RS-008",
             "seed 000 Graceful Shutdown: the signal handlers are restored"),
)
