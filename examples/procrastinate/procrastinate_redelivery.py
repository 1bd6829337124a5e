"""procrastinate's stalled-job rescue as the re-delivery area's lease pass, onto procrastinate_jobs.

A `doing` job whose worker has not beaten (`update_heartbeat`) for `seconds_since_heartbeat` is
stalled (`JobManager.get_stalled_jobs`); its docs' rescue (howto/production/retry_stalled_jobs)
calls `retry_job` on each: `ExpireLeases(lease)`, for jobs whose body began. Workers run one job
at a time until caught up (`concurrency=1`, `wait=False`), one per free slot started at each
dispatch point; their beat timer is off and the adapter beats as it would, when the job starts
and at each `Heartbeat`. A silent body is a worker that died: never woken, its slot lost.
`StaleOwnerWrite` is its late write through the `JobManager` (answer: did the job's row change).
`redelivery_count` counts rescues, `retry_count` the attempts they spend (up to the policy's
retries). No cap, no parking, no alert."""

import asyncio
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from procrastinate.jobs import Status
from procrastinate_jobs import ProcrastinateBackend, ProcrastinateRuntime

from jobconform.backends.protocol import REDELIVERY, Clock, RuntimeSettings
from jobconform.bridges.records import JobRecord

NEVER = 10.0**9  # seconds: a timer that never fires on the virtual clock


@dataclass(frozen=True)
class RedeliveryView(JobRecord):
    redelivery_count: int = 0
    alerted: bool = False  # procrastinate raises no alert
    poisoned: bool = False  # and parks nothing


class ProcrastinateRedeliveryRuntime(ProcrastinateRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._owners = dict[str, int]()  # job id -> the worker of its latest delivery
        self._lost = dict[str, int]()  # job id -> the worker a rescue took it from
        self._beaten = set[str]()  # deliveries whose start was beaten
        self._rescues = Counter[str]()  # job id -> how many times a rescue re-queued it
        super().__init__(settings, clock)
        self.get, self.list_jobs = self._get, self._list_jobs  # views with the rescue count

    def start_worker(self, **options: float) -> None:  # none yet: at each dispatch point
        self._slots, self._workers = int(options["concurrency"]), list[asyncio.Task[None]]()

    def _start_workers(self) -> None:  # one for each slot no live worker holds
        dead = sum(self._rescues.values())  # a rescued delivery's worker never ends
        for _ in range(self._slots - sum(not task.done() for task in self._workers) + dead):
            self._workers.append(self._loop.spawn(self.app.run_worker_async(
                concurrency=1, wait=False, install_signal_handlers=False,
                update_heartbeat_interval=NEVER, stalled_worker_timeout=NEVER)))

    async def _body(self, context: Any, job_id: str) -> object:
        self._owners[job_id] = context.job.worker_id
        self._beaten.discard(job_id)
        return await super()._body(context, job_id)

    def _view(self, record: JobRecord) -> RedeliveryView:
        return RedeliveryView(**asdict(record), redelivery_count=self._rescues[record.job_id])

    def _get(self, job_id: str) -> RedeliveryView | None:
        return None if (record := self._jobs.get(job_id)) is None else self._view(record)

    def _list_jobs(self, status: str | None = None) -> list[JobRecord]:
        return [self._view(record) for record in self._jobs.list_jobs(status)]

    def dispatch(self) -> None:
        self._start_workers()
        super().dispatch()
        begun = [job for job in self._owners if self._gate.started(job) and job not in self._beaten]
        for job_id in begun:  # its worker beats as its job starts
            self._beaten.add(job_id)
            self._loop.run(self.app.job_manager.update_heartbeat(self._owners[job_id]))

    def heartbeat(self, job_id: str) -> None:
        record = self._jobs.get(job_id)
        if record is not None and record.status == "running":  # a worker beats while it runs
            self._loop.run(self.app.job_manager.update_heartbeat(self._owners[job_id]))

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        manager, requeued = self.app.job_manager, 0
        for job in self._loop.run(manager.get_stalled_jobs(seconds_since_heartbeat=lease_seconds)):
            job_id = job.task_kwargs["job_id"]
            if not self._gate.started(job_id):
                continue  # fetched, its body still at the gate: it has not begun
            self._loop.run(manager.retry_job(job))  # the documented rescue: due at once
            self._lost[job_id] = self._owners.pop(job_id)
            self._rescues[job_id] += 1
            self._decisions.abandon(job_id)  # its dead worker's body is never woken
            self._gate.finished(job_id)
            self._scripts[job_id][1].next_attempt()
            spent = min(job.attempts + 1, self._scripts[job_id][2].max_retries)  # its strategy's
            self._jobs.update(job_id, "queued", retry_count=spent)
            requeued += 1
        self.settle()
        return {"requeued": requeued, "parked": 0}

    def operator_alerts(self) -> list[str]:
        return []

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        if job_id not in self._lost:
            return False
        manager, job = self.app.job_manager, self._ids[job_id]
        before = self._loop.run(manager.get_job_status_async(job))
        if write == "heartbeat":
            self._loop.run(manager.update_heartbeat(self._lost[job_id]))
        else:  # its body returned, or raised with no retry left: its worker ends the job
            end = Status.SUCCEEDED if write == "outcome" else Status.FAILED
            self._loop.run(manager.finish_job_by_id_async(job, end, delete_job=False))
            self._jobs.update(job_id, end.value)
        return bool(self._loop.run(manager.get_job_status_async(job)) != before)


class ProcrastinateRedeliveryBackend(ProcrastinateBackend):
    # jobconform run --backend procrastinate_redelivery:ProcrastinateRedeliveryBackend
    capabilities = ProcrastinateBackend.capabilities | {REDELIVERY}

    def open(self, settings: RuntimeSettings, clock: Clock) -> ProcrastinateRedeliveryRuntime:
        return ProcrastinateRedeliveryRuntime(settings, clock)
