"""One-shot jobs on pgqueuer's queue, for `pgqueuer_schedules`: a job deferred by an interval
(`enqueue(..., execute_after=...)`: due at the database's NOW() plus it) and run by a
QueueManager on the scheduler's connection; its body is the fire. The QueueManager runs only
while a one-shot job waits: its job-log buffer flushes every 0.1 s, ten loop steps for each
virtual second, which the scheduling cases' days of virtual time would make millions."""

import asyncio
from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace

from pgqueuer import Queries, QueueManager
from pgqueuer.domain.models import Job
from pgqueuer.domain.types import Channel

from jobconform.backends.scheduling.runtime import StoredSchedule
from jobconform.reference.scheduling.oracle import Trigger

FOREVER = timedelta(days=3650)  # no idle polls, no job heartbeats: NOTIFYs and ETAs wake it


class Deferrals:
    """One scheduler's QueueManager for the one-shot jobs of `shared.store`."""

    def __init__(self, shared: SimpleNamespace, queries: Queries) -> None:
        self.shared, self.queries = shared, queries
        self.task: asyncio.Task[None] | None = None

    def defer(self, once: StoredSchedule) -> None:
        delay = max(once.next_fire_at - self.shared.now(), timedelta(0))  # type: ignore[operator]
        (self.shared.jobs[once.schedule_id],) = self.shared.loop.run(self.queries.enqueue(
            "once", once.schedule_id.encode(), execute_after=delay), name="enqueue")

    def cancel(self, schedule_id: str) -> None:  # pgqueuer's cancel of its queued job
        self.shared.loop.run(self.queries.mark_job_as_cancelled(
            [self.shared.jobs[schedule_id]]), name="cancel")

    def work(self) -> None:
        """Start the QueueManager if a one-shot job waits and autonomy is on (it runs from
        the next settle, so that a job due at once fires there), else stop it."""
        if not self.shared.autonomy or all(s.kind == "cron" or s.next_fire_at is None
                                           for s in self.shared.store.list()):
            return self.stop()
        if self.task is None:  # it picks at once what is due, then sleeps until the next ETA
            manager = QueueManager(self.queries, Channel(self.shared.schema))
            manager.entrypoint("once")(self.fire)
            self.task = self.shared.loop.spawn(manager.run(
                FOREVER, batch_size=1, heartbeat_timeout=FOREVER,
                log_aggregation_interval=timedelta(0)), name="QueueManager")

    def stop(self) -> None:  # cancelled: nothing more written
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self.shared.loop.settle()

    async def fire(self, job: Job) -> None:
        held = self.shared.store.get((job.payload or b"").decode())
        if held is not None:  # not deleted
            self.shared.held.run(held, held.next_fire_at, Trigger.SCHEDULE)
            self.shared.store.replace(replace(held, next_fire_at=None))
