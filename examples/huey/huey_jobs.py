"""huey itself (MemoryHuey, its consumer's worker and scheduler threads): lifecycle, retry.

Its threads poll, sleep and stamp on the wall clock, made virtual by `ThreadWaits` and
`WallClock`. Its task is the job's body: at the `DispatchGate`, then the harness's decision;
the body and huey's SIGNAL_ERROR fill the kit's `JobRecords`. Cancel: `revoke_by_id`.
Retries are huey's, per call (`retries`, `retry_delay`, `retry_backoff`); no jitter, hence
`retry-without-jitter`. Not claimed: `expires` (the admission area's stale backlog, whose
owners and caps huey lacks), periodic tasks (declared at import in UTC or local time; the
scheduling area makes, edits and deletes schedules at run time, in IANA zones)."""

import logging
import uuid

from huey.api import MemoryHuey, Task
from huey.exceptions import CancelExecution
from huey.signals import SIGNAL_ERROR

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.bridges.signals import keeping_signal_handlers
from jobconform.reference.backoff import RetryPolicy


class HueyRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate, self._scripts = DispatchGate(), dict[str, tuple[int, TaskScript, RetryPolicy]]()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle
        logging.getLogger("huey").setLevel(logging.CRITICAL)  # a traceback per failed body
        # utc=False: huey's etas read datetime.now(), which WallClock makes virtual (its
        # utcnow, below Python 3.12, is datetime.utcnow bound at import: out of reach).
        self._huey = MemoryHuey(f"jobconform-{uuid.uuid4().hex}", utc=False)
        self._run = self._huey.task()(self._body)
        self._huey.signal(SIGNAL_ERROR)(self._failed)
        self._consumer = self._huey.create_consumer(
            workers=settings.max_concurrent, worker_type="thread", periodic=False)
        with self._waits.adopting(), keeping_signal_handlers():
            self._consumer.start()  # its threads, and the signal handlers of a consumer process
        self._waits.settle()

    def _body(self, job_id: str) -> object:
        rank, script, policy = self._scripts[job_id]
        if not self._gate.wait(job_id, rank):
            return None
        self._jobs.update(job_id, "running")
        if not translate.may_run(self._gate, job_id, script):
            self._jobs.update(job_id, "cancelled")
            raise CancelExecution(retry=False)  # huey's way to end a task, never retried
        try:
            result = script.run()
        except Exception as error:
            if type(error).__name__ not in policy.non_retryable:
                raise  # huey's SIGNAL_ERROR, then its retry if the task has one left
            self._jobs.update(job_id, "failed", error=translate.error_text(error))
            raise CancelExecution(retry=False) from error
        self._jobs.update(job_id, "succeeded", result=result)
        return result

    def _failed(self, signal_name: str, task: Task, exc: BaseException) -> None:
        job_id, retries_left = task.args[0], task.retries  # huey requeues it when > 0
        if not retries_left:
            self._jobs.update(job_id, "failed", error=translate.error_text(exc))
            return
        self._gate.finished(job_id)  # the next attempt waits at the gate, for a new decision
        self._scripts[job_id][1].next_attempt()
        retries_taken = self._scripts[job_id][2].max_retries - retries_left + 1
        self._jobs.update(job_id, "queued", retry_count=retries_taken)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), len(self._scripts)  # submission order
        job_id = self._jobs.add(f"job-{rank}", policy.max_retries).job_id
        self._scripts[job_id] = (rank, script, policy)
        self._run(job_id, id=job_id, retries=policy.max_retries,  # its task's id is the job's
                  retry_delay=translate.seconds(policy.retry_delay_ms),
                  retry_backoff=policy.backoff_multiplier)
        return job_id

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, *unused: object) -> float:
        # huey's Huey._requeue_task: the first retry waits retry_delay, and every retry
        # multiplies the task's retry_delay by retry_backoff: no cap (it grows to inf), no
        # jitter, no retry-after (the harness's jitter, draw, previous and retry-after).
        delay = policy.retry_delay_ms
        for _ in range(attempt):
            delay *= policy.backoff_multiplier
        return delay

    def dispatch(self) -> None:
        for _ in range(2):  # a dispatch point: huey's scheduler queues a due retry, then
            self._waits.wake_sleepers()  # its workers poll and fetch
            self._waits.settle()
        self._gate.open()
        self._waits.settle()

    def cancel(self, job_id: str) -> bool:
        if (was := translate.cancel_in(self._jobs, self._gate, job_id)) == "queued":
            self._huey.revoke_by_id(job_id)  # also a task in backoff, same id
        self._waits.settle()
        return was is not None

    def shutdown(self) -> None:
        for job_id in translate.shut_down_in(self._jobs, self._gate):
            self._huey.revoke_by_id(job_id)
        self._waits.settle()

    def close(self) -> None:
        self._gate.close()
        self._consumer.stop(graceful=True)
        self._waits.stop()
        self._wall.stop()


class HueyBackend:  # jobconform run --backend huey_jobs:HueyBackend
    name, profile = "huey", "canonical"
    capabilities = frozenset({"lifecycle", "retry", "retry-without-jitter"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> HueyRuntime:
        return HueyRuntime(settings, clock)
