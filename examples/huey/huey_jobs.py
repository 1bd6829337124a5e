"""huey itself (MemoryHuey, its consumer's worker and scheduler threads): lifecycle, retry,
self-running, on `ThreadWaits` and `WallClock`. Its task is the job's body: at the
`DispatchGate` (let in on arrival when self-running, where a worker's idle poll, one a poll
interval, is the dispatch), then the harness's decision; the body and SIGNAL_ERROR fill the
kit's `JobRecords`. Retries: huey's, no jitter. Not claimed: stuck, redelivery (thread
workers have no job timeout or lease), `expires` (the admission area's backlog has owners,
caps). Periodic tasks: huey_periodic.py, against the scheduling area."""

import logging
import uuid

from huey.api import MemoryHuey, Task
from huey.exceptions import CancelExecution
from huey.signals import SIGNAL_ERROR

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.self_running import Clockwork
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.bridges.signals import keeping_signal_handlers
from jobconform.reference.backoff import RetryPolicy


class HueyRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 clockwork: Clockwork | None = None) -> None:  # None: commanded
        self._wall = WallClock(clock).start()
        self._waits = ThreadWaits(clock, in_turn=clockwork is not None).start()  # no wake races
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate = DispatchGate(on_arrival=clockwork is not None)
        self._scripts = dict[str, tuple[int, TaskScript, RetryPolicy]]()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle
        logging.getLogger("huey").setLevel(logging.CRITICAL)  # a traceback per failed body
        # utc=False: etas read datetime.now(), virtual; utcnow is bound at import below 3.12
        self._huey = MemoryHuey(f"jobconform-{uuid.uuid4().hex}", utc=False)
        self._run = self._huey.task()(self._body)
        self._huey.signal(SIGNAL_ERROR)(self._failed)
        every = clockwork and clockwork.poll_interval_seconds  # an idle poll, no back-off
        idle = {"initial_delay": every, "backoff": 1, "max_delay": every} if every else {}
        self._consumer = self._huey.create_consumer(
            workers=settings.max_concurrent, worker_type="thread", periodic=False, **idle)
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
        # huey's Huey._requeue_task: the first retry waits retry_delay, every retry multiplies
        # it by retry_backoff: no cap (it grows to inf), no jitter, no retry-after.
        return translate.multiplied_delay_ms(policy, attempt)

    def dispatch(self) -> None:  # huey's scheduler queues a due retry, its workers fetch
        translate.dispatch_point(self._waits, self._gate)

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
    capabilities = frozenset({"lifecycle", "retry", "retry-without-jitter", "self-running"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> HueyRuntime:
        return HueyRuntime(settings, clock)

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> HueyRuntime:
        return HueyRuntime(settings, clock, clockwork)
