"""The in-memory backend: a deterministic, single-threaded job runtime.

Worker slots are counted, not threads: `dispatch` starts queued jobs into free slots and
`settle` lets every body that can end now end. Each running job has an owner slot; only
the owner's code path (`_finish_owned`) moves a running job to a terminal state, so a
cancel of a running job only raises its token (LC-013).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobconform.backends.protocol import (
    LIFECYCLE,
    CapacityExceeded,
    Clock,
    JobNotCompleted,
    JobNotFound,
    RuntimeSettings,
    RuntimeShutDown,
    TaskScript,
)

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    "queued", "running", "succeeded", "failed", "cancelled"
)
TERMINAL = frozenset({SUCCEEDED, FAILED, CANCELLED})


@dataclass(frozen=True)
class JobSnapshot:
    job_id: str
    status: str
    submitted_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    result: object
    error: str | None


@dataclass(frozen=True)
class HealthSnapshot:
    queued: int
    running: int
    total: int
    processed: int
    failed: int
    cancelled: int


@dataclass
class _Job:
    """The runtime's own mutable record; never handed out (see `_snapshot`)."""

    job_id: str
    status: str
    submitted_at: datetime
    script: TaskScript
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: object = None
    error: str | None = None
    cancel_requested: bool = False


class MemoryRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._settings = settings
        self._clock = clock
        self._jobs: dict[str, _Job] = {}
        self._ids = itertools.count(1)
        self._shut_down = False
        self.processed = 0
        self.failed = 0
        self.cancelled = 0

    # -- submission and dispatch -------------------------------------------------------

    def submit(self, script: TaskScript) -> str:
        if self._shut_down:
            raise RuntimeShutDown("the runtime is shut down; open a new one to submit")
        cap = self._settings.max_tasks
        if cap is not None and len(self._jobs) >= cap:
            raise CapacityExceeded(f"task cap of {cap} held records reached; run cleanup")
        job_id = f"mem-{next(self._ids):06d}"
        self._jobs[job_id] = _Job(job_id, QUEUED, self._now(), script)
        return job_id

    def dispatch(self) -> None:
        free = self._settings.max_concurrent - self._count(RUNNING)
        for job in list(self._jobs.values()):
            if free <= 0:
                break
            if job.status == QUEUED:
                job.status = RUNNING
                job.started_at = self._now()
                free -= 1
        self.settle()

    def settle(self) -> None:
        for job in list(self._jobs.values()):
            if job.status == RUNNING:
                self._finish_owned(job)

    def _finish_owned(self, job: _Job) -> None:
        """The owning worker's step: end the body if it can end now."""
        script = job.script
        if job.cancel_requested and (script.honours_cancellation or script.decided()):
            self._end(job, CANCELLED)
            return
        if not script.decided():
            return
        try:
            result = script.run()
        except Exception as error:
            self._end(job, FAILED, error=f"{type(error).__name__}: {error}")
        else:
            self._end(job, SUCCEEDED, result=result)

    def _end(self, job: _Job, status: str, result: object = None,
             error: str | None = None) -> None:
        if job.status in TERMINAL:
            return  # terminal states absorb late outcomes (LC-003)
        job.status, job.finished_at, job.result, job.error = status, self._now(), result, error
        self._count_outcome(status)

    def _count_outcome(self, status: str) -> None:
        if status == CANCELLED:
            self.cancelled += 1
            return
        self.processed += 1
        if status == FAILED:
            self.failed += 1

    # -- cancellation and shutdown -----------------------------------------------------

    def cancel(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        if job is None or job.status in TERMINAL:
            return False
        if job.status == QUEUED:
            self._end(job, CANCELLED)  # no worker owns it yet
            return True
        if job.cancel_requested:
            return False
        job.cancel_requested = True  # the owner acts on it in settle()
        self.settle()
        return True

    def shutdown(self) -> None:
        for job in self._jobs.values():
            if job.status not in TERMINAL:
                job.cancel_requested = True
                self._end(job, CANCELLED)
        self._shut_down = True

    # -- reads -------------------------------------------------------------------------

    def get(self, job_id: str) -> JobSnapshot | None:
        job = self._jobs.get(job_id)
        return None if job is None else self._snapshot(job)

    def get_result(self, job_id: str) -> object:
        job = self._jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        if job.status != SUCCEEDED:
            raise JobNotCompleted(job_id, job.status)
        return copy.deepcopy(job.result)

    def list_jobs(self, status: str | None = None) -> Sequence[JobSnapshot]:
        return [self._snapshot(job) for job in self._jobs.values()
                if status is None or job.status == status]

    def health(self) -> HealthSnapshot:
        return HealthSnapshot(
            queued=self._count(QUEUED),
            running=self._count(RUNNING),
            total=len(self._jobs),
            processed=self.processed,
            failed=self.failed,
            cancelled=self.cancelled,
        )

    # -- retention ---------------------------------------------------------------------

    def cleanup(self, max_age_seconds: float) -> int:
        cutoff = self._now() - timedelta(seconds=max_age_seconds)
        expired = [job_id for job_id, job in self._jobs.items()
                   if job.status in TERMINAL and (job.finished_at or job.submitted_at) <= cutoff]
        for job_id in expired:
            del self._jobs[job_id]
        return len(expired)

    def close(self) -> None:
        self._jobs.clear()

    # -- helpers -----------------------------------------------------------------------

    def _now(self) -> datetime:
        return self._clock.now()

    def _count(self, status: str) -> int:
        return sum(job.status == status for job in self._jobs.values())

    @staticmethod
    def _snapshot(job: _Job) -> JobSnapshot:
        return JobSnapshot(job.job_id, job.status, job.submitted_at, job.started_at,
                           job.finished_at, copy.deepcopy(job.result), job.error)


class MemoryBackend:
    """Entry point `memory`: the embedded default backend."""

    name = "memory"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE})

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, clock)
