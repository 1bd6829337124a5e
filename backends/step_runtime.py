"""The step runtime: a deterministic, single-threaded job runtime over any job store.

Worker slots are counted, not threads: `dispatch` claims queued jobs into free slots
and `settle` lets every body that can end now end. Each job this runtime claims is owned by
the delivery its claim started, named by the claim's fencing token; only the owner's code
path (`_finish_owned`) moves a running job to a terminal state, so a cancel of a running job
only records the request (LC-013). Every owner write is conditioned on the job still running
under the owner's token, so a late outcome, or one from a delivery that was rescued and
claimed again, is absorbed (LC-003, RD-006). The rules are `jobconform.backends.ownership`.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta

from jobconform.backends import ownership
from jobconform.backends.faults import StoreWriteFailed
from jobconform.backends.protocol import (
    WORKER_RUNNING,
    WORKER_STOPPED,
    WORKER_STOPPING,
    Clock,
    RuntimeSettings,
    RuntimeShutDown,
    TaskScript,
)
from jobconform.backends.reaper import OperatorAlerts
from jobconform.backends.runtime_health import HealthSnapshot
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    FaultableJobStore,
    JobStore,
    StoredJob,
)
from jobconform.backends.store_runtime import IMMUTABLE_VALUES, StoreRuntime
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.faults import StoreFault
from jobconform.reference.lifecycle import JsonValue

# How often a lease pass tries one job's step when a store write fails (RD-007).
WRITE_ATTEMPTS = 2


class StepRuntime(StoreRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock, store: JobStore,
                 worker_id: str | None = None,
                 bodies: Mapping[str, TaskScript] | None = None) -> None:
        """`bodies`: the body of each job already in `store`, by id, for a runtime opened
        over a store another process filled (a restart, RS-002): a job it claims runs the
        body given for it."""
        self._settings = settings
        self._clock = clock
        self._store = store
        self._page_size = settings.page_size
        # Unique per runtime, as seed 000's worker makes one at startup (LC-029).
        self._worker_id = worker_id or f"worker-{uuid.uuid4().hex[:8]}"
        self._scripts: dict[str, TaskScript] = dict(bodies or {})
        # Jobs this runtime claimed, each with its claim's fencing token: the token every
        # owner write carries. An entry goes when the write is refused or the job moves on.
        self._owned: dict[str, int] = {}
        self._superseded: dict[str, int] = {}
        self._shut_down = False
        # When a drain-mode shutdown cancels what is still active (LC-028).
        self._drain_deadline: datetime | None = None
        # Jobs whose running body a cancel interrupted (LC-026): they end at once.
        self._interrupted: set[str] = set()
        self._reaper = self.reaper_type(store, settings.reaper_ttl_seconds,
                                        settings.reaper_sweep_interval_ms)
        self._alerts = OperatorAlerts()

    # -- submission and dispatch -------------------------------------------------------

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        if self._shut_down:
            raise RuntimeShutDown("the runtime is shut down; open a new one to submit")
        job = self._new_record(self._settings.modules, retry, module_id, arguments, owner,
                               trigger, options)
        return self._accept(job, script, self._settings.queued_execution,
                            self._settings.max_tasks, self._worker_id)

    def dispatch(self) -> None:
        free = self._settings.max_concurrent - self._store.counts()[RUNNING]
        if free > 0:
            for job in self._store.claim(self._worker_id, free, self._now()):
                self._owned[job.job_id] = job.fencing_token
                self._record_heartbeat(job.last_heartbeat)
        self.settle()

    def settle(self) -> None:
        self._end_drain_if_due()
        for job in self._store.list(RUNNING):
            if job.job_id in self._owned:
                # A claim made outside `dispatch` still beats (ST-005).
                self._record_heartbeat(job.last_heartbeat)
            if job.job_id in self._scripts and job.job_id in self._owned:
                self._finish_owned(job)
        # The reaper's sweeps whose boundaries the clock has reached run now (RP-002).
        self._reaper.run_due(self._now())

    def _finish_owned(self, job: StoredJob) -> None:
        """The owning worker's step: end the body if it can end now."""
        script = self._scripts[job.job_id]
        if job.cancel_requested and (script.honours_cancellation or script.decided()
                                     or job.job_id in self._interrupted):
            self._end(job, CANCELLED)
            return
        if not script.decided():
            return
        try:
            result = script.run(job.arguments, self._options_for_body(job))
        except Exception as error:
            if not self._retry(job, error):
                self._end(job, FAILED, error=self._error_message(error))
        else:
            self._end(job, SUCCEEDED, result=result)

    def _retry(self, job: StoredJob, error: Exception) -> bool:
        """Send a failed attempt back to the queue if its policy allows (RT-003..RT-005)."""
        delay = self._retry_delay_ms(job, error)
        if delay is None:
            return False
        token = self._owned.pop(job.job_id, None)
        requeued = None if token is None else ownership.requeue_for_retry(
            self._store, job, token, self._now() + timedelta(milliseconds=delay))
        if requeued is not None:
            self._scripts[job.job_id].next_attempt()
        return True

    def _options_for_body(self, job: StoredJob) -> JsonValue:
        """The job's execution options, as the body is handed them (LC-035): a copy, so
        a body cannot change the record."""
        return copy.deepcopy(job.options)

    def _end(self, job: StoredJob, status: str, result: JsonValue = None,
             error: str | None = None) -> None:
        """The owner's terminal write, under its claim's token."""
        token = self._owned.pop(job.job_id, None)
        if token is None:
            return  # not this runtime's delivery: it has nothing to record
        ended = ownership.finish(self._store, job.job_id, token, status, self._now(),
                                 result, error)
        if ended is not None:  # else the job moved meanwhile: a late outcome is absorbed
            self._count_outcome(status)

    # -- heartbeats and stuck jobs (ST-001..ST-004) ----------------------------------------

    def heartbeat(self, job_id: str) -> None:
        """The job's body reports progress: a write of the delivery this runtime owns, so
        only a running job's heartbeat counts, and never a superseded delivery's."""
        token = self._owned.get(job_id)
        if token is None:
            return
        beaten = ownership.heartbeat(self._store, job_id, token, self._now())
        if beaten is None:
            del self._owned[job_id]  # rescued or claimed again: no longer this runtime's
        else:
            self._record_heartbeat(beaten.last_heartbeat)

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        """Fail every running job silent for more than the timeout; return how many."""
        cutoff = ownership.silence_cutoff(self._now(), job_timeout_seconds)
        failed = 0
        for job in self._store.list(RUNNING):
            if self._is_stuck(job, cutoff) and ownership.fail_stuck(self._store, job,
                                                                    self._now()):
                self._owned.pop(job.job_id, None)
                self._count_outcome(FAILED)
                failed += 1
        return failed

    @staticmethod
    def _is_stuck(job: StoredJob, cutoff: datetime) -> bool:
        """Silent since strictly before the cutoff (ST-002, ST-003)."""
        return ownership.is_silent(job, cutoff)

    # -- re-delivery and poison parking (RD-001..RD-005) ----------------------------------

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        """Re-queue, or at the cap park, every running job silent past the lease.

        A store write that fails changes nothing: the job's step is taken again at once
        from the record as it now stands, so a park whose alert was marked is not alerted
        twice (RD-007). A job whose write fails twice is left to the next pass.
        """
        cutoff = ownership.silence_cutoff(self._now(), lease_seconds)
        requeued = parked = 0
        for job in self._store.list(RUNNING):
            if not self._past_lease(job, cutoff):
                continue
            for _attempt in range(WRITE_ATTEMPTS):
                try:
                    if ownership.below_cap(job, self._redelivery_cap()):
                        requeued += int(self._redeliver(job))
                    else:
                        parked += int(self._park(job))
                    break
                except StoreWriteFailed:
                    reread = self._store.get(job.job_id)
                    if reread is None or reread.status != RUNNING or not self._past_lease(
                            reread, cutoff):
                        break
                    job = reread
        return {"requeued": requeued, "parked": parked}

    @staticmethod
    def _past_lease(job: StoredJob, cutoff: datetime) -> bool:
        """Silent since strictly before the cutoff (RD-005).

        The same reading as stuck detection's `_is_stuck`, but a rule of its own: a
        runtime (a gallery entry) that gets stuck detection wrong does not get the lease
        pass wrong with it, so one bug shows under one requirement (issue 33).
        """
        return ownership.is_silent(job, cutoff)

    def _redelivery_cap(self) -> float:
        return self._settings.max_redelivery

    def _redeliver(self, job: StoredJob) -> bool:
        """Back to the queue under the same id, one more re-delivery counted (RD-001)."""
        if not self._requeue_lapsed(job):
            return False
        self._owned.pop(job.job_id, None)
        script = self._scripts.get(job.job_id)
        if script is not None:
            script.next_attempt()  # the next delivery waits for its own outcome
        return True

    def _park(self, job: StoredJob) -> bool:
        """Alert the operator first (once per id), then fail the job as poison (RD-003)."""
        if not self._park_lapsed(job):
            return False
        self._owned.pop(job.job_id, None)
        return True

    # -- store faults (RD-007, RP-008) -----------------------------------------------------

    def inject_store_fault(self, fault: StoreFault | None) -> None:
        """The optional capability of `jobconform.backends.faults`: the job stores we ship
        take it (`FaultableJobStore`)."""
        self._faultable_store().inject_fault(fault)

    def store_fault_struck(self) -> bool:
        return self._faultable_store().fault_struck()

    def _faultable_store(self) -> FaultableJobStore:
        if not isinstance(self._store, FaultableJobStore):
            raise TypeError(f"{type(self._store).__name__} has no fault injection point"
                            " (inject_fault, fault_struck)")
        return self._store

    # -- cancellation and shutdown -----------------------------------------------------

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is None or job.status in TERMINAL:
            return False
        if job.status == QUEUED:
            # If a worker claims it first, cancel it as running.
            return self._cancel_queued(job_id) or self.cancel(job_id)
        if job.cancel_requested:
            return False
        if ownership.request_cancellation(self._store, job) is None:
            # The delivery read has ended or was taken back meanwhile: cancel what is there.
            return self.cancel(job_id)
        script = self._scripts.get(job_id)
        # Only the delivery asked is interrupted: not a stale one of this runtime's whose
        # job another worker has claimed since.
        if (self._settings.cancel_interrupts and script is not None
                and self._owned.get(job_id) == job.fencing_token):
            # The invocation stops, whatever the body does (LC-026).
            self._interrupted.add(job_id)
            script.interrupt()
        self.settle()  # the owner acts on the request
        return True

    def shutdown(self) -> None:
        if self._settings.shutdown_mode == "drain":
            if not self._shut_down:  # a second shutdown does not restart the timeout
                self._shut_down = True
                self._drain_deadline = self._now() + timedelta(
                    seconds=self._settings.drain_timeout_seconds)
                self._end_drain_if_due()
            return
        self._cancel_active(self._now())
        self._shut_down = True

    def _cancel_active(self, at: datetime) -> None:
        for job in self._store.list():
            # Shutdown interrupts even a body ignoring it. A body that outlives it (the SQL
            # runtime's) still holds its token: its late write is refused by the status.
            if job.status not in TERMINAL and ownership.stop_as_seen(self._store, job, at):
                self._count_outcome(CANCELLED)

    def _end_drain_if_due(self) -> None:
        """Once the clock reaches the drain's deadline, cancel what is still active, at
        the deadline (LC-028)."""
        deadline = self._drain_deadline
        if deadline is not None and self._now() >= deadline:
            self._drain_deadline = None
            self._cancel_active(deadline)

    # -- health (LC-029; the reads are StoreRuntime's) -----------------------------------

    def health(self) -> HealthSnapshot:
        return self._health(self._store.counts(), self._worker_id, self._worker_status())

    def _worker_status(self) -> str:
        """Running until shutdown; stopping while a drain waits for its timeout (LC-029)."""
        if not self._shut_down:
            return WORKER_RUNNING
        return WORKER_STOPPING if self._drain_deadline is not None else WORKER_STOPPED

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        self._store.close()

    # -- helpers -----------------------------------------------------------------------

    def _copy(self, job: StoredJob) -> StoredJob:
        """A record whose result, arguments and options are scalars (or None) has nothing
        a caller could change, so it is handed out as it is: list_jobs runs after every
        harness step (so the three are asked in turn, without a generator's calls)."""
        immutable = IMMUTABLE_VALUES
        if (isinstance(job.result, immutable) and isinstance(job.arguments, immutable)
                and isinstance(job.options, immutable)):
            return job
        return super()._copy(job)

