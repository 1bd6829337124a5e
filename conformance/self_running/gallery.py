"""The self-running gallery: the threaded worker, opened self-running, with its own
clockwork broken the ways issue 32 names.

`GALLERY` joins the self-test: every suite must catch each entry, naming the requirement
in `catches`. Each is the `threaded` backend whose `open_self_running` opens a worker that
acts by itself, but too late, too early or never, or whose `open_scheduling` opens such a
scheduler (SR-006, or SR-009 for the ends it learns), whose `open_breaker` such a
backstop (SR-007), or whose `open_reminders` such reminders (SR-008).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from jobconform.backends.breaker.memory import InMemoryBreakerStore
from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.breaker.threaded import PooledBreakerRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.reminders.store import StoredReminder
from jobconform.backends.reminders.threaded import ThreadedReminderRuntime
from jobconform.backends.scheduling.runtime import StoredExecution, StoredSchedule
from jobconform.backends.scheduling.threaded import ThreadedSchedulingRuntime
from jobconform.backends.self_running import Clockwork
from jobconform.backends.store import QUEUED
from jobconform.backends.threaded import ThreadedBackend, ThreadedRuntime
from jobconform.backends.threaded.backend import self_running_config, waitable
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.worker import _OwnedJob
from jobconform.conformance.gallery import (
    GalleryEntry,
    bug_text,
    declares,
    over_new_store,
    register,
)
from jobconform.reference.breaker.oracle import BreakerSettings


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


class TwoGridRetryWorker(ThreadedRuntime):
    """Its scheduler moves a due retry to the queue only at its next whole-second tick,
    after the workers' poll at that tick, so a retry due between two ticks starts at the
    poll after, up to two poll intervals late; one due on a tick starts on time (as
    huey's Scheduler and worker loops, each on a one-second grid of its own)."""

    def _retry(self, job_id: str, owned: _OwnedJob, raised: Exception) -> bool:
        retried = super()._retry(job_id, owned, raised)
        job = self._store.get(job_id)
        due = None if job is None else job.next_attempt_at
        if retried and due is not None and due.microsecond:
            self._store.update(job_id, QUEUED,
                               next_attempt_at=due.replace(microsecond=0) + timedelta(seconds=2))
        return retried


# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def breaker_entry(name: str, breaker: type[PooledBreakerRuntime], catches: str,
                  source: str) -> GalleryEntry:
    """The threaded backend whose breaker is `breaker`; its job runtime is sound."""

    class BrokenBackend(ThreadedBackend):
        def open_breaker(self, clock: Clock, settings: BreakerSettings) -> PooledBreakerRuntime:
            return breaker(StoreBreakerRuntime(InMemoryBreakerStore(), clock, settings,
                                               BreakerDeployment()))

    return register(__name__, name, BrokenBackend, bug_text(breaker), catches, source)


# The threaded backend whose scheduler or reminders are the broken class; its job runtime
# is sound.
scheduling_entry = over_new_store(GALLERY, ThreadedBackend, "open_scheduling",
                                  "new_schedule_store")
reminders_entry = over_new_store(GALLERY, ThreadedBackend, "open_reminders",
                                 "new_reminder_store")


@scheduling_entry("self_running_schedule_fires_only_when_read", "SR-006",
                  "seed 002 §10.1: schedules fire at their times, unattended")
class FiresWhenReadScheduler(ThreadedSchedulingRuntime):
    """It fires a due schedule only when someone reads its schedules or their history, as
    a poor man's cron fires on a page visit: its thread never fires, so a scheduler left
    alone fires nothing, however long its fire times have passed."""

    def _fire_due(self, now: datetime) -> None:
        if threading.current_thread().name != "scheduler":
            super()._fire_due(now)

    def _next_wake(self) -> datetime | None:
        return None  # nothing for its thread to wake for

    def get(self, schedule_id: str) -> StoredSchedule | None:
        self._fire_on_visit()
        return super().get(schedule_id)

    def list_schedules(self) -> Sequence[StoredSchedule]:
        self._fire_on_visit()
        return super().list_schedules()

    def history(self, schedule_id: str) -> Sequence[StoredExecution]:
        self._fire_on_visit()
        return super().history(schedule_id)

    def _fire_on_visit(self) -> None:
        with self._state:
            self._fire_due(self._clock.now())


# How far ahead the early scheduler looks.
LOOK_AHEAD = timedelta(seconds=1)


@scheduling_entry("self_running_schedule_fires_early", "SR-006",
                  "seed 002 §10.6: the scheduler fires each fire time, never early")
class LookAheadScheduler(ThreadedSchedulingRuntime):
    """It takes whatever falls due within the next second as due now, to save a wake-up:
    its thread wakes a second before each fire time and fires it then, early."""

    def _fire_due(self, now: datetime) -> None:
        super()._fire_due(now + LOOK_AHEAD)

    def _next_wake(self) -> datetime | None:
        due = super()._next_wake()
        return None if due is None else due - LOOK_AHEAD


@scheduling_entry("self_running_schedule_never_learns_ends", "SR-009",
                  "seed 002 §10.6: the scheduler polls the store until the"
                  " execution completes")
class EndsOnlyWhenToldScheduler(ThreadedSchedulingRuntime):
    """It records how an execution ended only when a caller tells it (end_execution):
    told to poll for the ends itself it never does, so a history left alone keeps every
    dispatched execution without an end, as a scheduler that fires and forgets for good."""

    def start_end_polls(self, interval_seconds: float) -> None:
        pass


# How many poll intervals apart the slow scheduler polls for ends.
SLOW_END_POLLS = 10


@scheduling_entry("self_running_schedule_learns_ends_late", "SR-009",
                  "seed 002 §10.6: it polls every poll_interval seconds")
class SlowEndPollsScheduler(ThreadedSchedulingRuntime):
    """It polls for the ends of its executions ten poll intervals apart (the seed's 10 s
    POLL_INTERVAL default against a 1 s poll interval), so it learns an end up to ten
    poll intervals after the execution ended."""

    def start_end_polls(self, interval_seconds: float) -> None:
        super().start_end_polls(interval_seconds * SLOW_END_POLLS)


@breaker_entry("self_running_backstop_never_sweeps", "SR-007",
               "seed 002 §10.11: the 60 s run_maintenance backstop")
class BackstopOnlyWhenCalledBreaker(PooledBreakerRuntime):
    """Its backstop sweeps only when a caller calls backstop(): told to sweep by itself
    it starts no sweeper, so a lost drain's work waits for the day it takes to expire."""

    def start_backstop(self, interval_seconds: float) -> None:
        pass


@breaker_entry("self_running_backstop_sweeps_early", "SR-007",
               "seed 002 §10.11: the backstop runs on the maintenance interval")
class BackstopOnCooldownBreaker(PooledBreakerRuntime):
    """Its sweeper runs every half interval (on the breaker's 30 s base cooldown rather
    than the 60 s maintenance interval): it sweeps before the boundaries, twice as often
    as the maintenance schedule says."""

    def start_backstop(self, interval_seconds: float) -> None:
        super().start_backstop(interval_seconds / 2)


@reminders_entry("self_running_reminder_fires_only_when_listed", "SR-008",
                 "seed 002 §10.14: when the timer fires, Trinity dispatches")
class RemindersFireWhenListed(ThreadedReminderRuntime):
    """It fires a due reminder only when someone reads the reminders (get,
    list_reminders), as a list that brings itself up to date when it is viewed: its
    scheduler thread never sleeps until a due time, so reminders left alone never fire."""

    def _fire_due(self, now: datetime) -> bool:
        if threading.current_thread().name == "reminder-scheduler":
            return False
        return super()._fire_due(now)

    def _next_due(self) -> datetime | None:
        return None  # nothing for its thread to wake for

    def get(self, reminder_id: str) -> StoredReminder | None:
        self._fire_on_view()
        return super().get(reminder_id)

    def list_reminders(self, status: str | None = "pending") -> Sequence[StoredReminder]:
        self._fire_on_view()
        return super().list_reminders(status)

    def _fire_on_view(self) -> None:
        with self._state:
            self._fire_due(self._clock.now())


@reminders_entry("self_running_reminder_fires_early", "SR-008",
                 "seed 002 §10.14: a one-shot DateTrigger per pending reminder")
class LookAheadReminders(ThreadedReminderRuntime):
    """It takes a reminder due within the next second as due now, to save a wake-up: its
    scheduler wakes a second before each due time and dispatches the reminder then,
    early."""

    def _fire_due(self, now: datetime) -> bool:
        return super()._fire_due(now + LOOK_AHEAD)

    def _next_due(self) -> datetime | None:
        due = super()._next_due()
        return None if due is None else due - LOOK_AHEAD


def _entry(name: str, bug: str, catches: str, source: str,
           worker: type[ThreadedRuntime] = ThreadedRuntime,
           recovery_every_polls: int = 1, starts_reaper: bool = True) -> GalleryEntry:
    """The threaded backend whose self-running worker is `worker`, with its lease passes
    `recovery_every_polls` poll intervals apart and its reaper started at the opening
    unless `starts_reaper` is false; loadable as `<this module>:<name>`."""

    class BrokenBackend(ThreadedBackend):
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

    return register(__name__, name, BrokenBackend, bug, catches, source)


GALLERY += [
    _entry("self_running_never_detects_stuck", bug_text(StuckOnlyWhenAskedWorker), "SR-002",
            "seed 000 Stuck Job Detection: automatically marked as failed",
            worker=StuckOnlyWhenAskedWorker),
    _entry("self_running_late_redelivery",
               "Its lease passes run ten poll intervals apart, so a job whose lease lapsed is"
               " re-delivered up to ten poll intervals late.", "SR-003",
               "seed 002 §10.13: the lease reaper brings lost work back",
               recovery_every_polls=10),
    _entry("self_running_early_retry", bug_text(EarlyRetryWorker),
               "SR-004", "seed 004 §1.2: the next attempt waits out the delay",
               worker=EarlyRetryWorker),
    _entry("self_running_retry_on_two_grids", bug_text(TwoGridRetryWorker), "SR-004",
            "seed 004 §1.2: the next attempt starts once its delay has passed",
            worker=TwoGridRetryWorker),
    _entry("self_running_reaper_never_sweeps",
               "Its reaper sweeps only once start_reaper is called: opened self-running it"
               " never starts, so an ended job is kept for good however long its TTL has"
               " passed.", "SR-005",
               "seed 004 §1.3: the reaper deletes expired terminal jobs on its schedule",
               starts_reaper=False),
]
