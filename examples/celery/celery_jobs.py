"""Celery itself: its embedded worker (threads pool) in process, RabbitMQ and Redis on loopback.

`start_worker` runs `max_concurrent` pool threads on this runtime's own queue; results go to
Redis. The task is the job's body: it waits at the `DispatchGate`, then for the harness's
decision, and keeps the spec's records. A retry's ETA (`app.now()`: `WallClock`) waits in the
worker's timer thread, asleep under `ThreadWaits` (the synchronous loop: the event loop's poll
is real). The worker waits on sockets, unseen by `ThreadWaits`: `InFlight` settles it.
autoretry's options are fixed per task, the kit's policy is per job: the body makes its call.
"""

import itertools
import logging
import sys
import uuid
from contextlib import ExitStack, suppress
from datetime import timedelta
from types import SimpleNamespace
from unittest import mock

import jobconform.bridges.translate as translate
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, InFlight, ThreadWaits, WallClock
from jobconform.conformance.clock import VirtualClock
from jobconform.reference.backoff import Jitter, RetryPolicy

# kombu's timer binds `time.monotonic` as default arguments and timer2 binds `time.sleep` at
# import: imported on the bridges, they bind the bridges' own (real when no bridge is on).
if "kombu.asynchronous.timer" in sys.modules:
    raise ImportError("celery_jobs must import kombu's timer itself, on the bridges")
with WallClock(VirtualClock()), ThreadWaits(VirtualClock()):
    import celery.utils.time
    import celery.utils.timer2
    from celery import Celery, signals
    from celery.contrib.testing.worker import start_worker
    from kombu import Exchange, Queue
signals.setup_logging.connect(lambda **_: None, weak=False)  # Celery leaves logging alone
logging.getLogger("celery").setLevel(logging.CRITICAL)  # a traceback per failed body
BROKER, RESULTS = "amqp://guest:guest@127.0.0.1:5672//", "redis://127.0.0.1:6379/5"


class CeleryRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        self._gate, self._ranks = DispatchGate(), itertools.count()
        self._work: dict[str, tuple[int, TaskScript, RetryPolicy]] = {}
        self._flight = InFlight(self._gate, threads=settings.max_concurrent)
        self.settle, self.name = self._flight.settle, f"jobconform-celery-{uuid.uuid4().hex[:12]}"
        self.app = Celery(self.name, broker=BROKER, backend=RESULTS, set_as_current=False)
        self.app.conf.update(  # its queue and exchanges, gone with it
            task_queues=[Queue(self.name, Exchange(self.name, auto_delete=True), self.name,
                               auto_delete=True)], task_default_queue=self.name,
            control_exchange=self.name, broker_heartbeat=0, worker_prefetch_multiplier=0,
            broker_connection_retry_on_startup=True)
        self._task = self.app.task(name="body", shared=False, typing=False)(self._body)
        with self._waits.adopting(), ExitStack() as worker:  # its consumer, timer, pool threads
            self.hostname = worker.enter_context(start_worker(
                self.app, concurrency=settings.max_concurrent, pool="threads",
                perform_ping_check=False, use_eventloop=False, hostname=f"{self.name}@jc"),
            ).hostname
            self._worker = worker.pop_all()

    def _body(self, job_id: str) -> object:
        (rank, script, policy), retries = self._work[job_id], self._task.request.retries
        with self._flight.body(job_id):
            try:
                if not self._gate.wait(job_id, rank):
                    return None
                self._jobs.update(job_id, "running")
                if not translate.may_run(self._gate, job_id, script):
                    return self._jobs.update(job_id, "cancelled") and None
                result = script.run()
                self._jobs.update(job_id, "succeeded", result=result)
                return result
            except Exception as error:
                raise self._failed(job_id, retries, script, policy, error) from None
            finally:
                self._gate.finished(job_id)

    def _failed(self, job_id: str, retries: int, script: TaskScript, policy: RetryPolicy,
                error: Exception) -> Exception:
        """Celery's Retry if Celery retries (autoretry's call), else the error: the job failed."""
        if type(error).__name__ not in policy.non_retryable:
            countdown = self.compute_delay_ms(policy, retries) / 1000
            self._flight.sent(job_id, translate.wall_now() + timedelta(seconds=countdown))
            with suppress(Exception):  # Celery re-raises the error once no retry is left
                retry = self._task.retry(exc=error, countdown=countdown, throw=False,
                                         max_retries=policy.max_retries)
                script.next_attempt()
                self._jobs.update(job_id, "queued", retry_count=retries + 1)
                return retry
            self._flight.dropped(job_id)
        self._jobs.update(job_id, "failed", error=translate.error_text(error))
        return error

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, jitter: Jitter = Jitter.NONE,
                         draw: float = 0.0, *no_place_in_celery: float | None) -> float:
        """autoretry's countdown: `retry_backoff` the base (0: off, `default_retry_delay`),
        `retry_backoff_max` the cap, `retry_jitter` (full) drawing the kit's number."""
        backoff, drawn = translate.seconds(policy.retry_delay_ms), lambda stop: int(draw * stop)
        if not backoff:
            return float(self._task.default_retry_delay) * 1000.0
        with mock.patch.object(celery.utils.time, "random", SimpleNamespace(randrange=drawn)):
            return 1000.0 * celery.utils.time.get_exponential_backoff_interval(
                int(max(1.0, backoff)), attempt, int(translate.seconds(policy.max_retry_delay_ms)),
                full_jitter=jitter is Jitter.FULL)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), next(self._ranks)
        job_id = self._jobs.add(f"{self.name}-{rank}", policy.max_retries).job_id
        self._work[job_id] = (rank, script, policy)
        self._flight.sent(job_id)
        self._task.apply_async((job_id,), task_id=job_id)
        return job_id

    def dispatch(self) -> None:
        self.settle()  # the bodies of messages due reach the gate first
        self._gate.open()
        self.settle()

    def cancel(self, job_id: str) -> bool:
        was = translate.cancel_in(self._jobs, self._gate, job_id)
        if was == "queued":  # Celery drops its message; a body it still runs leaves at the gate
            self._flight.dropped(job_id)
            self.app.control.revoke(job_id)
        return was is not None

    def shutdown(self) -> None:
        for job_id in translate.shut_down_in(self._jobs, self._gate):
            self._flight.dropped(job_id)
            self.app.control.revoke(job_id)

    def close(self) -> None:
        self._gate.close()
        self._waits.closing()  # the timer thread's sleeps end, so the worker can stop
        self.app.control.shutdown(destination=[self.hostname])  # its loop ends now
        self._worker.close()
        self.app.close()
        self._waits.stop()
        self._wall.stop()


class CeleryBackend:  # jobconform run --backend celery_jobs:CeleryBackend
    name, profile, capabilities = "celery", "canonical", frozenset({"lifecycle", "retry"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> CeleryRuntime:
        return CeleryRuntime(settings, clock)
