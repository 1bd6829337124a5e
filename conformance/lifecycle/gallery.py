"""The job runtime's gallery: broken lifecycle, retry and stuck-detection runtimes.

Each broken backend is the memory backend with one method of its runtime or its store
changed the way a real runtime got it wrong. `jobconform selftest` runs the suites
against every one of them and proves each is caught, by the requirement named in
`catches`. A suite that catches none of these is worthless, whatever it counts.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    WORKER_STOPPED,
    CapacityExceeded,
    Clock,
    RuntimeSettings,
    TaskScript,
)
from jobconform.backends.runtime_health import HealthSnapshot
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    InMemoryJobStore,
    StoredJob,
)
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry
from jobconform.reference import backoff
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import STUCK_ERROR, JsonValue

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def memory_entry(name: str, broken: type[MemoryRuntime] | type[InMemoryJobStore],
                 catches: str, source: str, profile: str = "canonical") -> GalleryEntry:
    """Build the memory backend with one part broken, loadable as `<this module>:<name>`."""

    def open_broken(_: MemoryBackend, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        if issubclass(broken, MemoryRuntime):
            return broken(settings, clock)
        return MemoryRuntime(settings, clock, store=broken())

    return opener_entry(__name__, name, MemoryBackend, "open", open_broken, broken, catches,
                        source, profile)


# -- broken runtimes ---------------------------------------------------------------------


@memory_entry("late_completion", "LC-003", "anchors: River")
class LateCompletionRuntime(MemoryRuntime):
    """The worker writes its body's outcome even after the job was cancelled."""

    def settle(self) -> None:
        super().settle()
        for job in self._store.list(CANCELLED):
            script = self._scripts.get(job.job_id)
            if job.started_at and script is not None and script.decided():
                try:
                    changes: dict[str, Any] = {"status": SUCCEEDED, "result": script.run()}
                except Exception as error:
                    changes = {"status": FAILED, "error": self._error_message(error)}
                self._store.update(job.job_id, CANCELLED, finished_at=self._now(), **changes)


class _BodyRunsAfterCancel(MemoryRuntime):
    """A runtime whose cancel only sets a flag on some jobs: their bodies still run once
    decided, and the outcome is dropped because the record says cancelled. The record
    looks right; only counting the body's invocations shows the run."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._flagged: set[str] = set()

    def _flag_on_cancel(self, job: StoredJob) -> bool:
        raise NotImplementedError

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == QUEUED and self._flag_on_cancel(job):
            self._flagged.add(job_id)
        return super().cancel(job_id)

    def settle(self) -> None:
        super().settle()
        self._run_flagged()

    def _run_flagged(self) -> None:
        for job_id in sorted(self._flagged):
            script = self._scripts.get(job_id)
            if script is not None and script.decided():
                self._flagged.discard(job_id)
                with contextlib.suppress(Exception):  # its outcome is dropped: cancelled
                    script.run()


@memory_entry("flag_only_cancel_runs_body", "LC-012",
              "seed 004 D-18 (a flag-only cancel does not conform)")
class FlagOnlyCancelRuntime(_BodyRunsAfterCancel):
    """Cancelling a queued job only flags it: a worker still runs its body once decided
    and drops the outcome (seed 004 D-18's flag-only cancel, before the job started)."""

    def _flag_on_cancel(self, job: StoredJob) -> bool:
        return job.retry_count == 0


@memory_entry("backoff_cancel_runs_next_attempt", "RT-006",
              "seed 004 (cancelled in backoff, never run again)")
class BackoffCancelRunsNextAttemptRuntime(_BodyRunsAfterCancel):
    """Cancelling a job in backoff only flags it: the retry timer still runs the next
    attempt's body once decided, and drops its outcome."""

    def _flag_on_cancel(self, job: StoredJob) -> bool:
        return job.retry_count > 0


@memory_entry("shutdown_drains_queue", "LC-022", "seed 004 (shutdown cancels queued work)")
class ShutdownDrainsQueueRuntime(MemoryRuntime):
    """Shutdown drains the queue as a graceful stop would: it runs the body of every
    queued job already decided, then reports every active job cancelled as the spec
    says. The records look right; the bodies should never have run."""

    def shutdown(self) -> None:
        for job in self._store.list(QUEUED):
            script = self._scripts.get(job.job_id)
            if script is not None and script.decided():
                with contextlib.suppress(Exception):
                    script.run()
        super().shutdown()


@memory_entry("caller_cancels_running", "LC-013", "seed 000 B1")
class CallerCancelsRunningRuntime(MemoryRuntime):
    """Cancel moves a running job itself while its worker also moves it (seed 000, B1).

    The worker's own transition then fails on the terminal job, and its error handler
    records the job as failed.
    """

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._transition_errors: set[str] = set()

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == RUNNING and not job.cancel_requested:
            self._store.update(job_id, RUNNING, expected={"fencing_token": job.fencing_token},
                               status=CANCELLED, cancel_requested=True,
                               finished_at=self._now())
            self.cancelled += 1
            self.settle()
            return True
        return super().cancel(job_id)

    def settle(self) -> None:
        for job in self._store.list(CANCELLED):
            script = self._scripts.get(job.job_id)
            owner_acts = script is not None and (script.honours_cancellation or script.decided())
            caller_moved = job.cancel_requested and job.started_at
            if caller_moved and owner_acts and job.job_id not in self._transition_errors:
                # The worker's own running -> cancelled raises on the terminal job, and
                # its error handler counts the job as a failure.
                self._transition_errors.add(job.job_id)
                self.failed += 1
                self.processed += 1
        super().settle()


@memory_entry("cancel_counted_as_processed", "LC-025", "seed 000 B2")
class CancelCountedAsProcessedRuntime(MemoryRuntime):
    """A cancelled job is recorded as processed too (seed 000, B2)."""

    def _count_outcome(self, status: str) -> None:
        super()._count_outcome(status)
        if status == CANCELLED:
            self.processed += 1


@memory_entry("naive_timestamps", "LC-005", "seed 000 B4")
class NaiveTimestampRuntime(MemoryRuntime):
    """Timestamps lose their timezone: `datetime.now()` without UTC (seed 000, B4)."""

    def _now(self) -> datetime:
        return super()._now().replace(tzinfo=None)


# India Standard Time: the offset of one column a driver reads back in the session's zone.
SESSION_OFFSET = timezone(timedelta(hours=5, minutes=30))


@memory_entry("heartbeat_at_offset", "LC-005",
              "issue 33: every timestamp is UTC, each instant field of a record")
class HeartbeatAtOffsetRuntime(MemoryRuntime):
    """One column comes back at another offset: a record's last_heartbeat reads at +05:30
    (the same instant) while its other timestamps are UTC, as a column typed without a
    time zone that the driver reads in the session's zone."""

    def _copy(self, job: StoredJob) -> StoredJob:
        copied = super()._copy(job)
        if copied.last_heartbeat is None:
            return copied
        return replace(copied, last_heartbeat=copied.last_heartbeat.astimezone(SESSION_OFFSET))


class _LiveRecord:
    """Reads through to the store on every attribute access, as a live reference does."""

    def __init__(self, store: InMemoryJobStore, job: StoredJob) -> None:
        self._store, self._last = store, job

    def __getattr__(self, name: str) -> object:
        current = self._store.get(self._last.job_id)
        self._last = current if current is not None else self._last
        return getattr(self._last, name)


@memory_entry("live_records", "LC-016", "seed 004 D-23")
class LiveRecordRuntime(MemoryRuntime):
    """get and list hand out the runtime's own record, not a copy (seed 004, D-23)."""

    def _copy(self, job: StoredJob) -> StoredJob:
        assert isinstance(self._store, InMemoryJobStore)
        return _LiveRecord(self._store, job)  # type: ignore[return-value]


@memory_entry("overbooking", "LC-010", "seed 000 B3")
class OverbookingRuntime(MemoryRuntime):
    """Dispatch claims every queued job, ignoring the concurrency limit (cf. seed 000 B3)."""

    def dispatch(self) -> None:
        # Only the limit is wrong: the jobs it claims are its own, as in a correct dispatch
        # (without that they would never finish, a second bug hiding the first).
        for job in self._store.claim(self._worker_id, len(self._store.list(QUEUED)),
                                     self._now()):
            self._owned[job.job_id] = job.fencing_token
        self.settle()


@memory_entry("cancel_always_true", "LC-015", "seed 004 cancel")
class CancelAlwaysTrueRuntime(MemoryRuntime):
    """Cancel answers true for a job that is already terminal."""

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        return super().cancel(job_id) or (job is not None and job.status in TERMINAL)


@memory_entry("message_only_error", "LC-007", "seed 000 errors")
class MessageOnlyErrorRuntime(MemoryRuntime):
    """A failed job records only the exception's message, without its type name."""

    @staticmethod
    def _error_message(error: Exception) -> str:
        return str(error)


@memory_entry("shutdown_leaves_queued", "LC-022", "seed 004 shutdown")
class ShutdownLeavesQueuedRuntime(MemoryRuntime):
    """Shutdown cancels running jobs but forgets the ones still queued."""

    def shutdown(self) -> None:
        for job in self._store.list(RUNNING):
            self._end(job, CANCELLED)
        self._shut_down = True


@memory_entry("shutdown_before_dispatch_stays_open", "LC-023",
              "issue 18 class 6 (shutdown early, before the first dispatch)")
class ShutdownBeforeDispatchStaysOpenRuntime(MemoryRuntime):
    """The shut-down flag lives in the dispatcher, which starts at the first dispatch: a
    runtime shut down before it ever dispatched cancels its jobs but goes on accepting
    submissions. Only a shutdown that comes early, before the first dispatch, shows it
    (issue 18, class 6: the machine used to allow shutdown only after 15 commands)."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._dispatcher_started = False
        self._told_to_stop = False  # the worker's own flag, which its health report reads

    def dispatch(self) -> None:
        self._dispatcher_started = True
        super().dispatch()

    def shutdown(self) -> None:
        super().shutdown()
        self._told_to_stop = True
        if not self._dispatcher_started:
            self._shut_down = False  # no dispatcher yet to hold the flag

    def _worker_status(self) -> str:
        # The health report is right (LC-029): only the submission gate is lost.
        if self._told_to_stop and not self._shut_down:
            return WORKER_STOPPED
        return super()._worker_status()


@memory_entry("newest_first_list", "LC-018", "seed 004 list_tasks")
class NewestFirstListRuntime(MemoryRuntime):
    """Listing returns the newest job first instead of submission order."""

    def list_jobs(self, status: str | None = None) -> Sequence[StoredJob]:
        return list(reversed(super().list_jobs(status)))


@memory_entry("listing_cut_at_a_page", "LC-038",
              "seed 000 Indexes (queue polling and age-ordered reads over many rows)")
class ListingCutAtAPageRuntime(MemoryRuntime):
    """Listing answers at most 256 jobs, a default limit left on the store's query: every
    answer is right until more jobs are held, then the newest are silently left out."""

    LIMIT = 256

    def list_jobs(self, status: str | None = None) -> Sequence[StoredJob]:
        return list(super().list_jobs(status))[:self.LIMIT]


@memory_entry("status_listing_capped", "LC-038",
              "seed 000 Indexes (queue polling by the status index)")
class StatusListingCappedRuntime(MemoryRuntime):
    """A listing by status answers at most 100 jobs, a default limit left on the query that
    polls by the status index; the whole listing, a query of its own, is right."""

    LIMIT = 100

    def list_jobs(self, status: str | None = None) -> Sequence[StoredJob]:
        listed = list(super().list_jobs(status))
        return listed if status is None else listed[:self.LIMIT]


@memory_entry("read_takes_a_neighbours_row", "LC-038",
              "seed 000 Indexes (a lookup that takes a neighbour's row)")
class ReadTakesANeighboursRowRuntime(MemoryRuntime):
    """A read by id past the 200th job held answers the row before it, an offset off by
    one in a lookup that pages through the table by 200: every read is right until more
    jobs are held, and the neighbour's record is the same as the job's while both wait."""

    PAGE = 200

    def get(self, job_id: str) -> StoredJob | None:
        held = [job.job_id for job in self._store.list()]
        place = held.index(job_id) if job_id in held else -1
        return super().get(held[place - 1] if place >= self.PAGE else job_id)


@memory_entry("error_cut_to_a_column", "LC-039",
              "seed 000 Database Table (error_message Text) and Error Audit Trail")
class ErrorCutToAColumnRuntime(MemoryRuntime):
    """A job's error is cut to 65 535 characters, the width of a MySQL TEXT column that a
    server in non-strict mode fills silently; every shorter error is right."""

    WIDTH = 65_535

    @staticmethod
    def _error_message(error: Exception) -> str:
        return MemoryRuntime._error_message(error)[:ErrorCutToAColumnRuntime.WIDTH]


@memory_entry("attempt_from_one", "RT-002", "anchors: tenacity indexes from 1")
class AttemptFromOneRuntime(MemoryRuntime):
    """The backoff exponent counts attempts from 1, so the first retry waits twice as long."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        return super().compute_delay_ms(policy, attempt + 1, jitter, draw, previous_ms,
                                        retry_after_ms)


@memory_entry("jitter_after_cap", "RT-009", "anchors: jitter traps")
class JitterAfterCapRuntime(MemoryRuntime):
    """Jitter is added on top of the capped delay, so a jittered delay can exceed the cap."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        capped = super().compute_delay_ms(policy, attempt, Jitter.NONE, 0.0, previous_ms,
                                          retry_after_ms)
        if jitter is Jitter.NONE:
            return capped
        return capped + draw * capped


@memory_entry("unknown_jitter_mode", "RT-009",
              "issue 29 (a delay function that raises: no such jitter mode)")
class UnknownJitterModeRuntime(MemoryRuntime):
    """The delay function knows no jitter mode but full: asked for equal or decorrelated
    jitter it raises ValueError instead of answering (issue 29, "no such jitter mode")."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        if jitter in (Jitter.EQUAL, Jitter.DECORRELATED):
            raise ValueError(f"no such jitter mode: {jitter.value}")
        return super().compute_delay_ms(policy, attempt, jitter, draw, previous_ms,
                                        retry_after_ms)


@memory_entry("overflowing_delay", "RT-002",
              "issue 29 (a delay function that raises: an overflow at a large attempt)")
class OverflowingDelayRuntime(MemoryRuntime):
    """The plain delay function takes the power in floats before it caps it, so a large
    attempt raises OverflowError instead of giving the cap (issue 29)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        if jitter is Jitter.NONE and retry_after_ms is None:
            return min(policy.retry_delay_ms * policy.backoff_multiplier ** attempt,
                       policy.max_retry_delay_ms)
        return super().compute_delay_ms(policy, attempt, jitter, draw, previous_ms,
                                        retry_after_ms)


@memory_entry("retrying_state", "RT-003", "seed 004 TaskStatus")
class RetryingStateRuntime(MemoryRuntime):
    """A job waiting in backoff is shown in a sixth state, "retrying" (seed 004, <= v0.20)."""

    def _copy(self, job: StoredJob) -> StoredJob:
        shown = super()._copy(job)
        if shown.status == QUEUED and shown.retry_count > 0:
            return replace(shown, status="retrying")
        return shown


@dataclass(frozen=True)
class OrdinalAttemptJob(StoredJob):
    """A record whose deprecated attempt_number counts attempts from 1."""

    @property
    def attempt_number(self) -> int:
        return self.retry_count + 1


@memory_entry("attempt_number_off_by_one", "RT-011",
              "seed 004 TaskInfo: attempt_number, a deprecated alias returning retry_count")
class AttemptNumberFromOneRuntime(MemoryRuntime):
    """The deprecated attempt_number was re-implemented as the attempt's ordinal (1 for
    the first attempt), not kept as retry_count: one more than the retries taken."""

    def _copy(self, job: StoredJob) -> StoredJob:
        shown = super()._copy(job)
        return OrdinalAttemptJob(**{item.name: getattr(shown, item.name)
                                    for item in fields(StoredJob)})


@memory_entry("retried_attempt_counted", "RT-007", "seed 000 health counters")
class RetriedAttemptCountedRuntime(MemoryRuntime):
    """A retried attempt is counted as processed and failed, as if it were an outcome."""

    def _retry(self, job: StoredJob, error: Exception) -> bool:
        retried = super()._retry(job, error)
        if retried:
            self.processed += 1
            self.failed += 1
        return retried


@memory_entry("non_retryable_ignored", "RT-005", "anchors: non-retryable error types")
class NonRetryableIgnoredRuntime(MemoryRuntime):
    """Non-retryable error types are retried like any other error."""

    def _retry(self, job: StoredJob, error: Exception) -> bool:
        policy = backoff.policy_from_json(job.retry_policy)
        if policy is not None and type(error).__name__ in policy.non_retryable:
            loose = backoff.policy_to_json(replace(policy, non_retryable=()))
            job = replace(job, retry_policy=loose)  # type: ignore[arg-type]
        return super()._retry(job, error)


@memory_entry("cancel_in_backoff_runs", "RT-006", "seed 004 cancellation")
class CancelInBackoffRuntime(MemoryRuntime):
    """Cancel of a job in backoff only flags it, and the next attempt runs all the same."""

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == QUEUED and job.retry_count > 0:
            return self._store.update(job_id, QUEUED, cancel_requested=True) is not None
        return super().cancel(job_id)


@memory_entry("stuck_ignores_heartbeats", "ST-002", "seed 000 stuck detection")
class StuckIgnoresHeartbeatsRuntime(MemoryRuntime):
    """Stuck detection measures from the start, so a job that heartbeated just inside the
    timeout is failed as stuck."""

    @staticmethod
    def _is_stuck(job: StoredJob, cutoff: datetime) -> bool:
        return job.started_at is not None and job.started_at < cutoff


@memory_entry("stuck_whole_seconds", "ST-002", "issue 33: time finer than a second")
class StuckWholeSecondsRuntime(MemoryRuntime):
    """Silence is measured in whole seconds, `int(now - last_heartbeat) > timeout`, so a
    job silent for the timeout plus half a second is left running (issue 33)."""

    @staticmethod
    def _is_stuck(job: StoredJob, cutoff: datetime) -> bool:
        # With a whole-second timeout, int(silence) > timeout holds from timeout + 1 s on.
        return (job.last_heartbeat is not None
                and job.last_heartbeat <= cutoff - timedelta(seconds=1))


@memory_entry("stuck_inclusive_boundary", "ST-003", "seed 000 stuck detection")
class StuckInclusiveBoundaryRuntime(MemoryRuntime):
    """A job whose last heartbeat is exactly the timeout old is already failed as stuck."""

    @staticmethod
    def _is_stuck(job: StoredJob, cutoff: datetime) -> bool:
        return job.last_heartbeat is not None and job.last_heartbeat <= cutoff


@memory_entry("stuck_fails_queued", "ST-004", "seed 000 stuck detection")
class StuckFailsQueuedRuntime(MemoryRuntime):
    """Stuck detection also fails queued jobs that have waited longer than the timeout."""

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        cutoff = self._now() - timedelta(seconds=job_timeout_seconds)
        waiting = [job for job in self._store.list(QUEUED) if job.submitted_at < cutoff]
        for job in waiting:
            if self._store.update(job.job_id, QUEUED, status=FAILED, error=STUCK_ERROR,
                                  finished_at=self._now()) is not None:
                self._count_outcome(FAILED)
        return super().detect_stuck(job_timeout_seconds) + len(waiting)


# -- broken stores ---------------------------------------------------------------------


@memory_entry("cleanup_removes_active", "LC-019", "seed 004 cleanup")
class CleanupRemovesActiveStore(InMemoryJobStore):
    """Cleanup removes old jobs whatever their status, running ones included."""

    @staticmethod
    def _expired(job: StoredJob, cutoff: datetime) -> bool:
        return (job.finished_at or job.submitted_at) <= cutoff


@memory_entry("cleanup_exclusive_boundary", "LC-020", "seed 004 cleanup")
class CleanupExclusiveBoundaryStore(InMemoryJobStore):
    """Cleanup keeps a job exactly max_age old: `>` where the boundary is inclusive."""

    @staticmethod
    def _expired(job: StoredJob, cutoff: datetime) -> bool:
        return job.status in TERMINAL and (job.finished_at or job.submitted_at) < cutoff


def _to_millisecond(instant: datetime) -> datetime:
    return instant.replace(microsecond=instant.microsecond // 1000 * 1000)


@memory_entry("cleanup_millisecond_precision", "LC-020",
              "issue 33: time finer than a second (instants compared at milliseconds)")
class CleanupMillisecondStore(InMemoryJobStore):
    """Cleanup compares instants at millisecond precision, as a store column that keeps
    milliseconds: a job finished within the same millisecond as the cut-off, but after it,
    is removed though younger than the max age (issue 33)."""

    @staticmethod
    def _expired(job: StoredJob, cutoff: datetime) -> bool:
        finished = job.finished_at or job.submitted_at
        return job.status in TERMINAL and (
            _to_millisecond(finished) <= _to_millisecond(cutoff))


@memory_entry("instants_kept_to_milliseconds", "LC-005",
              "issue 33: time finer than a second (instants kept to milliseconds)")
class MillisecondInstantsStore(InMemoryJobStore):
    """The store keeps instants to the millisecond, as a `DATETIME(3)` column or a driver
    that drops microseconds: every instant it writes comes back truncated, so a record's
    times are up to a millisecond early and every rule reading them (cleanup's cut-off,
    stuck detection, a backoff's end) compares at milliseconds (issue 33)."""

    @staticmethod
    def _kept(job: StoredJob) -> StoredJob:
        kept: dict[str, Any] = {field.name: _to_millisecond(value) for field in fields(job)
                                if isinstance(value := getattr(job, field.name), datetime)}
        return replace(job, **kept)

    def add(self, job: StoredJob, max_records: int | None) -> None:
        super().add(self._kept(job), max_records)

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        return super().claim(worker_id, limit, _to_millisecond(now))

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        kept = {name: _to_millisecond(value) if isinstance(value, datetime) else value
                for name, value in changes.items()}
        return super().update(job_id, expected_status, expected=expected, **kept)


class ClaimRewritingStore(InMemoryJobStore):
    """A store whose claim changes the records the sound claim took (each broken store
    says how) and keeps them so."""

    def kept(self, claimed: list[StoredJob]) -> list[StoredJob]:
        """`claimed`, written over the records the sound claim stored."""
        with self._lock:
            for job in claimed:
                self._jobs[job.job_id] = job
        return claimed


@memory_entry("backoff_end_whole_seconds", "RT-002",
              "issue 33: time finer than a second (a backoff's end compared in whole"
              " seconds)")
class BackoffWholeSecondsStore(ClaimRewritingStore):
    """The claim compares a retried job's due time with the clock in whole seconds
    (`int(next_attempt_at) <= int(now)`, as epoch-second columns do): a retry due half a
    second into a second starts up to a second before its backoff ends (issue 33)."""

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        # int(due) <= int(now) holds for every due time before the next whole second.
        seen = now.replace(microsecond=0) + timedelta(seconds=1, microseconds=-1)
        return self.kept([replace(job, started_at=now, last_heartbeat=now)
                          for job in super().claim(worker_id, limit, seen)])


@memory_entry("first_start_kept", "LC-004", "issue 29 (a retried job keeps its first started_at)")
class FirstStartKeptStore(ClaimRewritingStore):
    """The claim sets started_at only on a record that has none (a COALESCE(started_at,
    now)), so every later attempt of a retried job shows the first attempt's start."""

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        first_starts = {job.job_id: job.started_at for job in self.list() if job.started_at}
        return self.kept([replace(job, started_at=first_starts.get(job.job_id, job.started_at))
                          for job in super().claim(worker_id, limit, now)])


@memory_entry("tail_requeue", "RT-003", "issue 29 (a retried job re-queued at the tail)")
class TailRequeueStore(InMemoryJobStore):
    """A failed attempt sends its job to the tail of the queue: the claim takes queued jobs
    in the order they entered the queue, so a retried job whose delay has passed waits
    behind jobs submitted after it. Listing still shows submission order."""

    def __init__(self) -> None:
        super().__init__()
        self._arrivals = itertools.count()
        self._entered: dict[str, int] = {}  # job id -> its (last) arrival in the queue

    def add(self, job: StoredJob, max_records: int | None) -> None:
        super().add(job, max_records)
        self._entered[job.job_id] = next(self._arrivals)

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        updated = super().update(job_id, expected_status, expected=expected, **changes)
        if updated is not None and expected_status == RUNNING and updated.status == QUEUED:
            self._entered[job_id] = next(self._arrivals)  # back to the tail
        return updated

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        # The claim itself is the real one, walking the records in queue order.
        in_submission_order = list(self._jobs)
        self._jobs = {job_id: self._jobs[job_id]
                      for job_id in sorted(self._jobs, key=self._entered.__getitem__)}
        try:
            return super().claim(worker_id, limit, now)
        finally:
            self._jobs = {job_id: self._jobs[job_id] for job_id in in_submission_order}


@memory_entry("cap_counts_active_only", "LC-009", "anchors: task cap trap")
class CapCountsActiveOnlyStore(InMemoryJobStore):
    """The task cap counts only active jobs, so retained records grow without bound."""

    def add(self, job: StoredJob, max_records: int | None) -> None:
        with self._lock:
            active = sum(held.status not in TERMINAL for held in self._jobs.values())
            if max_records is not None and active >= max_records:
                raise CapacityExceeded(f"task cap of {max_records} active jobs reached")
            self._jobs[job.job_id] = job


@memory_entry("cancelled_job_starts", "LC-012", "seed 004 concurrency model")
class CancelledJobStartsStore(InMemoryJobStore):
    """The claim takes jobs from its queue without re-checking them, so a job cancelled
    while queued still starts its body."""

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        with self._lock:
            # As the real claim, backoff and retried jobs included; the one bug: a job
            # cancelled while it waited is still taken from the queue.
            picked = [job for job in self._jobs.values()
                      if (job.status == QUEUED or (job.status == CANCELLED
                                                   and job.started_at is None))
                      and (job.next_attempt_at is None or job.next_attempt_at <= now)][:limit]
            # Everything else as the real claim does (last_heartbeat and the new fencing
            # token included), so that the missing re-check is this entry's one bug: a
            # claim that kept the token let a superseded owner write the job claimed
            # again, a second bug (RD-006) that a run over every area named (issue 33).
            claimed = [replace(job, status=RUNNING, started_at=now, last_heartbeat=now,
                               worker_id=worker_id, fencing_token=job.fencing_token + 1)
                       for job in picked]
            for job in claimed:
                self._jobs[job.job_id] = job
            return claimed


@memory_entry("flag_only_running_cancel", "LC-026",
              "seed 004 D-18 (cancel interrupts the in-flight invocation)", profile="task-manager")
class FlagOnlyRunningCancelRuntime(MemoryRuntime):
    """Cancelling a running task only sets the cooperative flag, as if the profile did not
    ask for interruption: a body that ignores its token keeps running, with its slot,
    until it ends (seed 004 D-18's flag-only cancel, under task-manager)."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(replace(settings, cancel_interrupts=False), clock)


@memory_entry("module_id_unchecked", "LC-027", "seed 004 Contract: AsyncTaskManager.submit",
              profile="task-manager")
class ModuleIdUncheckedRuntime(MemoryRuntime):
    """Submit takes whatever module id it is given: a malformed or unknown one creates a
    task that can only fail later, instead of being refused at submit (seed 004's submit
    contract)."""

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        return super().submit(script, retry, arguments=arguments, owner=owner,
                              trigger=trigger, options=options)


@memory_entry("drain_without_timeout", "LC-028",
              "issue 22 (graceful shutdown that drains with a timeout)", profile="draining-worker")
class DrainWithoutTimeoutRuntime(MemoryRuntime):
    """A drain-mode shutdown waits for every active job, however long: the drain timeout
    never cancels the jobs still queued or running (a graceful stop with no deadline)."""

    def _end_drain_if_due(self) -> None:
        return


@memory_entry("worker_id_shared", "LC-029",
              "seed 000 Startup (a unique worker id) and Health Report")
class WorkerIdSharedRuntime(MemoryRuntime):
    """Every runtime names its worker alike (a fixed default id instead of one made at
    startup), so two workers on one store cannot be told apart in their health reports."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._worker_id = "worker"


@memory_entry("heartbeat_from_held_jobs", "ST-005", "seed 000 Health Report (the last heartbeat)")
class HeartbeatFromHeldJobsRuntime(MemoryRuntime):
    """The health report's last heartbeat is read from the records still held, so cleanup
    of the jobs that beat last takes it back (or away)."""

    def health(self) -> HealthSnapshot:
        beats = [job.last_heartbeat for job in self._store.list()
                 if job.last_heartbeat is not None]
        return replace(super().health(), last_heartbeat=max(beats, default=None))


@memory_entry("racy_id_counter", "LC-030",
              "seed 004 Contract: AsyncTaskManager.submit (thread_safe)")
class RacyIdCounterRuntime(MemoryRuntime):
    """Job ids come from a counter that submit reads, then writes back once the record is
    built, with no lock around the two: a submission on a request thread yields in
    between (an await of the store, say), so two submissions made at once read the same
    number, both callers get one id, and the second record replaces the first. Submits
    from one thread at a time never show it."""

    # How long (real time) a submission on a thread other than the main one yields between
    # its read and its write at most: until another submission has read the counter too.
    YIELD_SECONDS = 0.5

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._next_number = 1
        self._reads = 0
        self._switch = threading.Condition()

    def _new_job_id(self) -> str:  # type: ignore[override]
        number = self._next_number
        if threading.current_thread() is not threading.main_thread():
            # The context switch between the read and the write, made to happen whenever
            # another thread is submitting too, so the race is lost every time.
            with self._switch:
                self._reads += 1
                mine = self._reads
                self._switch.notify_all()
                self._switch.wait_for(lambda: self._reads > mine, timeout=self.YIELD_SECONDS)
        self._next_number = number + 1
        return f"job-{number}"


@memory_entry("cancel_write_not_awaited", "LC-031",
              "seed 004 Contract: AsyncTaskManager.cancel (async, D10-004)")
class CancelWriteNotAwaitedRuntime(MemoryRuntime):
    """Cancel of a queued job starts the store write and returns true without awaiting
    it (a write scheduled on the runtime's loop): the job is cancelled only once the
    runtime next gets to run, so a caller that reads it straight after cancel returned
    still finds it queued. Everything the runtime shows once settled is right."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._writes_pending: list[str] = []

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == QUEUED and job_id not in self._writes_pending:
            self._writes_pending.append(job_id)
            return True
        if job_id in self._writes_pending:
            return False  # already cancelled, as far as the caller can tell
        return super().cancel(job_id)

    def settle(self) -> None:
        pending, self._writes_pending = self._writes_pending, []
        for job_id in pending:
            super().cancel(job_id)
        super().settle()


@memory_entry("interrupting_cancel_not_awaited", "LC-026",
              "seed 004 Contract: AsyncTaskManager.cancel (cancelled by the"
              " time cancel returns true)", profile="task-manager")
class InterruptingCancelNotAwaitedRuntime(MemoryRuntime):
    """Under cancel_running interrupt, cancel of a running task interrupts its body and
    returns true, but the task is moved to cancelled only when the runtime next gets to
    run (the interrupted task's done-callback records it): a caller that reads it straight
    after cancel returned still finds it running, with no finished_at, and not counted as
    cancelled. Everything the runtime shows once settled is right."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._in_cancel = False

    def cancel(self, job_id: str) -> bool:
        self._in_cancel = True  # the owner's step the cancel would run is left for later
        try:
            return super().cancel(job_id)
        finally:
            self._in_cancel = False

    def settle(self) -> None:
        if not self._in_cancel:
            super().settle()


@memory_entry("executions_page_overlaps", "LC-032",
              "seed 002 §10.12 (offset pagination of the executions list)")
class PageOverlapsRuntime(MemoryRuntime):
    """The executions query counts its offset from 1: every page after the first starts
    one job early, so the last job of a page is also the first of the next."""

    def query_executions(self, *, status: str | None = None, trigger: str | None = None,
                         owners: Sequence[str] | None = None, hours: float | None = None,
                         search: str | None = None, offset: int = 0,
                         limit: int | None = None) -> Sequence[StoredJob]:
        return super().query_executions(status=status, trigger=trigger, owners=owners,
                                        hours=hours, search=search,
                                        offset=max(offset - 1, 0), limit=limit)


@memory_entry("executions_window_excludes_edge", "LC-033",
              "seed 002 §10.12 (the list's hours filter)")
class WindowExcludesItsEdgeRuntime(MemoryRuntime):
    """The executions query's window of hours is open at its start: a job submitted
    exactly that many hours ago is left out (`submitted_at > now - hours`)."""

    def query_executions(self, *, status: str | None = None, trigger: str | None = None,
                         owners: Sequence[str] | None = None, hours: float | None = None,
                         search: str | None = None, offset: int = 0,
                         limit: int | None = None) -> Sequence[StoredJob]:
        # One microsecond less of window: the edge's own instant falls outside.
        narrower = None if hours is None else hours - ONE_MICROSECOND_IN_HOURS
        return super().query_executions(status=status, trigger=trigger, owners=owners,
                                        hours=narrower, search=search, offset=offset,
                                        limit=limit)


ONE_MICROSECOND_IN_HOURS = 1 / 3_600_000_000


@memory_entry("executions_stats_window_on_live_counts", "LC-034",
              "seed 002 §10.12 (running and queued counts always live)")
class StatsWindowActiveCountsRuntime(MemoryRuntime):
    """The execution statistics count running and queued jobs within the window too, so
    a job running for longer than the window drops out of the live counts."""

    def execution_stats(self, hours: float | None = None,
                        owners: Sequence[str] | None = None) -> dict[str, int]:
        counts = super().execution_stats(hours, owners)
        if hours is None:
            return counts
        since = self._now() - timedelta(hours=hours)
        recent = [job for job in self._store.list()
                  if job.submitted_at >= since and (owners is None or job.owner in owners)]
        return {**counts, "running": sum(job.status == RUNNING for job in recent),
                "queued": sum(job.status == QUEUED for job in recent)}


@memory_entry("execution_options_dropped_on_record", "LC-035",
              "seed 002 §10.5 (model_used audit trail in execution records)")
class OptionsDroppedOnRecordRuntime(MemoryRuntime):
    """Submit hands the execution options to the body when it runs but never stores
    them: the record shows none, so nobody can tell later what the job ran with."""

    def _options_for_body(self, job: StoredJob) -> JsonValue:
        return self._given_options.get(job.job_id)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        job_id = super().submit(script, retry, module_id, arguments, owner, trigger)
        self._given_options[job_id] = options
        return job_id

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._given_options: dict[str, JsonValue] = {}


@memory_entry("execution_options_not_handed_to_body", "LC-035",
              "seed 002 §10.5 (the task runs with the model chosen)")
class OptionsNotHandedToBodyRuntime(MemoryRuntime):
    """The record keeps the execution options, but the body is run without them, as a
    worker that reads the job's arguments and forgets its options would."""

    def _options_for_body(self, job: StoredJob) -> JsonValue:
        return None


def _each_value(value: JsonValue, change: Any) -> JsonValue:
    """`value` with `change` applied to every scalar in it, nesting kept."""
    if isinstance(value, list):
        return [_each_value(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _each_value(item, change) for key, item in value.items()}
    return change(value)  # type: ignore[no-any-return]


def _through_a_double(value: JsonValue) -> JsonValue:
    """An integer as a JavaScript-style JSON codec reads it: through a 64-bit float."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(float(value))
    return value


def _through_latin1(value: JsonValue) -> JsonValue:
    """A string as a Latin-1 connection writes it: other characters become "?"."""
    if isinstance(value, str):
        return value.encode("latin-1", "replace").decode("latin-1")
    return value


@memory_entry("arguments_through_doubles", "LC-036",
              "seed 000 Payload Serialization (a payload's integers past 53 bits)")
class ArgumentsThroughDoublesRuntime(MemoryRuntime):
    """Job arguments go through a codec that reads every number as a 64-bit float: an
    integer past 2**53 comes back rounded (9007199254740993 as 9007199254740992), in the
    record and in the body alike."""

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        return super().submit(script, retry, module_id,
                              _each_value(arguments, _through_a_double), owner, trigger,
                              options)


@memory_entry("arguments_latin1", "LC-036",
              "seed 000 Payload Serialization (a payload's text re-encoded)")
class ArgumentsLatin1Runtime(MemoryRuntime):
    """Job arguments are stored through a Latin-1 connection: every character outside
    Latin-1 (an emoji, a CJK character, a combining mark) comes back as "?"."""

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        return super().submit(script, retry, module_id, _each_value(arguments, _through_latin1),
                              owner, trigger, options)


@memory_entry("arguments_kept_from_body", "LC-036",
              "seed 000 Execution Flow (the worker executes the job's phase)")
class ArgumentsKeptFromBodyRuntime(MemoryRuntime):
    """The record keeps a job's arguments, but the body is run without them, as a worker
    that calls the task function with no arguments does."""

    def _finish_owned(self, job: StoredJob) -> None:
        super()._finish_owned(replace(job, arguments=None))


@memory_entry("queued_anyway", "LC-037",
              "seed 000 Overview and Configuration (async.enabled false runs"
              " synchronously)")
class QueuedAnywayRuntime(MemoryRuntime):
    """Configured with queued execution off (seed 000's async.enabled false), the runtime
    queues every submission anyway and runs it only at a dispatch point."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(replace(settings, queued_execution=True), clock)
