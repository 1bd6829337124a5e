"""The self-test gallery: deliberately broken backends, one known bug class each.

Each broken runtime is the memory runtime with one method changed the way a real
runtime got it wrong. `jobconform selftest` runs the suites against every one of them
and proves each is caught, by the requirement named in `catches`. A suite that catches
none of these is worthless, whatever it counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from jobconform.backends.memory import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    JobSnapshot,
    MemoryBackend,
    MemoryRuntime,
    _Job,
)
from jobconform.backends.protocol import CapacityExceeded, Clock, RuntimeSettings, TaskScript


class LateCompletionRuntime(MemoryRuntime):
    """The worker writes its body's outcome even after the job was cancelled."""

    def settle(self) -> None:
        super().settle()
        for job in self._jobs.values():
            if job.status == CANCELLED and job.started_at and job.script.decided():
                try:
                    job.result, job.status = job.script.run(), SUCCEEDED
                except Exception as error:
                    job.error, job.status = f"{type(error).__name__}: {error}", FAILED
                job.finished_at = self._now()


class CallerCancelsRunningRuntime(MemoryRuntime):
    """Cancel moves a running job itself while its worker also moves it (seed 000, B1).

    The worker's own transition then fails on the terminal job, and its error handler
    records the job as failed.
    """

    def cancel(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        if job is not None and job.status == RUNNING and not job.cancel_requested:
            job.cancel_requested = True
            job.status, job.finished_at = CANCELLED, self._now()
            self.cancelled += 1
            self.settle()
            return True
        return super().cancel(job_id)

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._transition_errors: set[str] = set()

    def settle(self) -> None:
        for job in self._jobs.values():
            owner_acts = job.script.honours_cancellation or job.script.decided()
            caller_moved = job.cancel_requested and job.status == CANCELLED and job.started_at
            if caller_moved and owner_acts and job.job_id not in self._transition_errors:
                # The worker's own running -> cancelled raises on the terminal job, and
                # its error handler counts the job as a failure.
                self._transition_errors.add(job.job_id)
                self.failed += 1
                self.processed += 1
        super().settle()


class CancelCountedAsProcessedRuntime(MemoryRuntime):
    """A cancelled job is recorded as processed too (seed 000, B2)."""

    def _count_outcome(self, status: str) -> None:
        super()._count_outcome(status)
        if status == CANCELLED:
            self.processed += 1


class NaiveTimestampRuntime(MemoryRuntime):
    """Timestamps lose their timezone: `datetime.now()` without UTC (seed 000, B4)."""

    def _now(self) -> datetime:
        return super()._now().replace(tzinfo=None)


class LiveRecordRuntime(MemoryRuntime):
    """get and list hand out the runtime's own record, not a copy (seed 004, D-23)."""

    @staticmethod
    def _snapshot(job: _Job) -> JobSnapshot:
        return job  # type: ignore[return-value]


class CleanupRemovesActiveRuntime(MemoryRuntime):
    """Cleanup removes old jobs whatever their status, running ones included."""

    def cleanup(self, max_age_seconds: float) -> int:
        cutoff = self._now() - timedelta(seconds=max_age_seconds)
        expired = [job_id for job_id, job in self._jobs.items()
                   if (job.finished_at or job.submitted_at) <= cutoff]
        for job_id in expired:
            del self._jobs[job_id]
        return len(expired)


class CleanupExclusiveBoundaryRuntime(MemoryRuntime):
    """Cleanup keeps a job exactly max_age old: `>` where the boundary is inclusive."""

    def cleanup(self, max_age_seconds: float) -> int:
        cutoff = self._now() - timedelta(seconds=max_age_seconds)
        expired = [job_id for job_id, job in self._jobs.items()
                   if job.status in TERMINAL and (job.finished_at or job.submitted_at) < cutoff]
        for job_id in expired:
            del self._jobs[job_id]
        return len(expired)


class CapCountsActiveOnlyRuntime(MemoryRuntime):
    """The task cap counts only active jobs, so retained records grow without bound."""

    def submit(self, script: TaskScript) -> str:
        cap = self._settings.max_tasks
        active = sum(job.status not in TERMINAL for job in self._jobs.values())
        if cap is not None and active >= cap and not self._shut_down:
            raise CapacityExceeded(f"task cap of {cap} active jobs reached")
        saved, self._settings = self._settings, replace(self._settings, max_tasks=None)
        try:
            return super().submit(script)
        finally:
            self._settings = saved


class OverbookingRuntime(MemoryRuntime):
    """Dispatch starts every queued job, ignoring the concurrency limit."""

    def dispatch(self) -> None:
        for job in self._jobs.values():
            if job.status == QUEUED:
                job.status, job.started_at = RUNNING, self._now()
        self.settle()


class CancelledJobStartsRuntime(MemoryRuntime):
    """Dispatch pops jobs from its queue without re-checking them, so a job cancelled
    while queued still starts its body."""

    def dispatch(self) -> None:
        free = self._settings.max_concurrent - self._count(RUNNING)
        for job in self._jobs.values():
            if free > 0 and job.started_at is None and job.status in (QUEUED, CANCELLED):
                job.status, job.started_at = RUNNING, self._now()
                free -= 1
        self.settle()


class CancelAlwaysTrueRuntime(MemoryRuntime):
    """Cancel answers true for a job that is already terminal."""

    def cancel(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        return super().cancel(job_id) or (job is not None and job.status in TERMINAL)


class MessageOnlyErrorRuntime(MemoryRuntime):
    """A failed job records only the exception's message, without its type name."""

    def _end(self, job: _Job, status: str, result: object = None,
             error: str | None = None) -> None:
        if error is not None:
            error = error.split(": ", 1)[1]
        super()._end(job, status, result, error)


class ShutdownLeavesQueuedRuntime(MemoryRuntime):
    """Shutdown cancels running jobs but forgets the ones still queued."""

    def shutdown(self) -> None:
        for job in self._jobs.values():
            if job.status == RUNNING:
                job.cancel_requested = True
                self._end(job, CANCELLED)
        self._shut_down = True


class NewestFirstListRuntime(MemoryRuntime):
    """Listing returns the newest job first instead of submission order."""

    def list_jobs(self, status: str | None = None) -> Sequence[JobSnapshot]:
        return list(reversed(super().list_jobs(status)))


@dataclass(frozen=True)
class GalleryEntry:
    name: str
    runtime: type[MemoryRuntime]
    catches: str  # the requirement that must name this bug
    source: str

    @property
    def bug(self) -> str:
        return " ".join((self.runtime.__doc__ or "").split())

    @property
    def target(self) -> str:
        """The `module:attr` that loads this broken backend."""
        return f"{__name__}:{self.name}"


GALLERY = (
    GalleryEntry("late_completion", LateCompletionRuntime, "LC-003", "anchors: River"),
    GalleryEntry("caller_cancels_running", CallerCancelsRunningRuntime, "LC-013", "seed 000 B1"),
    GalleryEntry("cancel_counted_as_processed", CancelCountedAsProcessedRuntime, "LC-025",
                 "seed 000 B2"),
    GalleryEntry("naive_timestamps", NaiveTimestampRuntime, "LC-005", "seed 000 B4"),
    GalleryEntry("live_records", LiveRecordRuntime, "LC-016", "seed 004 D-23"),
    GalleryEntry("cleanup_removes_active", CleanupRemovesActiveRuntime, "LC-019",
                 "seed 004 cleanup"),
    GalleryEntry("cleanup_exclusive_boundary", CleanupExclusiveBoundaryRuntime, "LC-020",
                 "seed 004 cleanup"),
    GalleryEntry("cap_counts_active_only", CapCountsActiveOnlyRuntime, "LC-009",
                 "anchors: task cap trap"),
    GalleryEntry("overbooking", OverbookingRuntime, "LC-010", "seed 000 B3"),
    GalleryEntry("cancelled_job_starts", CancelledJobStartsRuntime, "LC-012",
                 "seed 004 concurrency model"),
    GalleryEntry("cancel_always_true", CancelAlwaysTrueRuntime, "LC-015", "seed 004 cancel"),
    GalleryEntry("message_only_error", MessageOnlyErrorRuntime, "LC-007", "seed 000 errors"),
    GalleryEntry("shutdown_leaves_queued", ShutdownLeavesQueuedRuntime, "LC-022",
                 "seed 004 shutdown"),
    GalleryEntry("newest_first_list", NewestFirstListRuntime, "LC-018", "seed 004 list_tasks"),
)


def _backend_class(entry: GalleryEntry) -> type[MemoryBackend]:
    class BrokenBackend(MemoryBackend):
        name = f"gallery.{entry.name}"
        __doc__ = entry.bug

        def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
            return entry.runtime(settings, clock)

    BrokenBackend.__name__ = BrokenBackend.__qualname__ = entry.name
    return BrokenBackend


# Each entry is loadable as `jobconform.conformance.gallery:<name>`.
for _entry in GALLERY:
    globals()[_entry.name] = _backend_class(_entry)
