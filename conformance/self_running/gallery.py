"""The self-running gallery: the threaded worker, opened self-running, with its own
clockwork broken the ways issue 32 names.

`GALLERY` joins the self-test: every suite must catch each entry, naming the requirement
in `catches`. Each is the `threaded` backend whose `open_self_running` opens a worker that
acts by itself, but too late, too early or never.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.self_running import Clockwork
from jobconform.backends.store import QUEUED
from jobconform.backends.threaded import ThreadedBackend, ThreadedRuntime
from jobconform.backends.threaded.backend import self_running_config, waitable
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.worker import _OwnedJob
from jobconform.conformance.gallery import GalleryEntry


class StuckOnlyWhenAskedWorker(ThreadedRuntime):
    """Its polls never fail a silent job: stuck detection runs only when a caller asks for
    it (detect_stuck), so left to itself a hung job holds its slot for good."""

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        if threading.current_thread().name.endswith("-poll"):
            return 0  # the worker's own pass: skipped
        return super().detect_stuck(job_timeout_seconds)


class EarlyRetryWorker(ThreadedRuntime):
    """A retried attempt is due one second before the policy's delay has passed: the
    retry starts a poll interval early (a delay measured from the attempt's start)."""

    def _retry(self, job_id: str, owned: _OwnedJob, raised: Exception) -> bool:
        retried = super()._retry(job_id, owned, raised)
        job = self._store.get(job_id)
        if retried and job is not None and job.next_attempt_at is not None:
            self._store.update(job_id, QUEUED,
                               next_attempt_at=job.next_attempt_at - timedelta(seconds=1))
        return retried


def _entry(name: str, bug: str, catches: str, source: str,
           worker: type[ThreadedRuntime] = ThreadedRuntime,
           recovery_every_polls: int = 1, starts_reaper: bool = True) -> GalleryEntry:
    """The threaded backend whose self-running worker is `worker`, with its lease passes
    `recovery_every_polls` poll intervals apart and its reaper started at the opening
    unless `starts_reaper` is false; loadable as `<this module>:<name>`."""

    class BrokenBackend(ThreadedBackend):
        __doc__ = bug

        def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                              clockwork: Clockwork) -> ThreadedRuntime:
            config: WorkerConfig = self_running_config(settings, clockwork)
            config = replace(config, recovery_interval=(clockwork.poll_interval_seconds
                                                        * recovery_every_polls))
            runtime = worker(self.new_store(), waitable(clock), config,
                             max_tasks=settings.max_tasks,
                             reaper_ttl_seconds=settings.reaper_ttl_seconds,
                             reaper_sweep_interval_ms=settings.reaper_sweep_interval_ms,
                             max_redelivery=settings.max_redelivery)
            if starts_reaper:
                runtime.start_reaper()
            return runtime

    BrokenBackend.name = f"gallery.{name}"
    BrokenBackend.__name__ = BrokenBackend.__qualname__ = name
    globals()[name] = BrokenBackend
    return GalleryEntry(name, f"{__name__}:{name}", bug, catches, source)


GALLERY = (
    _entry("self_running_never_detects_stuck", " ".join(
        (StuckOnlyWhenAskedWorker.__doc__ or "").split()), "SR-002",
        "seed 000 Stuck Job Detection: automatically marked as failed",
        worker=StuckOnlyWhenAskedWorker),
    _entry("self_running_late_redelivery",
           "Its lease passes run ten poll intervals apart, so a job whose lease lapsed is"
           " re-delivered up to ten poll intervals late.", "SR-003",
           "seed 002 §10.13: the lease reaper brings lost work back",
           recovery_every_polls=10),
    _entry("self_running_early_retry", " ".join((EarlyRetryWorker.__doc__ or "").split()),
           "SR-004", "seed 004 §1.2: the next attempt waits out the delay",
           worker=EarlyRetryWorker),
    _entry("self_running_reaper_never_sweeps",
           "Its reaper sweeps only once start_reaper is called: opened self-running it"
           " never starts, so an ended job is kept for good however long its TTL has"
           " passed.", "SR-005",
           "seed 004 §1.3: the reaper deletes expired terminal jobs on its schedule",
           starts_reaper=False),
)
