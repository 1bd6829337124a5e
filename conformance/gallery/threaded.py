"""The threaded part of the self-test gallery: the worker of seed 000 with one bug each.

Each broken backend is the `threaded` backend with one method of its worker changed the
way seed 000's worker got it wrong (its review table, B1 and B3) or could have. Jobs really
run in pool threads here, so these entries also prove that the suites catch the bugs
through a concurrent runtime, not only through the deterministic one.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from jobconform.backends import ownership
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.store import CANCELLED, FAILED, QUEUED, RUNNING, StoredJob
from jobconform.backends.threaded import ThreadedBackend, ThreadedRuntime
from jobconform.backends.threaded.worker import _OwnedJob
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

THREADED_GALLERY: list[GalleryEntry] = []


@declares(THREADED_GALLERY)
def threaded_entry(name: str, broken: type[ThreadedRuntime], catches: str,
                   source: str, also_breaks: tuple[str, ...] = ()) -> GalleryEntry:
    """Build the threaded backend on a broken worker, loadable as `<this module>:<name>`."""

    def open_broken(backend: ThreadedBackend, settings: RuntimeSettings,
                    clock: Clock) -> ThreadedRuntime:
        # Every setting the shipped worker takes: one left out (queued execution off, the
        # drain, interrupting cancels, the modules) made each broken worker fail that
        # setting's cases too, under their rules rather than its bug's (issue 33).
        return backend.worker_over(backend.new_store(), settings, clock, runtime=broken)

    entry = opener_entry(__name__, name, ThreadedBackend, "open", open_broken, broken,
                         catches, source)
    return replace(entry, also_breaks=also_breaks)


@threaded_entry("threaded_serial_poll", "LC-010", "seed 000 B3")
class SerialPollWorker(ThreadedRuntime):
    """Each poll claims one queued job however many pool threads are free, so jobs run
    one at a time despite max_workers (seed 000, B3)."""

    def _claim(self, limit: int, now: datetime) -> list[StoredJob]:
        return super()._claim(min(limit, 1), now)


@threaded_entry("threaded_caller_cancels", "LC-013", "seed 000 B1")
class CallerCancelsRunningWorker(ThreadedRuntime):
    """Cancel moves a running job to cancelled from the caller's thread, and only then
    signals the owner's token (seed 000, B1): a body that ignores cancellation is shown
    cancelled while it still runs."""

    def _request_cancellation(self, job: StoredJob) -> bool:
        if job.cancel_requested:
            return False
        moved = self._store.update(job.job_id, RUNNING,
                                   expected={"fencing_token": job.fencing_token},
                                   status=CANCELLED, cancel_requested=True,
                                   finished_at=self._clock.now())
        if moved is None:
            return False
        self._count_outcome(CANCELLED)
        owned = self._owned.get(job.job_id)
        if owned is not None:
            owned.token.request()
        return True


@threaded_entry("threaded_stop_as_shutdown", "LC-022", "seed 000 graceful shutdown")
class ShutdownDropsQueuedWorker(ThreadedRuntime):
    """Shutdown is only the worker's graceful stop: running jobs are cancelled, but jobs
    still queued are left queued (seed 000 §Graceful Shutdown taken as the whole contract)."""

    def shutdown(self) -> None:
        self.stop()


@threaded_entry("threaded_retry_without_backoff", "RT-002", "seed 004 retry delay",
                also_breaks=("RT-010",))
class RetryWithoutBackoffWorker(ThreadedRuntime):
    """A failed attempt goes back to the queue with no time set for its next attempt, so
    the next poll runs it again at once, whatever the policy's delay.

    The delay it drops is the whole of it, the server's retry-after floor too: an attempt
    that failed with a retry-after under a policy whose own delay is 0 starts at once,
    which RT-010 forbids in so many words (the reaper machine, run over every area, finds
    it so). Its delay function is the shipped one, so nothing tells the two apart but the
    policy: the entry declares RT-010 in `also_breaks` (issue 33)."""

    def _retry(self, job_id: str, owned: _OwnedJob, raised: Exception) -> bool:
        retried = super()._retry(job_id, owned, raised)
        if retried:
            self._store.update(job_id, QUEUED, next_attempt_at=None)
        return retried


@threaded_entry("threaded_retry_counted_as_failure", "RT-007", "seed 004 retry counters")
class RetryCountedAsFailureWorker(ThreadedRuntime):
    """Every failed attempt is counted as a failure, also one the policy retries."""

    def _retry(self, job_id: str, owned: _OwnedJob, raised: Exception) -> bool:
        retried = super()._retry(job_id, owned, raised)
        if retried:
            self.processed += 1
            self.failed += 1
        return retried


@threaded_entry("threaded_reaper_sweeps_at_polls", "RP-002", "seed 004 reaper interval")
class ReaperSweepsAtPollsWorker(ThreadedRuntime):
    """The reaper sweeps only when the worker polls for jobs, not when the clock reaches a
    sweep boundary: with no dispatch, expired jobs outlive their sweep."""

    def _next_sweep_at(self) -> datetime | None:
        return None  # the poll thread never wakes for a sweep

    def _poll(self) -> None:
        self._reaper.run_due(self._clock.now())
        super()._poll()


@threaded_entry("threaded_stuck_keeps_slot", "LC-010", "seed 000 stuck detection")
class StuckKeepsSlotWorker(ThreadedRuntime):
    """Stuck detection fails the job in the store but never tells its pool thread, which
    stays blocked in the silent body: the slot stays taken and queued jobs wait."""

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        with self._state:
            failed = 0
            for job in self._silent_jobs(job_timeout_seconds):
                if ownership.fail_stuck(self._store, job, self._clock.now()) is not None:
                    self._count_outcome(FAILED)
                    failed += 1
            return failed


@threaded_entry("threaded_redelivery_drops_body", "RD-001",
                "seed 002 §10.13: re-queue under the same id")
class RedeliveryDropsBodyWorker(ThreadedRuntime):
    """An expired lease re-queues the job but does not hand its body back to the queue, so
    the next claim has nothing to run and fails the job."""

    def _redeliver(self, job: StoredJob) -> int:
        requeued = ownership.redeliver(self._store, job)
        if requeued is None:
            return 0
        self._let_go(job.job_id)
        return 1
