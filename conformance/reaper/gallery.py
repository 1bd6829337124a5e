"""The reaper and re-delivery gallery: the memory (and SQL) backend broken the way reapers
and lease reapers get it wrong (seed 004 §1.3, seed 002 §10.13, the anchors).

`GALLERY` joins the self-test: every suite must catch each entry and name the
requirement in `catches`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import select

from jobconform.backends import ownership
from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings, StoreUnavailable
from jobconform.backends.reaper import LOG, Reaper
from jobconform.backends.sql import SqlBackend, SqlJobStore
from jobconform.backends.sql.store import JOBS, REQUESTS, to_stored
from jobconform.backends.store import (
    FAILED,
    QUEUED,
    TERMINAL,
    InMemoryJobStore,
    StoredJob,
)
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry, subclass_entry
from jobconform.reference.lifecycle import POISON_ERROR

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def entry(name: str, broken: type[Reaper] | type[InMemoryJobStore] | type[MemoryRuntime],
          catches: str, source: str) -> GalleryEntry:
    """The memory backend with one part broken, loadable as `<this module>:<name>`."""

    def open_broken(_: MemoryBackend, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        if issubclass(broken, MemoryRuntime):
            return broken(settings, clock)
        if issubclass(broken, InMemoryJobStore):
            return MemoryRuntime(settings, clock, store=broken())
        runtime_type = type(f"{name}_runtime", (MemoryRuntime,), {"reaper_type": broken})
        runtime: MemoryRuntime = runtime_type(settings, clock)
        return runtime

    return opener_entry(__name__, name, MemoryBackend, "open", open_broken, broken, catches,
                        source)


@declares(GALLERY)
def sql_entry(name: str, broken: type[SqlJobStore], catches: str,
              source: str) -> GalleryEntry:
    return subclass_entry(__name__, name, SqlBackend, {"store_type": broken}, broken, catches,
                          source)


# -- broken reapers --------------------------------------------------------------------------


@entry("reaper_deletes_pending", "RP-004",
       "seed 004 §1.3: the reaper MUST NOT delete PENDING or RUNNING tasks")
class DeletesPendingReaper(Reaper):
    """The sweep picks jobs by age alone (finished_at, else submitted_at), so a queued or
    running job older than the TTL is deleted."""

    def _expired_jobs(self, before: datetime) -> list[StoredJob]:
        store = self._store
        assert isinstance(store, InMemoryJobStore)
        return [job for job in store.list() if (job.finished_at or job.submitted_at) < before]


@entry("reaper_stops_after_error", "RP-005",
       "seed 004 start_reaper: log WARN and retry next interval")
class StopsAfterErrorReaper(Reaper):
    """A store error ends the sweep loop for good: the reaper stops and expired jobs pile
    up from then on."""

    def _sweep(self, before: datetime) -> None:
        failed = self.counters.failed_sweeps
        super()._sweep(before)
        if self.counters.failed_sweeps > failed:
            LOG.error("reaper sweep failed; reaper exits")
            self._ttl = self._next_sweep = None


@entry("reaper_sweeps_every_minute", "RP-002", "seed 004 decision D-48: 60 000 ms helpers retired")
class MinuteSweepReaper(Reaper):
    """The sweep interval ignores the configured default and stays at the historical
    helpers' 60 000 ms."""

    def __init__(self, store: InMemoryJobStore, default_ttl_seconds: float,
                 default_sweep_interval_ms: float) -> None:
        super().__init__(store, default_ttl_seconds, 60_000.0)


@entry("reaper_sweeps_at_start", "RP-002",
       "seed 004 Contract: AsyncTaskManager.start_reaper (synchronous by design; only"
       " stop waits on a sweep)")
class SweepsAtStartReaper(Reaper):
    """start_reaper awaits a first sweep before it returns its handle (the examples'
    `await manager.start_reaper(...)` taken at its word), so jobs already expired at the
    call are deleted one interval early."""

    def start(self, now: datetime, ttl_seconds: float | None = None,
              sweep_interval_ms: float | None = None) -> None:
        super().start(now, ttl_seconds, sweep_interval_ms)
        ttl = self._default_ttl_seconds if ttl_seconds is None else ttl_seconds
        with self._lock:
            self._sweep(now - timedelta(seconds=ttl))


@entry("reaper_partial_sweep_uncounted", "RP-008",
       "seed 004 start_reaper: log WARN and retry next interval (issue 18)")
class UncountedPartialSweepReaper(Reaper):
    """A sweep counts its deletions only when it ends well: when a delete fails part-way,
    the jobs it deleted before are gone but missing from the status's deleted."""

    def _sweep(self, before: datetime) -> None:
        try:
            self._fail_during_outage()
            expired = self._expired_jobs(before)
            for job in expired:
                self._store.delete(job.job_id)
        except StoreUnavailable:
            self.counters.failed_sweeps += 1
            return
        self.counters.sweeps += 1
        self.counters.deleted += len(expired)
        if expired:
            self._log_deleted(len(expired))


@entry("reaper_start_unguarded", "RP-006", "seed 004 start_reaper: idempotent false")
class UnguardedStartReaper(Reaper):
    """A second start_reaper replaces the running reaper's settings and schedule instead
    of being refused (seed 004: "calling twice starts two Reapers")."""

    def start(self, now: datetime, ttl_seconds: float | None = None,
              sweep_interval_ms: float | None = None) -> None:
        self.stop()
        super().start(now, ttl_seconds, sweep_interval_ms)


# -- broken stores and runtimes ----------------------------------------------------------------


@entry("reaper_inclusive_boundary", "RP-003", "seed 004 TaskStore.list_expired")
class InclusiveExpiryStore(InMemoryJobStore):
    """list_expired uses `<=` where the boundary is strict, so a job finished exactly at
    the cutoff is reaped one sweep early."""

    @staticmethod
    def _finished_before(job: StoredJob, before: datetime) -> bool:
        return (job.status in TERMINAL and job.finished_at is not None
                and job.finished_at <= before)


@sql_entry("sql_reaper_inclusive_boundary", "RP-003", "seed 004 TaskStore.list_expired")
class InclusiveExpirySqlStore(SqlJobStore):
    """The SQL list_expired uses `<=` where the boundary is strict."""

    def list_expired(self, before: datetime) -> list[StoredJob]:
        query = (select(JOBS).where(JOBS.c.status.in_(TERMINAL))
                 .where(JOBS.c.finished_at <= before).order_by(JOBS.c.submission_order))
        with self._transaction(read_only=True) as connection:
            return [to_stored(row) for row in connection.execute(query)]


def _to_millisecond(instant: datetime) -> datetime:
    return instant.replace(microsecond=instant.microsecond // 1000 * 1000)


@entry("reaper_expiry_millisecond_precision", "RP-003",
       "issue 33: time finer than a second (instants compared at milliseconds)")
class MillisecondExpiryStore(InMemoryJobStore):
    """list_expired compares instants at millisecond precision, as a store column that
    keeps milliseconds: a job finished a microsecond before the cutoff, within the same
    millisecond, is not listed though it is past the TTL (issue 33)."""

    @staticmethod
    def _finished_before(job: StoredJob, before: datetime) -> bool:
        return (job.status in TERMINAL and job.finished_at is not None
                and _to_millisecond(job.finished_at) < _to_millisecond(before))


@entry("redelivery_lease_whole_seconds", "RD-001",
       "issue 33: time finer than a second (silence counted in whole seconds)")
class LeaseWholeSecondsRuntime(MemoryRuntime):
    """A lease lapses when `int(now - last_heartbeat) > lease_seconds`: silence is counted
    in whole seconds, so a job silent for its lease plus less than a second keeps its
    lease and is not re-delivered (issue 33)."""

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        # int(silence) > lease holds once silence >= floor(lease) + 1 s; the runtime's
        # strict comparison reaches that with a lease a microsecond short of it.
        return super().expire_leases(math.floor(lease_seconds) + 1 - 1e-6)


@entry("redelivery_lease_ignores_heartbeats", "RD-005",
       "anchors: stuck jobs, elapsed since start (River, Oban) vs heartbeat lease")
class LeaseIgnoresHeartbeatsRuntime(MemoryRuntime):
    """The lease pass measures a job's silence from its start, not from its last
    heartbeat: a job that started more than the lease ago is re-queued though it beat
    within the lease, so a long body that keeps beating loses its lease at every pass
    (the elapsed-since-start rule of River and Oban, used where a lease is heartbeats')."""

    @staticmethod
    def _past_lease(job: StoredJob, cutoff: datetime) -> bool:
        return job.started_at is not None and job.started_at < cutoff


@entry("redelivery_without_cap", "RD-002", "anchors: unbounded re-pick")
class UncappedRedeliveryRuntime(MemoryRuntime):
    """A job whose lease expires is re-queued however often it has been before: a poison
    job loops forever (pgqueuer's retry timer)."""

    def _redelivery_cap(self) -> float:
        return float("inf")


@entry("redelivery_spends_a_retry", "RD-001",
       "seed 002 §10.13: a re-delivery is not an outcome (RQ 3.0: Job.retry)")
class RedeliverySpendsRetryRuntime(MemoryRuntime):
    """A lapsed lease re-queues the job as a retry: one of its retries is spent with each
    re-delivery, so a job that loses its lease has fewer left for its body's failures
    (RQ's StartedJobRegistry.cleanup calls Job.retry)."""

    def _redeliver(self, job: StoredJob) -> bool:
        if not super()._redeliver(job):
            return False
        if job.retry_count < job.max_retries:
            self._store.update(job.job_id, QUEUED, retry_count=job.retry_count + 1)
        return True


@entry("redelivery_count_reset_on_progress", "RD-004", "seed 002 §10.13: no reset-on-progress")
class CountResetOnProgressRuntime(MemoryRuntime):
    """A heartbeat after a re-delivery counts as progress and resets redelivery_count, so a
    job that progresses a little on each delivery is never parked."""

    def heartbeat(self, job_id: str) -> None:
        token = self._owned.get(job_id)
        if token is not None:
            ownership.owner_write(self._store, job_id, token, last_heartbeat=self._now(),
                                  redelivery_count=0)


@entry("redelivery_parks_silently", "RD-003", "seed 002 §10.13: operator alert first")
class SilentParkingRuntime(MemoryRuntime):
    """At the cap the job is failed as poison, but no operator alert is raised."""

    def _park(self, job: StoredJob) -> bool:
        parked = ownership.rescue(self._store, job, status=FAILED, poisoned=True,
                                  error=POISON_ERROR, finished_at=self._now())
        if parked is None:
            return False
        self._count_outcome(FAILED)
        return True


@entry("redelivery_alerts_after_parking", "RD-003",
       "seed 002 §10.13: operator alert first, then failed")
class AlertsAfterParkingRuntime(MemoryRuntime):
    """At the cap the job is failed as poison first and the operator alerted after it:
    the alert reports a job already failed, and a crash between the two loses the alert.
    The records after the pass look right; only the order inside it is wrong."""

    def _park(self, job: StoredJob) -> bool:
        parked = ownership.rescue(self._store, job, status=FAILED, alerted=True,
                                  poisoned=True, error=POISON_ERROR, finished_at=self._now())
        if parked is None:
            return False
        self._alerts.raise_once(job.job_id)
        self._owned.pop(job.job_id, None)
        self._superseded[job.job_id] = job.fencing_token
        self._count_outcome(FAILED)
        return True


@entry("redelivery_count_torn_requeue", "RD-007",
       "seed 002 §10.13: the count is raw attempts (issue 18: faults between writes)")
class TornRequeueRuntime(MemoryRuntime):
    """A lapsed lease re-queues the job with two writes, the status first and the count
    after it: a fault between them leaves a queued job whose re-delivery was never
    counted, and the cap never comes."""

    def _redeliver(self, job: StoredJob) -> bool:
        requeued = ownership.rescue(self._store, job, status=QUEUED, worker_id=None)
        if requeued is None:
            return False
        self._owned.pop(job.job_id, None)
        self._superseded[job.job_id] = job.fencing_token
        script = self._scripts.get(job.job_id)
        if script is not None:
            script.next_attempt()
        self._store.update(job.job_id, QUEUED, expected={"fencing_token": job.fencing_token},
                           redelivery_count=job.redelivery_count + 1)
        return True


@entry("redelivery_alert_before_mark", "RD-007",
       "seed 002 §10.13: operator alert first (issue 18: faults between writes)")
class AlertBeforeMarkRuntime(MemoryRuntime):
    """At the cap the operator is alerted first and the job failed in one write, with
    nothing in the store saying the alert was raised: a crash at that write leaves an
    alert that no record knows of, which a restarted rescuer raises again."""

    def _park(self, job: StoredJob) -> bool:
        self._alerts.raise_once(job.job_id)
        parked = ownership.rescue(self._store, job, status=FAILED, alerted=True,
                                  poisoned=True, error=POISON_ERROR, finished_at=self._now())
        if parked is None:
            return False
        self._owned.pop(job.job_id, None)
        self._superseded[job.job_id] = job.fencing_token
        self._count_outcome(FAILED)
        return True


# -- broken operator queues (RD-008) ----------------------------------------------------------


@entry("operator_queue_request_id_global", "RD-008",
       "seed 002 §10.13: UNIQUE(agent_name, request_id), two agents no longer collide")
class GlobalRequestIdStore(InMemoryJobStore):
    """The operator queue is keyed by the request id alone (the seed's global primary key
    with on-conflict-do-nothing): a second agent reusing an id lands on the first agent's
    request, and its own is silently lost."""

    def park_request(self, agent: str, request_id: str) -> str:
        for minted, _, held in self.operator_requests():
            if held == request_id:
                return minted
        return super().park_request(agent, request_id)


@entry("operator_queue_repark_doubles", "RD-008",
       "seed 002 §10.13: re-parks under re-delivery are idempotent")
class ReparkDoublesStore(InMemoryJobStore):
    """Every park inserts a new request under a new id, so a re-park under re-delivery
    (the same agent, the same request id) makes a second request for the operator."""

    def park_request(self, agent: str, request_id: str) -> str:
        return super().park_request(agent, f"{request_id}#{len(self.operator_requests())}")

    def operator_requests(self) -> list[tuple[str, str, str]]:
        return [(minted, agent, request_id.partition("#")[0])
                for minted, agent, request_id in super().operator_requests()]


@sql_entry("sql_operator_queue_request_id_global", "RD-008",
           "seed 002 §10.13: UNIQUE(agent_name, request_id), two agents no longer collide")
class GlobalRequestIdSqlStore(SqlJobStore):
    """The SQL operator queue finds a parked request by its request id alone, so a second
    agent reusing an id lands on the first agent's row and no row of its own is made."""

    def park_request(self, agent: str, request_id: str) -> str:
        query = select(REQUESTS.c.queue_id).where(REQUESTS.c.request_id == request_id)
        with self._transaction(read_only=True) as connection:
            held = connection.scalar(query)
        return str(held) if held is not None else super().park_request(agent, request_id)
@entry("reaper_old_interval_in_milliseconds", "RP-010",
       "seed 004 start_reaper: interval_seconds, internally multiplied by 1000")
class OldIntervalInMillisecondsRuntime(MemoryRuntime):
    """The deprecated interval_seconds is passed on as the interval unchanged, missing the
    unit's change to milliseconds: a caller still on it sweeps a thousand times as often."""

    def start_reaper(self, ttl_seconds: float | None = None,
                     sweep_interval_ms: float | None = None, *,
                     interval_seconds: float | None = None,
                     max_age_seconds: float | None = None) -> None:
        if interval_seconds is not None:
            warn_deprecated("start_reaper(interval_seconds=...)", "sweep_interval_ms")
            sweep_interval_ms = interval_seconds
        super().start_reaper(ttl_seconds, sweep_interval_ms, max_age_seconds=max_age_seconds)


@entry("reaper_sweep_logged_at_info", "RP-009",
       "seed 004 §1.3: a deleted batch SHOULD be logged at DEBUG with the count")
class LoudSweepReaper(Reaper):
    """A sweep that deleted jobs is logged at INFO, not DEBUG: a reaper sweeping every few
    minutes fills an operator's INFO log."""

    def _log_deleted(self, count: int) -> None:
        LOG.info("reaper deleted %d expired job(s)", count, extra={"count": count})
