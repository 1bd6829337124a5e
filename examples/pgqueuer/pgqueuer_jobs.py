"""pgqueuer itself (its asyncio QueueManager on the real PostgreSQL) against lifecycle.

Each runtime gets a scratch schema and NOTIFY channel, dropped at close. `QueueManager.run`
runs on the `VirtualLoop`; settle also waits for the queries it sends (`InFlight`). Its
entrypoint is the body: the `DispatchGate`, then the harness's decision. The gate holds
the concurrency limit: pgqueuer's `concurrency_limit` would poll every 0.1 s while a job
waits for a slot (`min_dequeue_poll_interval`), a million polls in a 100000 s advance.
A cancel is pgqueuer's `mark_job_as_cancelled`, its NOTIFY cancels `Context.cancellation`.
pgqueuer's SQL reads the database's NOW(): the connection answers it with the virtual
instant (`pgqueuer_clock`), so a deferred job comes due on the virtual clock.
"""

import itertools
import uuid
from datetime import timedelta
from typing import Any

from pgqueuer import AsyncpgDriver, Queries, QueueManager
from pgqueuer.adapters.persistence import qb
from pgqueuer.domain.models import Context, Job
from pgqueuer.domain.settings import DBSettings, Durability
from pgqueuer.domain.types import Channel
from pgqueuer_clock import connect

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, InFlight, VirtualLoop, WallClock
from jobconform.bridges import translate as kit

URL = "postgresql://postgres@127.0.0.1:5432/test"  # the local server (trust)
NEVER = timedelta(days=3650)  # the heartbeat timeout; idle polls


class PgqueuerRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        # One connection: the NOTIFYs its calls cause come in on it before their answers.
        self.connection = InFlight(None, ("fetch", "execute", "add_listener"))
        self.loop = loop = VirtualLoop(clock, self._wall.move_to, busy=self.connection.busy)
        self.schema = name = f"jobconform_pgq_{uuid.uuid4().hex[:16]}"
        self.connection.client = loop.run(connect(URL, name), name="connect")
        db = DBSettings(db_schema=name, channel=name, durability=Durability.volatile)
        self.queries = Queries(AsyncpgDriver(self.connection), qbe=qb.QueryBuilderEnvironment(db),
                               qbq=qb.QueryQueueBuilder(db), qbs=qb.QuerySchedulerBuilder(db))
        loop.run(self.queries.install(create_schema=False), name="install")
        self._jobs = jobs = kit.records_on_wall(settings)
        self._gate, self._ranks = DispatchGate(slots=settings.max_concurrent), itertools.count()
        self._scripts: dict[str, tuple[int, TaskScript, Any]] = {}  # and pgqueuer's job id
        self._decisions = kit.Decisions()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        self.qm = QueueManager(self.queries, Channel(name))
        self.qm.entrypoint("body", accepts_context=True)(self._body)
        loop.spawn(self.qm.run(NEVER, batch_size=1, heartbeat_timeout=NEVER,
                              log_aggregation_interval=timedelta(0)))
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
                self._jobs.update(job_id, "failed", error=kit.error_text(error))
                raise
        finally:
            self._gate.finished(job_id)  # its slot is free at the next dispatch

    def submit(self, script: TaskScript, retry: object = None) -> str:
        rank = next(self._ranks)
        job_id = self._jobs.add(f"job-{rank}").job_id
        (pgqueuer_id,) = self.loop.run(self.queries.enqueue("body", job_id.encode()))
        self._scripts[job_id] = (rank, script, pgqueuer_id)
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
        self.loop.run(self.queries.driver.execute(f"DROP SCHEMA {self.schema} CASCADE"))
        self.connection.client.connection.terminate()  # what pgqueuer sends from here on fails
        self.loop.close()  # cancels its worker and the bodies
        self._wall.stop()


class PgqueuerBackend:  # jobconform run --backend pgqueuer_jobs:PgqueuerBackend
    name, profile, capabilities = "pgqueuer", "canonical", frozenset({"lifecycle"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> PgqueuerRuntime:
        return PgqueuerRuntime(settings, clock)
