"""pgqueuer's stale-heartbeat re-pick as the redelivery area's lease pass, onto pgqueuer_jobs.

pgqueuer's dequeue claims again, same id, a `picked` job whose heartbeat is older than the worker's
`heartbeat_timeout` (the base worker's: ten years). `ExpireLeases(lease)` is one `Queries.dequeue`
with the lease as that timeout under a new queue manager id: the rescuing worker, which runs the
body and logs its end (`log_jobs`) as pgqueuer's does. A body beats (`update_heartbeat`) as it
begins and at each `Heartbeat`; jobs still at the gate are beaten before a pass (pgqueuer would not
have picked them yet); beats and passes read NOW() exact (`VirtualNow.exact`). A delivery a pass
took away is a lost worker, never woken; `StaleOwnerWrite` is its late write through the same
queries (answer: did the row change). No re-delivery count (the adapter's), cap, parking, alert."""

import uuid
from collections import Counter
from collections.abc import Awaitable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

import anyio
from pgqueuer.domain.models import Context, Job
from pgqueuer.queries import EntrypointExecutionParameter
from pgqueuer_jobs import PgqueuerBackend, PgqueuerRuntime

from jobconform.backends.protocol import REDELIVERY, Clock, RuntimeSettings
from jobconform.bridges import JobRecord, RedeliveryRecord


class PgqueuerRedeliveryRuntime(PgqueuerRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._delivered: dict[str, Job] = {}  # job id -> pgqueuer's job of its latest delivery
        self._lost: dict[str, Job] = {}  # job id -> the delivery the latest pass took away
        self._beaten: set[str] = set()  # deliveries beaten as they began
        self._counts: Counter[str] = Counter()  # re-deliveries, counted by the adapter
        super().__init__(settings, clock)
        self.get = lambda job_id: self._view(self._jobs.get(job_id))
        self.list_jobs = lambda status=None: [self._view(r) for r in self._jobs.list_jobs(status)]
        self.operator_alerts = lambda: []  # pgqueuer raises no alert

    def _view(self, record: JobRecord | None) -> RedeliveryRecord | None:
        return record and RedeliveryRecord(**asdict(record),
                                           redelivery_count=self._counts[record.job_id])

    async def _body(self, job: Job, context: Context) -> None:
        job_id = (job.payload or b"").decode()
        self._delivered[job_id] = job
        self._beaten.discard(job_id)
        await super()._body(job, context)

    def _beat(self, job_ids: list[str]) -> None:
        if ids := [self._delivered[job_id].id for job_id in job_ids if job_id in self._delivered]:
            self._exactly(self.queries.update_heartbeat(ids), "heartbeat")

    def _exactly(self, query: Awaitable[Any], name: str) -> Any:  # NOW() the virtual instant
        self.connection.client.exact = True
        try:
            return self.loop.run(query, name=name)
        finally:
            self.connection.client.exact = False

    def dispatch(self) -> None:
        super().dispatch()
        begun = [j for j in self._delivered if self._gate.started(j) and j not in self._beaten]
        self._beaten.update(begun)
        self._beat(begun)  # its worker beats as the job starts

    def heartbeat(self, job_id: str) -> None:
        if (record := self._jobs.get(job_id)) is not None and record.status == "running":
            self._beat([job_id])

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        self._beat([j for j in self._delivered if not self._gate.started(j)])  # not begun
        unlimited = {"body": EntrypointExecutionParameter(concurrency_limit=0)}  # as the worker's
        picked = self._exactly(self.queries.dequeue(1000, unlimited, uuid.uuid4(), None,
                                                    timedelta(seconds=lease_seconds)), "lease pass")
        requeued = 0
        for job in picked:
            job_id = (job.payload or b"").decode()
            record = self._jobs.get(job_id)
            if record is not None and record.status == "running":  # a lost delivery
                self._lost[job_id] = self._delivered.pop(job_id)
                self._counts[job_id] += 1
                self._decisions.abandon(job_id)  # its lost body is never woken
                self._gate.finished(job_id)
                self._scripts[job_id][1].next_attempt()
                self._jobs.update(job_id, "queued")
                requeued += 1
            self.loop.spawn(self._deliver(job))
        self.settle()
        return {"requeued": requeued, "parked": 0}

    async def _deliver(self, job: Job) -> None:  # the rescuing worker runs the job's body
        try:
            await self._body(job, Context(anyio.CancelScope()))
        except Exception:
            return await self.queries.log_jobs([(job, "exception", None)])
        await self.queries.log_jobs([(job, "successful", None)])

    def _row(self, job: Job) -> object:  # the job's row in pgqueuer's queue table, or None
        return self.loop.run(self.queries.queue_job_by_id(job.id), name="row")

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        if (lost := self._lost.get(job_id)) is None:
            return False
        before = self._row(lost)
        if write == "heartbeat":
            self.loop.run(self.queries.update_heartbeat([lost.id]), name="stale heartbeat")
        else:  # its worker logs the end by id, as pgqueuer's completion does
            end = "successful" if write == "outcome" else "exception"  # pgqueuer's names
            self.loop.run(self.queries.log_jobs([(lost, end, None)]), name="stale end")
        self.settle()
        if (after := self._row(lost)) != before and write != "heartbeat":  # row deleted, logged
            self._jobs.update(job_id, "succeeded" if write == "outcome" else "failed")
        return bool(after != before)


class PgqueuerRedeliveryBackend(PgqueuerBackend):  # pgqueuer_redelivery:PgqueuerRedeliveryBackend
    capabilities = PgqueuerBackend.capabilities | {REDELIVERY}

    def open(self, settings: RuntimeSettings, clock: Clock) -> PgqueuerRedeliveryRuntime:
        return PgqueuerRedeliveryRuntime(settings, clock)
