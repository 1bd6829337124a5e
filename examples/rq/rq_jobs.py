"""RQ itself (SimpleWorker, RQScheduler, Redis db 6 on 127.0.0.1) against lifecycle and retry.

RQ's `work()` loops install signal handlers and block the harness's main thread, so each
dispatch runs one pass of each, as RQ's tests do: `enqueue_scheduled_jobs()`, then for each
idle worker `dequeue_job_and_maintain_ttl(None)`, then `execute_job` in a thread (a
SimpleWorker per slot with RQ's `TimerDeathPenalty`: SIGALRM is the main thread's). RQ reads
`datetime.now()` (`WallClock`), decides outcomes and retries; the records are `JobRecords`.
No job timeout (-1): its timer fires on the clock, but kills a waiting body only once it
wakes (README). Stuck and redelivery: `rq_stuck`, `rq_redelivery` (its registry's cleanup)."""

import logging
import threading
import uuid
from collections.abc import Callable

from redis import Redis
from rq import Queue, Retry, SimpleWorker
from rq.job import Job, JobStatus
from rq.scheduler import RQScheduler
from rq.timeouts import TimerDeathPenalty

from jobconform.backends.protocol import RETRY_INTERVALS, Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.reference.backoff import RetryPolicy

BODIES: dict[str, Callable[[], object]] = {}  # job id -> its body


def run_body(job_id: str) -> object:  # what RQ's worker calls, found by its name
    return BODIES[job_id]()


class ThreadWorker(SimpleWorker):
    death_penalty_class = TimerDeathPenalty


class RQRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate, self._scripts = DispatchGate(), dict[str, TaskScript]()
        self._errors: dict[str, str] = {}  # RQ keeps a traceback; the spec's error is one line
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle
        logging.getLogger("rq.worker").setLevel(logging.CRITICAL)  # a traceback per failed body
        self.name, self.redis = f"jobconform-{uuid.uuid4().hex}", Redis(db=6)  # a db of its own
        self.queue = Queue(self.name, connection=self.redis)
        self._idle = [ThreadWorker([self.queue], name=f"{self.name}-{slot}", connection=self.redis)
                      for slot in range(settings.max_concurrent)]
        self._scheduler = RQScheduler([self.queue], self.redis, logging_level=logging.CRITICAL)
        self._scheduler.acquire_locks()

    def _body(self, job_id: str, script: TaskScript) -> object:
        self._jobs.update(job_id, "running")
        if not translate.may_run(self._gate, job_id, script):
            return self._jobs.update(job_id, "cancelled")  # a requested cancellation wins
        try:
            return script.run()
        except Exception as error:
            self._errors[job_id] = translate.error_text(error)
            raise

    def _perform(self, worker: ThreadWorker, job: Job, queue: Queue) -> None:
        worker.execute_job(job, queue)
        if (status := job.get_status(refresh=True)) == JobStatus.FINISHED:  # as RQ stored it
            self._jobs.update(job.id, "succeeded", result=job.return_value())
        elif status == JobStatus.FAILED:
            self._jobs.update(job.id, "failed", error=self._errors.pop(job.id, None))
        else:  # scheduled after its interval, or queued again: RQ retries it
            self._scripts[job.id].next_attempt()
            taken = len(job.retry_intervals) - job.retries_left  # from RQ's retries left
            self._jobs.update(job.id, "queued", retry_count=taken)
        self._idle.append(worker)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        seconds = [ms / 1000 for ms in translate.retry_intervals_ms(retry or RetryPolicy())]
        job_id = self._jobs.add(f"{self.name}-{len(self._scripts)}", len(seconds)).job_id
        BODIES[job_id], self._scripts[job_id] = lambda: self._body(job_id, script), script
        self.queue.enqueue(run_body, job_id, job_id=job_id, job_timeout=-1,
                           retry=Retry(max=len(seconds), interval=seconds) if seconds else None)
        return job_id

    def dispatch(self) -> None:
        self._scheduler.enqueue_scheduled_jobs()  # retries whose interval has passed
        picked = [(w, *got) for w in self._idle if (got := w.dequeue_job_and_maintain_ttl(None))]
        for worker, job, queue in picked:  # after every pop: a retry re-queued at once waits
            self._idle.remove(worker)
            with self._waits.adopting():
                threading.Thread(target=self._perform, args=(worker, job, queue)).start()
        self._waits.settle()

    def cancel(self, job_id: str) -> bool:
        if (was := translate.cancel_in(self._jobs, self._gate, job_id)) == "queued":
            Job.fetch(job_id, connection=self.redis).cancel()  # out of the queue or schedule
        self._waits.settle()
        return was is not None

    def shutdown(self) -> None:
        for job in Job.fetch_many(translate.shut_down_in(self._jobs, self._gate), self.redis):
            if job is not None and job.get_status() != JobStatus.STARTED:
                job.cancel()  # a running one is its body's: let go at the gate
        self._waits.settle()

    def close(self) -> None:
        self._gate.close()  # bodies waiting for a decision return
        self._waits.settle()
        self.queue.delete(delete_jobs=True)
        self.redis.delete(*self.redis.scan_iter(f"*{self.name}*"))  # the lock, workers, registries
        BODIES.clear()  # one runtime at a time: WallClock is process-wide
        self.redis.close()
        self._waits.stop()
        self._wall.stop()


class RQBackend:  # jobconform run --backend rq_jobs:RQBackend
    name, profile, report_notes = "rq", "canonical", (DERIVED_HEALTH_NOTE,)
    capabilities = frozenset({"lifecycle", "retry", RETRY_INTERVALS})

    def open(self, settings: RuntimeSettings, clock: Clock) -> RQRuntime:
        return RQRuntime(settings, clock)
