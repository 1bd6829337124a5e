"""Backends that deviate in two or three places at once, for proving adoption (issue 29).

Each entry is the memory backend with a few of the ways real runtimes got the spec wrong:
one accepts submissions the spec refuses (over the task cap, after shutdown, with an
unknown module id), one re-queues a retried job at the tail of its queue, one's delay
function raises (an overflow at a large attempt, "no such jitter mode"), one re-delivers
forever from an inclusive lease boundary (the oracle takes its counts and alerts too). With
exactly its causes listed (`<name>.yaml` beside this module) a run of every suite must exit
0: after a listed divergence the oracle takes over the runtime's whole state, so a
consequence never fails under another requirement. Left one entry out, the run fails on that
one alone (tests/test_adoption.py).

It is not in the self-test gallery: the self-test holds one bug class per backend.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    LIFECYCLE,
    REDELIVERY,
    RETRY,
    STUCK,
    Clock,
    RuntimeSettings,
    TaskScript,
)
from jobconform.backends.store import QUEUED, RUNNING, InMemoryJobStore, StoredJob
from jobconform.conformance.lifecycle.gallery import (
    CancelAlwaysTrueRuntime,
    CapCountsActiveOnlyStore,
    JitterAfterCapRuntime,
    ModuleIdUncheckedRuntime,
    NonRetryableIgnoredRuntime,
    RetriedAttemptCountedRuntime,
    ShutdownLeavesQueuedRuntime,
    StuckInclusiveBoundaryRuntime,
)
from jobconform.conformance.partial_claims import NoJitterRuntime
from jobconform.conformance.reaper.gallery import UncappedRedeliveryRuntime
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import JsonValue

HERE = Path(__file__).parent

# -- the deviations the lifecycle gallery does not have ------------------------------------


class AcceptsAfterShutdownRuntime(MemoryRuntime):
    """Submit is accepted after shutdown: the new job waits in the queue of a runtime
    that has stopped (LC-023)."""

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        shut_down, self._shut_down = self._shut_down, False
        try:
            return super().submit(script, retry, module_id, arguments, owner, trigger,
                                  options)
        finally:
            self._shut_down = shut_down


class OverflowingDelayRuntime(MemoryRuntime):
    """The delay is computed as a float power before the cap is applied, which raises
    OverflowError at a large attempt number (RT-002)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        float(policy.backoff_multiplier) ** attempt  # raises OverflowError past ~1e308
        return super().compute_delay_ms(policy, attempt, jitter, draw, previous_ms,
                                        retry_after_ms)


class FixedMultiplierRuntime(MemoryRuntime):
    """The backoff always doubles, whatever multiplier the policy gives (RT-002)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        return super().compute_delay_ms(replace(policy, backoff_multiplier=2.0), attempt,
                                        jitter, draw, previous_ms, retry_after_ms)


class RetryAfterIgnoredRuntime(MemoryRuntime):
    """The delay function never sees a server's retry-after, so it is no floor: a job
    retried with a retry-after longer than its own delay starts again early (RT-010), as
    tenacity's wait strategies do."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        return super().compute_delay_ms(policy, attempt, jitter, draw, previous_ms, None)


class InclusiveLeaseRuntime(MemoryRuntime):
    """A lease lapses once the job has been silent for the lease or longer: a job exactly
    the lease old is re-delivered (RD-005), as kombu's Redis visibility sweep does."""

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        return super().expire_leases(lease_seconds - 1e-6)  # the clock's resolution


class TailRequeueStore(InMemoryJobStore):
    """A retried job goes back to the tail of the queue, behind every job waiting then,
    instead of keeping its place in submission order. The kit's blame names a due retried
    job left queued RT-003 (a retry starts at the next dispatch once due), so its lists
    name that."""

    def __init__(self) -> None:
        super().__init__()
        self._places: dict[str, int] = {}  # job id -> its place in the queue
        self._next_place = 0

    def _queue_at_tail(self, job_id: str) -> None:
        self._places[job_id] = self._next_place
        self._next_place += 1

    def add(self, job: StoredJob, max_records: int | None) -> None:
        super().add(job, max_records)
        self._queue_at_tail(job.job_id)

    def update(self, job_id: str, expected_status: str, *,
               expected: Any = None, **changes: Any) -> StoredJob | None:
        updated = super().update(job_id, expected_status, expected=expected, **changes)
        if updated is not None and expected_status == RUNNING and updated.status == QUEUED:
            self._queue_at_tail(job_id)
        return updated

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        with self._lock:
            waiting = sorted((job for job in self._jobs.values() if job.status == QUEUED
                              and (job.next_attempt_at is None or job.next_attempt_at <= now)),
                             key=lambda job: self._places[job.job_id])
            claimed = [replace(job, status=RUNNING, started_at=now, worker_id=worker_id,
                               last_heartbeat=now, fencing_token=job.fencing_token + 1)
                       for job in waiting[:limit]]
            for job in claimed:
                self._jobs[job.job_id] = job
            return claimed


class DueTailRequeueStore(TailRequeueStore):
    """A retried job joins the tail of the queue only when its retry comes due, as a
    scheduler that moves due retries into the queue does (huey's, RQ's): the due retries
    queue behind every job waiting then, in the order they came due."""

    def __init__(self) -> None:
        super().__init__()
        self._scheduled: set[str] = set()  # retried jobs not due yet: not in the queue

    def update(self, job_id: str, expected_status: str, *,
               expected: Any = None, **changes: Any) -> StoredJob | None:
        updated = super().update(job_id, expected_status, expected=expected, **changes)
        if updated is not None and expected_status == RUNNING and updated.status == QUEUED:
            self._scheduled.add(job_id)
        return updated

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        with self._lock:
            due = sorted((self._jobs[job_id] for job_id in self._scheduled
                          if self._jobs[job_id].status != QUEUED
                          or (self._jobs[job_id].next_attempt_at or now) <= now),
                         key=lambda job: (job.next_attempt_at or now, self._places[job.job_id]))
            for job in due:
                self._scheduled.discard(job.job_id)
                self._queue_at_tail(job.job_id)
        return super().claim(worker_id, limit, now)


# -- the gallery -----------------------------------------------------------------------------


@dataclass(frozen=True)
class AdoptionEntry:
    """One backend with several deviations and where its list is."""

    name: str
    target: str  # `module:attr`
    causes: tuple[str, ...]  # the requirements its list names, one per cause
    profile: str = "canonical"
    areas: tuple[str, ...] = ("lifecycle", "retry")

    @property
    def deviations_file(self) -> Path:
        return HERE / f"adoption_{self.name}.yaml"


def _entry(name: str, runtime: tuple[type[MemoryRuntime], ...], causes: tuple[str, ...],
           store: type[InMemoryJobStore] | None = None, profile: str = "canonical",
           areas: tuple[str, ...] = ("lifecycle", "retry")) -> AdoptionEntry:
    """The memory backend whose runtime has all of `runtime`'s deviations (they live in
    different methods) over `store`, loadable as `<this module>:<name>`."""
    runtime_type: type[MemoryRuntime] = (
        runtime[0] if len(runtime) == 1
        else type(f"{name.title().replace('_', '')}Runtime", runtime, {}))
    claims = frozenset({LIFECYCLE, RETRY, *((STUCK,) if "stuck" in areas else ()),
                        *((REDELIVERY,) if "redelivery" in areas else ())})

    class Backend(MemoryBackend):
        capabilities = claims

        def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
            if store is None:
                return runtime_type(settings, clock)
            return runtime_type(settings, clock, store=store())

    Backend.name = f"gallery.adoption.{name}"
    Backend.profile = profile
    Backend.__name__ = Backend.__qualname__ = name
    globals()[name] = Backend
    return AdoptionEntry(name, f"{__name__}:{name}", causes, profile, areas)


ADOPTION_GALLERY = (
    _entry("over_cap_with_late_jitter", (JitterAfterCapRuntime,), ("LC-009", "RT-009"),
           store=CapCountsActiveOnlyStore),
    _entry("open_after_shutdown", (AcceptsAfterShutdownRuntime, ShutdownLeavesQueuedRuntime),
           ("LC-023", "LC-022")),
    _entry("over_cap_after_shutdown", (AcceptsAfterShutdownRuntime, CancelAlwaysTrueRuntime),
           ("LC-009", "LC-023", "LC-015"), store=CapCountsActiveOnlyStore),
    _entry("unknown_module_accepted", (ModuleIdUncheckedRuntime, CancelAlwaysTrueRuntime),
           ("LC-027", "LC-015"), profile="task-manager"),
    _entry("overflowing_delay", (OverflowingDelayRuntime, StuckInclusiveBoundaryRuntime),
           ("RT-002", "ST-003"), areas=("lifecycle", "retry", "stuck")),
    _entry("no_jitter_modes", (NoJitterRuntime, CancelAlwaysTrueRuntime),
           ("RT-009", "LC-015")),
    _entry("tail_requeue", (CancelAlwaysTrueRuntime,), ("RT-003", "LC-015"),
           store=TailRequeueStore),
    _entry("due_tail_requeue", (CancelAlwaysTrueRuntime,), ("RT-003", "LC-015"),
           store=DueTailRequeueStore),
    _entry("every_error_retried", (NonRetryableIgnoredRuntime, JitterAfterCapRuntime),
           ("RT-005", "RT-009")),
    _entry("fixed_multiplier", (FixedMultiplierRuntime, RetriedAttemptCountedRuntime),
           ("RT-002", "RT-007")),
    _entry("retry_after_ignored", (RetryAfterIgnoredRuntime, CancelAlwaysTrueRuntime),
           ("RT-010", "LC-015")),
    _entry("uncapped_inclusive_lease", (UncappedRedeliveryRuntime, InclusiveLeaseRuntime),
           ("RD-002", "RD-005"), areas=("redelivery",)),
)
