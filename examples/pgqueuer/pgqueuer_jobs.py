"""pgqueuer itself (its asyncio QueueManager on the real PostgreSQL) against lifecycle.

Each runtime: a scratch schema and NOTIFY channel, dropped at close; a connection whose NOW()
is the virtual clock's (`pgqueuer_clock`); `QueueManager.run` on the `VirtualLoop` (settle
waits for its queries: `InFlight`). Its entrypoint is the body: the `DispatchGate` (the
concurrency limit: pgqueuer's polls every 0.1 s while a job waits for a slot), then the
harness's decision. A cancel is `mark_job_as_cancelled`: its NOTIFY cancels the context.
"""

import itertools
from datetime import timedelta
from typing import Any

from pgqueuer import QueueManager
from pgqueuer.domain.models import Context, Job
from pgqueuer.domain.types import Channel
from pgqueuer_clock import any_busy, drop, open_queries, scratch_schema

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, InFlight, VirtualLoop, WallClock
from jobconform.bridges import translate as kit


class PgqueuerRuntime:
    poll_every = timedelta(days=3650)  # its dequeue_timeout (default 30 s): no idle polls
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        connections: list[InFlight] = []
        self.loop = loop = VirtualLoop(clock, self._wall.move_to, busy=any_busy(connections))
        self.schema = name = scratch_schema()
        self.queries = open_queries(loop, name, connections, create=True)
        self.connection = connections[0]
        self._jobs = jobs = kit.records_on_wall(settings)
        self._gate, self._ranks = DispatchGate(slots=settings.max_concurrent), itertools.count()
        self._scripts: dict[str, tuple[int, TaskScript, Any]] = {}  # and pgqueuer's job id
        self._decisions, self.get, self.get_result = kit.Decisions(), jobs.get, jobs.get_result
        self.list_jobs, self.cleanup, self.health = jobs.list_jobs, jobs.cleanup, jobs.health
        self.qm = QueueManager(self.queries, Channel(name))
        self.qm.entrypoint("body", accepts_context=True)(self._body)
        loop.spawn(self.qm.run(self.poll_every, batch_size=1, heartbeat_timeout=timedelta(
            days=3650), log_aggregation_interval=timedelta(0)))  # no beats, no aggregation
        self.settle()

    async def _body(self, job: Job, context: Context) -> None:
        job_id = (job.payload or b"").decode()
        rank, script, _ = self._scripts[job_id]
        if not await self._gate.wait_async(job_id, rank):
            return
        try:
            self._jobs.update(job_id, "running")
            with context.cancellation:  # pgqueuer's cancel (its NOTIFY) ends this wait
                await self._decisions.wait(job_id, script)
            while not script.decided() and not script.honours_cancellation:
                await self._decisions.wait(job_id, script)  # a body that ignores it goes on
            if not script.decided() or kit.cancellation_wins(self._gate, job_id, script):
                return self._jobs.update(job_id, "cancelled")
            try:
                self._jobs.update(job_id, "succeeded", result=script.run())
            except Exception as error:  # pgqueuer logs it too, as an exception
                self._failed(job, script, error)
                raise
        finally:
            self._gate.finished(job_id)  # its slot is free at the next dispatch

    def _failed(self, job: Job, script: TaskScript, error: Exception) -> None:  # pgqueuer_retry
        self._jobs.update((job.payload or b"").decode(), "failed", error=kit.error_text(error))

    def _entrypoint(self, retry: Any) -> tuple[str, int]:  # and the retries it allows
        return "body", 0

    def submit(self, script: TaskScript, retry: object = None) -> str:
        rank, (entrypoint, retries) = next(self._ranks), self._entrypoint(retry)
        job_id = self._jobs.add(f"job-{rank}", retries).job_id
        self._scripts[job_id] = (rank, script, *self.loop.run(
            self.queries.enqueue(entrypoint, job_id.encode())))  # and pgqueuer's id
        self.settle()
        return job_id

    def settle(self) -> None:
        self._decisions.release_decided()
        self.loop.settle()

    def dispatch(self) -> None:
        self.settle()  # bodies the worker has fetched reach the gate first
        self._gate.open()
        self.settle()

    def _cancel(self, job_ids: list[str]) -> bool:  # pgqueuer's cancel; whether it had any
        if ids := [self._scripts[job_id][2] for job_id in job_ids]:
            self.loop.run(self.queries.mark_job_as_cancelled(ids), name="cancel")
        self.settle()
        return bool(ids)

    def cancel(self, job_id: str) -> bool:
        return self._cancel([job_id] if kit.cancel_in(self._jobs, self._gate, job_id) else [])

    def shutdown(self) -> None:
        self._cancel(kit.shut_down_in(self._jobs, self._gate))

    def close(self) -> None:
        drop(self.loop, self.schema, [self.connection])
        self.loop.close()  # cancels its worker and the bodies
        self._wall.stop()


class PgqueuerBackend:  # jobconform run --backend pgqueuer_jobs:PgqueuerBackend
    name, profile, capabilities = "pgqueuer", "canonical", frozenset({"lifecycle"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> PgqueuerRuntime:
        return PgqueuerRuntime(settings, clock)
